"""Every write, in one module: `write` (mem add, MCP memory_write), `write_each` (ingest, thread folds),
`update`, `commit` (import, edit) and the changes that keep a text (tags, source, links, compression).

They all end in `commit`, the one pipeline after the gate (redaction, denylist): the duplicate test,
the file and the index under the store lock, then compression and one embedding call (a text made again
from a file or a thread, `write_each`, is compressed and embedded first: a kill leaves nothing half
done). A write embeds its text once: the near-duplicate check reuses the vectors the commit made. One
result, `Written`, says what any write did.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Container, Iterable

from memcli.config import ON_SIMILAR
from memcli.core import reading
from memcli.core.compressing import COMPRESSING, CompressOptions, compression_of, waits_for_a_model
from memcli.core.near_duplicates import Similar, similar
from memcli.errors import InputError, NotFound
from memcli.index.versions import chain, heads, refuse_loop
from memcli.store import ids
from memcli.store.memory import (
    Memory,
    check_text,
    clean_input,
    content_key,
    normalise_tags,
    now_utc,
)

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
class _Drafted:
    """A text past the gate, waiting for the pipeline."""

    memory: Memory
    redacted: dict[str, int]


# -- adding texts --------------------------------------------------------------------------------------


def write(mem: Mem, text: str, *, tags: Iterable[str] | None = (), source: str | None = None, written_by: str = "cli",
          allow_duplicate: bool = False, compressing: CompressOptions = CompressOptions(), check_source: bool = True,
          local_only: bool = False, supersedes: str | None = None, on_similar: str = "keep",
          confirm: Callable[[Similar], bool] | None = None) -> Written:
    """Store a text. Secrets are redacted before anything else sees it (the duplicate test, the models,
    the file); a private key that survives redaction, or a `source` the denylist names, refuses the write
    (Refused) before anything is stored. `check_source=False` is for a caller that has already decided the
    source with finer rules. `local_only` keeps the text off any compression server.

    Versions: `supersedes` makes the new memory replace that one's current version(s); otherwise current
    memories close to it are reported, and with `on_similar` "update" (or "ask" and `confirm(best)` says
    yes) the new memory replaces the closest one."""
    if on_similar not in ON_SIMILAR:
        raise InputError(f"on_similar must be one of {', '.join(ON_SIMILAR)} (got {on_similar!r})")
    tips = current(mem, supersedes)[1] if supersedes else []
    tags = _inherited(tips, tags or ()) if tips else tags or ()
    local_only = local_only or _kept_local(tips)
    # Whether this text may be sent depends on the memory it may replace: decide that first, compress after.
    later = (on_similar != "keep" and not local_only and bool(mem.providers.remote) and compressing.enabled
             and not compressing.defer)
    drafted = _draft(mem, text, source, tags=tags, written_by=written_by, check_source=check_source,
                     local_only=local_only, supersedes=[tip.id for tip in tips])
    (stored, vector, whole), = _commit(mem, [(drafted.memory, CompressOptions(defer=True) if later else compressing)],
                                      dedupe=not allow_duplicate, whole=not tips)
    written = _outcome(mem, drafted, stored)
    if tips or written.duplicate:
        return _linked(mem, written, tips)
    close = written.similar = similar(mem, written.memory, vector, whole)
    if close and (on_similar == "update" or (on_similar == "ask" and confirm is not None and confirm(close[0]))):
        written.replaced = heads(chain(mem.catalog, close[0].memory.id))
        written.memory = _supersede(mem, written.memory, written.replaced,
                                    tags=_inherited(written.replaced, written.memory.tags),
                                    local_only=_kept_local(written.replaced))
    if later:
        save_compression(mem, written.memory, *compression_of(mem, written.memory, compressing))
        written.memory = reading.as_on_disk(mem, written.memory.id) or written.memory
    return written


def _kept_local(memories: list[Memory]) -> bool:
    """A new version of a memory that asked never to be sent asks the same (`mem add --local-only`)."""
    return any(memory.extra.get("send_to_remote") is False for memory in memories)


def write_each(mem: Mem, texts: list[tuple[str, str | None]], *, tags: Iterable[str] = (), written_by: str = "cli",
                 compressing: CompressOptions = CompressOptions(), check_source: bool = True) -> list[Written]:
    """Several (text, source) pairs, such as the chunks of a file or a thread's summary, each stored as
    given, even when its text is already stored elsewhere, with no near-duplicate check: every one passes
    the gate before any is stored, then one commit embeds them together."""
    drafted = [_draft(mem, text, source, tags=tags, written_by=written_by, check_source=check_source)
               for text, source in texts]
    stored = _commit(mem, [(draft.memory, compressing) for draft in drafted], dedupe=False, first=False)
    return [_outcome(mem, draft, existing) for draft, (existing, _, _) in zip(drafted, stored)]


def update(mem: Mem, prefix: str, text: str, *, tags: Iterable[str] | None = None, source: str | None = None,
           written_by: str = "cli", compressing: CompressOptions | None = None, local_only: bool = False) -> Written:
    """Write `text` as the new version of the memory `prefix` names. It replaces every current version of
    that memory's chain, so updating either side of a fork resolves it. The new version keeps the tags
    and source of the one it replaces unless given, and stays local-only if it was. The same text as the
    current version changes nothing."""
    _, tips = current(mem, prefix)
    same_text = [tip for tip in tips if content_key(text) == content_key(tip.raw)]
    if len(tips) == 1 and same_text and (tags is None or normalise_tags(list(tags)) == tips[0].tags):
        return Written(tips[0], unchanged=True)
    drafted = _draft(mem, text, source if source is not None else tips[0].source,
                     tags=_inherited(tips, ()) if tags is None else tags, written_by=written_by,
                     check_source=source is not None,
                     local_only=local_only or _kept_local(tips),
                     supersedes=[tip.id for tip in tips])
    (stored, _, _), = _commit(mem, [(drafted.memory, compressing or CompressOptions())], dedupe=not same_text)
    return _linked(mem, _outcome(mem, drafted, stored), tips)


def current(mem: Mem, prefix: str) -> tuple[Memory, list[Memory]]:
    """The memory a prefix names and the current version(s) of its chain."""
    memory = reading.get(mem, prefix)
    return memory, heads(chain(mem.catalog, memory.id))


def _draft(mem: Mem, text: str, source: str | None, *, tags: Iterable[str], written_by: str, check_source: bool,
           local_only: bool = False, supersedes: Iterable[str] = ()) -> _Drafted:
    raw = clean_input(text)
    check_size(mem, raw)
    check_text(source or "", "the source")
    if check_source:
        mem.gate.refuse_ignored_source(source)
    fields, redacted = mem.gate.screen({"raw": raw, "tags": tags, "source": source, "written_by": written_by})
    stamp = now_utc()
    memory = Memory(id=ids.new_id(), created_at=stamp, updated_at=stamp, raw=fields["raw"],
                    tags=normalise_tags(fields["tags"]), source=fields["source"], written_by=fields["written_by"],
                    supersedes=list(supersedes))
    if local_only:
        memory.extra["send_to_remote"] = False
    return _Drafted(memory, redacted)


def check_size(mem: Mem, raw: str) -> None:
    """InputError when a text is over mem.yaml's max_input_bytes: every path that sets a raw text refuses it
    alike (add, update, edit)."""
    if len(raw.encode("utf-8")) > mem.settings.max_input_bytes:
        raise InputError(f"the text is larger than the limit of {mem.settings.max_input_bytes} bytes")


def _outcome(mem: Mem, drafted: _Drafted, existing: Memory | None) -> Written:
    """A new memory as written, or the one already stored with this text, given the new tags."""
    if existing is None:
        return Written(drafted.memory, redacted=drafted.redacted)
    merged = retag(mem, existing, add=drafted.memory.tags)
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


# -- the pipeline ----------------------------------------------------------------------------------


def commit(mem: Mem, writes: list[tuple[Memory, CompressOptions | None]], *, dedupe: bool,
           replaces: str | None = None, apart: Container[str] = ()) -> list[Memory | None]:
    """Memories that have passed the gate, stored: compression (None keeps the memory's own `compressed`
    and `compression`), the vectors (one embedding call for all), then the files and the index under one
    lock. For each write, in order, the memory already stored when `dedupe` finds its text (held by a
    memory other than those `apart` names) or its id, which writes nothing; else None."""
    return [stored for stored, _, _ in _commit(mem, writes, dedupe=dedupe, replaces=replaces, apart=apart)]


def _commit(mem: Mem, writes: list[tuple[Memory, CompressOptions | None]], *, dedupe: bool, replaces: str | None = None,
            whole: bool = False, apart: Container[str] = (),
            first: bool = True) -> list[tuple[Memory | None, object, object]]:
    """`commit`, with the vectors each new memory got: (stored already or None, vector, whole-text
    vector when `whole`).

    `first`: each file is written before any model or server works on it (a text given by a person or a
    client, which exists nowhere else): a compression to make is first stored as `pending`, made, then
    saved over it; the vectors come last. A kill while a provider does not answer (or a model loads)
    leaves the memory stored, and `mem compress --pending` finishes it. Otherwise (text made again from
    a file or a thread: chunks, summaries) the models work first, so a kill leaves nothing at all."""
    mem.ensure_store()
    results: list = [[_stored_as(mem, m.id, content_key(m.raw), apart) if dedupe else None, None, None]
                     for m, _ in writes]
    todo = [(n, memory) for n, ((memory, _), (existing, _, _)) in enumerate(zip(writes, results)) if existing is None]
    later = []
    for n, memory in todo:
        compressing = writes[n][1]
        if compressing is not None and first and waits_for_a_model(mem, memory, compressing):
            memory.compressed, memory.compression = None, {"status": "pending"}
            later.append((n, memory, compressing))
        elif compressing is not None:
            memory.compressed, memory.compression = compression_of(mem, memory, compressing)
            _store_raw_tokens(mem, memory, batch=len(todo) > 1)
    embedded = {} if first else _embedded(mem, todo, whole)
    labels: dict[int, int | None] = {}
    with mem.store.lock():
        for n, memory in todo:
            # Another process (or an earlier write of this batch) may have stored the same text meanwhile.
            existing = _stored_as(mem, memory.id, content_key(memory.raw), apart) if dedupe else None
            if existing:
                results[n][0] = existing
            else:
                labels[n] = _save(mem, memory, old_relpath=replaces)
        _index(mem, todo, labels, embedded, results)
    if not first:
        return [tuple(result) for result in results]
    for n, memory, compressing in later:
        if n in labels:
            memory.compressed, memory.compression = compression_of(mem, memory, compressing)
            _store_raw_tokens(mem, memory, batch=len(todo) > 1)
            now = _save_compression(mem, memory, memory.compressed, memory.compression)
            if now is not None:  # as screened on its way to the file
                memory.compressed, memory.compression = now.compressed, now.compression
    stored = [(n, memory) for n, memory in todo if n in labels]
    embedded = _embedded(mem, stored, whole)
    with mem.store.lock():
        _index(mem, stored, labels, embedded, results)
    return [tuple(result) for result in results]


def _embedded(mem: Mem, todo: list[tuple[int, Memory]], whole: bool) -> dict[int, tuple]:
    """Each write's (vector, whole-text vector), by its place in the batch, from one embedding call."""
    vectors, wholes = mem.embed_new([memory.raw for _, memory in todo], whole=whole)
    return {n: pair for (n, _), pair in zip(todo, zip(vectors, wholes))}


