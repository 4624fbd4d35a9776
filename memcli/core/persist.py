"""A memory saved: its file and the catalog row that follows it, under the store lock held by the caller.

The one place a memory reaches the disk. Every write (memcli.core.writing) and every job that changes a
stored memory afterwards (its compression, memcli.core.write_jobs) saves through here, so the fields set after
the gate (a compression's reason, new tags) are screened on their way too.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Container

from memcli.core import reading
from memcli.index.versions import refuse_loop
from memcli.store.memory import Memory

if TYPE_CHECKING:
    from memcli.core.mem import Mem


def save(mem: Mem, memory: Memory, old_relpath: str | None = None) -> int | None:
    """Write the file and tell the catalog; the caller holds the lock. The label of a memory new to the
    catalog, for its vector; else None. `old_relpath`: the file this one replaces (an edit that moved it)."""
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


def already_stored(mem: Mem, memory_id: str, key: str | None, apart: Container[str] = ()) -> Memory | None:
    """The stored memory with this id, or (with a content `key`) with this text, one that `apart` names
    aside; None when there is none."""
    mem.catalog.refresh()
    if reading.known_id(mem, memory_id):
        return mem.catalog.get(memory_id)
    found = mem.catalog.find_content(key, apart) if key is not None else None
    return mem.catalog.get(found) if found else None


def save_compression(mem: Mem, memory: Memory, compressed: str | None, info: dict) -> Memory | None:
    """Store a compression made from `memory`: the memory as saved, or None when its text changed or it
    went meanwhile (the compression describes a text that is no longer there)."""
    with mem.store.lock():
        now = reading.as_on_disk(mem, memory.id)
        if now is None or now.raw != memory.raw:
            return None
        now.compressed, now.compression = compressed, info
        save(mem, now)
    return now


def count_raw_tokens(mem: Mem, raw: str, info: dict | None, *, batch: bool) -> None:
    """Record in a compression's `info` what the raw text costs a reader, so reads and `mem stats` need
    no tokenizer call."""
    if info is not None and not isinstance(info.get("raw_tokens"), int):
        count = mem.cheap_counter(batch=batch)
        if count is not None:
            info["raw_tokens"] = count(raw)
