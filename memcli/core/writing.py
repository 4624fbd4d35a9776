"""Every write has one shape: the gate (redaction and the denylist, once per text), then the memory file
and the catalog under the store lock with its vector (one embedding call for a batch), then the rest
queued (memcli.core.write_jobs: its compression; vectors the model could not make). A command that wants the
result now runs its own jobs before it returns; `--defer`, and a long-lived server, leave them to a
runner (memcli.features.work). Killed at any instant, a write leaves the memory stored and its jobs
waiting, never half of either.

`write` (mem add, MCP memory_write, captured observations), `write_each` (ingest chunks, thread folds),
`update` (a new version), `store` itself (import and edit, which bring whole memories); and the changes
that keep a text: tags, source, links (`relabel`, `retag`), `remove`. One result, `Written`, says what a
write did.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterable

from memcli.config import ON_SIMILAR
from memcli.core import reading, write_jobs
from memcli.core.compressing import CompressOptions, decided_without_a_model
from memcli.core.near_duplicates import Similar, similar
from memcli.core.persist import already_stored, count_raw_tokens, save
from memcli.errors import InputError, NotFound
from memcli.index.versions import chain, heads
from memcli.store import ids
from memcli.store.memory import Memory, check_text, clean_input, content_key, is_local, normalise_tags, now_utc

if TYPE_CHECKING:
    from memcli.core.mem import Mem


@dataclass
class Written:
    """What a write did: the memory stored (or found already stored), what it now replaces, what it is
    close to, the secrets it redacted."""

    memory: Memory
    duplicate: bool = False
    redacted: dict[str, int] = field(default_factory=dict)  # secrets replaced, by kind
    replaced: list[Memory] = field(default_factory=list)
    similar: list[Similar] = field(default_factory=list)
    unchanged: bool = False
    tags_added: list[str] = field(default_factory=list)  # new tags merged into the duplicate already stored


@dataclass
class Retagged:
    memory: Memory
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"id": self.memory.id, "tags": list(self.memory.tags), "added": self.added, "removed": self.removed}


@dataclass
class Text:
    """What a caller asks to store, and where it comes from."""

    raw: str
    tags: Iterable[str] = ()
    source: str | None = None
    written_by: str = "cli"
    local_only: bool = False  # never sent to a compression server (`mem add --local-only`)
    kept_here: bool = False  # stays on this machine: not committed with a team store (captured work)
    check_source: bool = True  # False: the caller decided the source with finer rules
    screened: bool = False  # redacted already (a hook event): the gate runs once per text
    memory_id: str | None = None  # fixed by the caller (a captured event's), so a rerun stores it once


@dataclass
class Draft:
    """A memory past the gate, and what its write asks for."""

    memory: Memory
    redacted: dict[str, int] = field(default_factory=dict)
    compress: CompressOptions | None = field(default_factory=CompressOptions)  # None: keep the form it carries
    unique: bool = False  # a text already stored (as another memory) is not stored again
    replaces: str | None = None  # the file an edit rewrites: the memory keeps its id


@dataclass
class Stored:
    """A draft's outcome: the memory on disk, `existing` when it was there already (its text or id)."""

    memory: Memory
    existing: bool = False
    vector: object = None
    jobs: list[str] = field(default_factory=list)


# -- the shape of every write --------------------------------------------------------------------------


def draft(mem: Mem, text: Text, compress: CompressOptions | None = CompressOptions(), *,
          supersedes: Iterable[str] = (), unique: bool = False) -> Draft:
    """The gate: a text checked, redacted (unless the caller did), its source checked against the
    denylist; Refused before anything is stored when a private key survives or the source is ignored."""
    raw = clean_input(text.raw)
    check_size(mem, raw)
    check_text(text.source or "", "the source")
    if text.check_source:
        mem.gate.refuse_ignored_source(text.source)
    fields = {"raw": raw, "tags": text.tags, "source": text.source, "written_by": text.written_by}
    redacted: dict[str, int] = {}
    if not text.screened:
        fields, redacted = mem.gate.screen(fields)
    stamp = now_utc()
    memory = Memory(id=text.memory_id or ids.new_id(), created_at=stamp, updated_at=stamp, raw=fields["raw"],
                    tags=normalise_tags(fields["tags"]), source=fields["source"], written_by=fields["written_by"],
                    supersedes=list(supersedes))
    if text.local_only:
        memory.extra["send_to_remote"] = False
    memory.local = text.kept_here
    return Draft(memory, redacted, compress, unique=unique)