def _index(mem: Mem, todo: list[tuple[int, Memory]], labels: dict[int, int | None], embedded: dict[int, tuple],
           results: list) -> None:
    """Give the memories just stored their vectors (the caller holds the lock)."""
    for n, memory in todo:
        if n in labels and n in embedded:
            vector, whole_vector = embedded[n]
            if labels[n] is not None and vector is not None:
                mem.vectors.add(labels[n], memory.raw, vector, mem.embedder())
            results[n][1:] = vector, whole_vector


def _stored_as(mem: Mem, memory_id: str, key: str, apart: Container[str] = ()) -> Memory | None:
    """The stored memory with this id, or with this text (one that `apart` names aside), if any."""
    mem.catalog.refresh()
    if reading.known_id(mem, memory_id):
        return mem.catalog.get(memory_id)
    found = mem.catalog.find_content(key, apart)
    return mem.catalog.get(found) if found else None


def _save(mem: Mem, memory: Memory, old_relpath: str | None = None) -> int | None:
    """Write the file and tell the catalog; the caller holds the lock. The label of a memory new to the
    catalog, for its vector; else None. The fields set after the gate (a compression's reason, new tags
    or source) pass it here, so nothing reaches the file or the catalog unscreened."""
    fields, _ = mem.gate.screen(memory.to_dict(), skip=("raw", "compressed"))
    if fields != memory.to_dict():
        vars(memory).update(vars(Memory.from_dict(fields, memory.id)), comments=memory.comments)
    if memory.supersedes:
        refuse_loop(mem.catalog, memory.id, memory.supersedes)  # the last guard: callers refuse before
    relpath = mem.store.write(memory)
    if old_relpath and old_relpath != relpath:
        mem.store.delete(old_relpath)
        mem.catalog.record_delete(old_relpath)
    sha = hashlib.sha256(mem.store.file_path(relpath).read_bytes()).hexdigest()
    added = mem.catalog.record_write(relpath, memory, sha).added
    return added[0] if added else None


