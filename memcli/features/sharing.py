"""What a team store shares is a choice: captured work stays on this machine until a developer shares it.

Observations, session summaries and session threads that capture writes are kept under
`memories/local/` and `threads/local/`, which the store's .gitignore leaves out: searchable here, never
in the team's history (unless mem.yaml's `capture.share` says `summaries` or `all`). `mem share` moves
what a developer means to share to where git takes it: a memory (with every version of it that was kept
here), a thread, or everything one captured session made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memcli.core import reading
from memcli.core.persist import save
from memcli.errors import AmbiguousId, InputError, NotFound
from memcli.index.filters import Filters
from memcli.index.versions import own_versions
from memcli.store.memory import is_local

if TYPE_CHECKING:
    from memcli.core.mem import Mem


@dataclass
class Shared:
    memories: list[str] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"memories": self.memories, "threads": self.threads}


def share(mem: Mem, handles: list[str], *, session: str | None = None, dry_run: bool = False) -> Shared:
    """Share memories and threads named by id (short, full or a unique beginning), and with `session`
    everything that captured session made. NotFound when a handle names neither."""
    from memcli.threads.storage import Threads

    threads = Threads(mem)
    shared = Shared()
    memory_ids: list[str] = []
    for handle in handles:
        try:
            memory_ids += [m.id for m in own_versions(mem.catalog, reading.get(mem, handle).id)]
        except NotFound:
            shared.threads.append(threads.resolve(handle))
    if session is not None:
        session = session_named(mem, session)
        found = _of_session(mem, session)
        if not found:
            raise NotFound(f"no captured memory of session {session!r}")
        memory_ids += found
        from memcli.capture.sessions import thread_id
        from memcli.capture.spool import Spool

        state = Spool(mem.store.root).session(session)
        if state:
            shared.threads.append(thread_id(state))
            if not dry_run:
                _share_from_now_on(mem, session)
    for memory_id in dict.fromkeys(memory_ids):
        if is_local(reading.relpath_of(mem, memory_id)):
            shared.memories.append(memory_id)
            if not dry_run:
                _share_memory(mem, memory_id)
    local_threads = [t for t in dict.fromkeys(shared.threads) if _exists(threads, t) and threads.is_local(t)]
    shared.threads = local_threads
    if not dry_run:
        for thread in local_threads:
            threads.share(thread)
    return shared


def session_named(mem: Mem, handle: str) -> str:
    """A captured session's id from the whole id or a unique beginning of it (as memory ids are named);
    InputError for a blank one, AmbiguousId (listing them) when it begins several."""
    from memcli.capture.spool import Spool

    if not handle.strip():
        raise InputError("a blank session id names no session")
    exact = "".join(f"[{c}]" if c in "*?[" else c for c in f"session/{handle}")
    known = {m.source.split("/", 1)[1].split("#", 1)[0]
             for m in reading.listing(mem, Filters(source=exact + "*", all_versions=True)) if m.source}
    known |= {state["id"] for state in Spool(mem.store.root).all_sessions()
              if isinstance(state.get("id"), str) and state["id"].startswith(handle)}
    if handle in known or not known:
        return handle
    if len(known) > 1:
        raise AmbiguousId(handle, sorted(known), kinds="sessions")
    return known.pop()


def _share_from_now_on(mem: Mem, session: str) -> None:
    """Mark the session shared in its capture state, under the capture runners' lock: what it makes next
    (turns, observations, its summary) goes where git takes it too."""
    from memcli.capture.events import CAPTURE_SCOPE
    from memcli.capture.spool import Spool
    from memcli.store.queue import WorkQueue

    spool = Spool(mem.store.root)
    with WorkQueue(mem.store.root).scope(CAPTURE_SCOPE, wait=True):
        state = spool.session(session)
        if state and not state.get("shared"):
            spool.save_session(session, {**state, "shared": True})


def _share_memory(mem: Mem, memory_id: str) -> None:
    with mem.store.lock():
        relpath = reading.relpath_of(mem, memory_id)
        memory = mem.store.read(relpath)
        memory.local = False
        save(mem, memory, old_relpath=relpath)


def _of_session(mem: Mem, session: str) -> list[str]:
    """The memories a captured session made (observations `session/<id>#n`, its summary `session/<id>`),
    every version."""
    exact = "".join(f"[{c}]" if c in "*?[" else c for c in f"session/{session}")
    wanted = Filters(source=(exact, exact + "#*"), all_versions=True)
    return [m.id for m in reading.listing(mem, wanted)]


def _exists(threads, thread_id: str) -> bool:
    try:
        threads.is_local(thread_id)
    except NotFound:
        return False
    return True