def store(mem: Mem, drafts: list[Draft]) -> list[Stored]:
    """Drafts stored: each one's jobs queued, then its file and catalog row under the store lock (a draft
    whose id, or, `unique`, whose text is stored already becomes that memory, and writes nothing), then
    the vectors of the new ones from one embedding call; a vector the model could not make is queued."""
    mem.ensure_store()
    outcome: list[Stored] = []
    new: list[tuple[Stored, int | None]] = []
    with mem.store.lock():
        for drafted in drafts:
            memory = drafted.memory
            found = None if drafted.replaces else already_stored(
                mem, memory.id, content_key(memory.raw) if drafted.unique else None)
            if found is not None:
                outcome.append(Stored(found, existing=True))
                continue
            stored = Stored(memory)
            if drafted.compress is not None:
                decided = decided_without_a_model(mem, memory, drafted.compress)
                memory.compressed, memory.compression = decided or (None, {"status": "pending"})
                count_raw_tokens(mem, memory.raw, memory.compression, batch=len(drafts) > 1)
                if decided is None:  # queued first: killed after the file, the job is there
                    stored.jobs.append(write_jobs.put_compression(mem, memory, drafted.compress))
            new.append((stored, save(mem, memory, old_relpath=drafted.replaces)))
            outcome.append(stored)
    if new:
        vectors = mem.embed_new([stored.memory.raw for stored, _ in new])
        with mem.store.lock():
            for (stored, label), vector in zip(new, vectors):
                if label is not None and vector is not None:
                    mem.vectors.add(label, stored.memory.raw, vector, mem.embedder(), cache=not stored.memory.local)
                stored.vector = vector
        if any(vector is None for vector in vectors):
            write_jobs.put_vectors(mem)
    return outcome


def finish_now(mem: Mem, stored: list[Stored], compress: CompressOptions | None) -> None:
    """Run the jobs these writes queued here and now, unless the caller defers them; each memory is then
    as its file says (with its compressed form)."""
    if compress is None or compress.defer:
        return
    names = [name for item in stored for name in item.jobs]
    if not names:
        return
    write_jobs.run_now(mem, names, progress=compress.progress)
    for item in stored:
        if item.jobs:
            item.memory = reading.as_on_disk(mem, item.memory.id) or item.memory


# -- adding texts --------------------------------------------------------------------------------------


def write(mem: Mem, text: Text, *, compressing: CompressOptions = CompressOptions(), allow_duplicate: bool = False,
          supersedes: str | None = None, on_similar: str = "keep",
          confirm: Callable[[Similar], bool] | None = None, look_for_similar: bool = True) -> Written:
    """Store a text. A text already stored is not stored twice (unless `allow_duplicate`): the memory
    that holds it gets the new tags.

    Versions: `supersedes` makes the new memory replace that one's current version(s); otherwise current
    memories close to it are reported, and with `on_similar` "update" (or "ask" and `confirm(best)` says
    yes) the new memory replaces the closest one. Its compression runs after that is decided, so a text
    replacing a memory kept off the servers stays off them too. `look_for_similar=False` skips that look
    (it embeds the text and its candidates again) for a caller that never reads it."""
    if on_similar not in ON_SIMILAR:
        raise InputError(f"on_similar must be one of {', '.join(ON_SIMILAR)} (got {on_similar!r})")
    tips = current(mem, supersedes)[1] if supersedes else []
    if tips:
        text = replace(text, tags=_inherited(tips, text.tags), local_only=text.local_only or _kept_local(tips),
                       kept_here=text.kept_here or _kept_here(mem, tips))
    drafted = draft(mem, text, compressing, supersedes=[tip.id for tip in tips], unique=not allow_duplicate)
    [stored] = store(mem, [drafted])
    written = _outcome(mem, drafted, stored)
    if look_for_similar and not (tips or written.duplicate):
        close = written.similar = similar(mem, written.memory, stored.vector)
        if close and (on_similar == "update" or (on_similar == "ask" and confirm is not None and confirm(close[0]))):
            written.replaced = heads(chain(mem.catalog, close[0].memory.id))
            written.memory = _supersede(mem, written.memory, written.replaced,
                                        tags=_inherited(written.replaced, written.memory.tags),
                                        local_only=_kept_local(written.replaced))
    finish_now(mem, [stored], compressing)
    if stored.jobs and not compressing.defer:
        written.memory = stored.memory
    return _linked(mem, written, tips) if tips or written.duplicate else written