def _store_raw_tokens(mem: Mem, memory: Memory, *, batch: bool) -> None:
    """Record what the raw text costs a reader, so reads and `mem stats` need no tokenizer call."""
    info = memory.compression
    if info is not None and not isinstance(info.get("raw_tokens"), int):
        count = mem.cheap_counter(batch=batch)
        if count is not None:
            info["raw_tokens"] = count(memory.raw)


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
        _save(mem, now)
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


def save_compression(mem: Mem, memory: Memory, compressed: str | None, info: dict) -> str | None:
    """Store a compression made from `memory`, unless its text changed meanwhile; the status, or None."""
    return info["status"] if _save_compression(mem, memory, compressed, info) else None


def _save_compression(mem: Mem, memory: Memory, compressed: str | None, info: dict) -> Memory | None:
    """The memory as stored with its compression, or None when its text changed or it went meanwhile."""
    with mem.store.lock():
        now = reading.as_on_disk(mem, memory.id)
        if now is None or now.raw != memory.raw:
            return None
        now.compressed, now.compression = compressed, info
        _save(mem, now)
    return now


def recompress(mem: Mem, memories: list[Memory], *, compressing: CompressOptions = CompressOptions(),
               progress=None) -> dict[str, int]:
    """(Re)compress memories one by one, each saved as soon as it is done, so an interrupted run loses
    nothing and a re-run picks up what is left. Returns how many ended in each status."""
    outcome: dict[str, int] = {}
    now = CompressOptions(method=compressing.method, ratio=compressing.ratio)
    if progress:
        progress(COMPRESSING, 0, len(memories))
    for done, memory in enumerate(memories, 1):
        status = save_compression(mem, memory, *compression_of(mem, memory, now))
        if status:
            outcome[status] = outcome.get(status, 0) + 1
        if progress:
            progress(COMPRESSING, done, len(memories))
    return outcome


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
