"""Tags after the fact: `mem tag ID +new -old`, the tags a duplicate `mem add` brings, `mem tags`.

A tag change keeps the memory's text, id, short form and vector; only `tags` and `updated_at` change
(through `Mem.relabel`, under the store lock, on the file as it is now). `mem` is a memcli.core.mem.Mem,
left unannotated: api.py calls in here for a duplicate's new tags, and the arrow stays one-way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from memcli.errors import InputError
from memcli.index.filters import Filters
from memcli.store.memory import Memory, normalise_tags


@dataclass
class Retagged:
    memory: Memory
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"id": self.memory.id, "tags": list(self.memory.tags), "added": self.added, "removed": self.removed}


def retag(mem, memory: Memory, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Retagged:
    """Add and remove tags; writes nothing when the tags would stay as they are."""
    add, remove = normalise_tags(list(add)), normalise_tags(list(remove))
    both = sorted(set(add) & set(remove))
    if both:
        raise InputError(f"cannot both add and remove {', '.join(both)}")
    kept = [tag for tag in memory.tags if tag not in remove]
    tags = kept + [tag for tag in add if tag not in kept]
    if tags == list(memory.tags):
        return Retagged(memory)
    saved = mem.relabel(memory, source=memory.source, tags=tags)
    return Retagged(saved, [t for t in tags if t not in memory.tags], [t for t in memory.tags if t not in tags])


def tag_counts(mem, filters: Filters = Filters()) -> list[tuple[str, int]]:
    """Every tag with how many memories carry it, most used first."""
    if not mem.store.exists:
        return []
    mem.catalog.refresh()
    return mem.catalog.tag_counts(filters)