def write_each(mem: Mem, texts: list[tuple[str, str | None]], *, tags: Iterable[str] = (), written_by: str = "cli",
               compressing: CompressOptions = CompressOptions(), check_source: bool = True) -> list[Written]:
    """Several (text, source) pairs, such as the chunks of a file or a thread's summary, each stored as
    given, even when its text is already stored elsewhere, with no near-duplicate check: every one passes
    the gate before any is stored, then they are stored and embedded together."""
    drafted = [draft(mem, Text(text, tags, source, written_by, check_source=check_source), compressing)
               for text, source in texts]
    stored = store(mem, drafted)
    finish_now(mem, stored, compressing)
    return [_outcome(mem, d, s) for d, s in zip(drafted, stored)]


def update(mem: Mem, prefix: str, text: str, *, tags: Iterable[str] | None = None, source: str | None = None,
           written_by: str = "cli", compressing: CompressOptions | None = None, local_only: bool = False) -> Written:
    """Write `text` as the new version of the memory `prefix` names. It replaces every current version of
    that memory's chain, so updating either side of a fork resolves it. The new version keeps the tags
    and source of the one it replaces unless given, stays local-only if it was, and stays on this machine
    if it was (captured work is shared by `mem share` only). The same text as the current version
    changes nothing."""
    _, tips = current(mem, prefix)
    same_text = [tip for tip in tips if content_key(text) == content_key(tip.raw)]
    if len(tips) == 1 and same_text and (tags is None or normalise_tags(list(tags)) == tips[0].tags):
        return Written(tips[0], unchanged=True)
    compressing = compressing or CompressOptions()
    asked = Text(text, _inherited(tips, ()) if tags is None else tags, source if source is not None else tips[0].source,
                 written_by, local_only=local_only or _kept_local(tips), check_source=source is not None,
                 kept_here=_kept_here(mem, tips))
    drafted = draft(mem, asked, compressing, supersedes=[tip.id for tip in tips], unique=not same_text)
    [stored] = store(mem, [drafted])
    finish_now(mem, [stored], compressing)
    return _linked(mem, _outcome(mem, drafted, stored), tips)


def current(mem: Mem, prefix: str) -> tuple[Memory, list[Memory]]:
    """The memory a prefix names and the current version(s) of its chain."""
    memory = reading.get(mem, prefix)
    return memory, heads(chain(mem.catalog, memory.id))


def check_size(mem: Mem, raw: str) -> None:
    """InputError when a text is over mem.yaml's max_input_bytes: every path that sets a raw text refuses it
    alike (add, update, edit, a captured event)."""
    if len(raw.encode("utf-8")) > mem.settings.max_input_bytes:
        raise InputError(f"the text is larger than the limit of {mem.settings.max_input_bytes} bytes")


def _kept_here(mem: Mem, memories: list[Memory]) -> bool:
    """A new version of a memory kept on this machine (memories/local/, what capture writes) is kept here
    too: an update does not commit what only `mem share` may."""
    return any(is_local(reading.relpath_of(mem, memory.id)) for memory in memories)


def _kept_local(memories: list[Memory]) -> bool:
    """A new version of a memory that asked never to be sent asks the same (`mem add --local-only`)."""
    return any(memory.extra.get("send_to_remote") is False for memory in memories)


def _outcome(mem: Mem, drafted: Draft, stored: Stored) -> Written:
    """A new memory as written, or the one already stored with this text, given the new tags."""
    if not stored.existing:
        return Written(stored.memory, redacted=drafted.redacted)
    merged = retag(mem, stored.memory, add=drafted.memory.tags)
    return Written(merged.memory, duplicate=True, redacted=drafted.redacted, tags_added=merged.added)


def _inherited(olds: list[Memory], tags: Iterable[str]) -> list[str]:
    """A new version keeps the tags of the versions it replaces and adds its own: a tag filter still
    finds the current fact."""
    return list(dict.fromkeys([*(tag for old in olds for tag in old.tags), *normalise_tags(list(tags))]))


def _linked(mem: Mem, written: Written, tips: list[Memory]) -> Written:
    """A write that should replace `tips`: a new memory already names them; text already stored as a
    current memory is made to replace them instead (unless it is one of them)."""
    written.replaced = tips
    if written.duplicate:
        others = [tip for tip in tips if tip.id != written.memory.id]
        written.replaced = others
        written.unchanged = not others
        if others:
            written.memory = _supersede(mem, written.memory, others)
    return written


def _supersede(mem: Mem, memory: Memory, olds: list[Memory], tags: list[str] | None = None,
               local_only: bool = False) -> Memory:
    """Make a stored memory replace `olds` as well: its file gets the links (and `tags` when given, and
    `local_only`), its text stays."""
    links = list(dict.fromkeys(memory.supersedes + [old.id for old in olds if old.id != memory.id]))
    return relabel(mem, memory, source=memory.source, tags=memory.tags if tags is None else tags, supersedes=links,
                   local_only=local_only)


# -- changes that keep the text --------------------------------------------------------------------


def relabel(mem: Mem, memory: Memory, *, source: str | None, tags: Iterable[str],
            supersedes: Iterable[str] | None = None, local_only: bool = False) -> Memory:
    """A new source, tags (or versions it supersedes, or `local_only`) for a memory whose text stays, so
    its id, short form and vector stay too (ingest renumbering a chunk that moved within its file, a new
    version)."""
    with mem.store.lock():
        now = reading.as_on_disk(mem, memory.id)
        if now is None:
            raise NotFound(f"no memory with id {memory.id!r}")
        now.source, now.tags, now.updated_at = source, normalise_tags(list(tags)), now_utc()
        if supersedes is not None:
            now.supersedes = list(supersedes)
        if local_only:
            now.extra["send_to_remote"] = False
        save(mem, now)
    return now


def retag(mem: Mem, memory: Memory, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Retagged:
    """Add and remove tags (`mem tag ID +new -old`, the tags a duplicate add brings); writes nothing when
    the tags would stay as they are."""
    add, remove = normalise_tags(list(add)), normalise_tags(list(remove))
    both = sorted(set(add) & set(remove))
    if both:
        raise InputError(f"cannot both add and remove {', '.join(both)}")
    kept = [tag for tag in memory.tags if tag not in remove]
    tags = kept + [tag for tag in add if tag not in kept]
    if tags == list(memory.tags):
        return Retagged(memory)
    saved = relabel(mem, memory, source=memory.source, tags=tags)
    return Retagged(saved, [t for t in tags if t not in memory.tags], [t for t in memory.tags if t not in tags])


def remove(mem: Mem, memories: list[Memory]) -> None:
    """Delete memories, each with every copy of its file (a copy would otherwise become the memory).

    A version goes before the versions that replace it: killed after any unlink, the store shows the
    chain's current version(s) as before, or nothing; never a replaced version back as the truth."""
    with mem.store.lock():
        for memory in _oldest_first(memories):
            for relpath in [*mem.catalog.copies(memory.id), reading.relpath_of(mem, memory.id)]:
                mem.store.delete(relpath)
                mem.catalog.record_delete(relpath)


def _oldest_first(memories: list[Memory]) -> list[Memory]:
    """Each memory after every one of `memories` it supersedes (a loop of versions, which a hand edit can
    make, is broken at its oldest member)."""
    waiting = {memory.id: memory for memory in memories}
    ordered = []
    while waiting:
        free = [m for m in waiting.values() if not any(old in waiting for old in m.supersedes)]
        for memory in free or [min(waiting.values(), key=lambda m: (m.created_at, m.id))]:
            ordered.append(waiting.pop(memory.id))
    return ordered
