"""The version graph as the catalog holds it: which memories replace which.

An update is a new memory whose file names the versions it replaces (`supersedes: [ID]`); the old
files stay as they are. Keeping the link in the new file only is what lets git merge: two people who
update the same memory add two files and touch none, so after a merge both successors are current (a
fork, which `forks` finds for `mem doctor`) until someone updates either, which replaces both. The
catalog derives `superseded_by` from the links, and reads leave superseded versions out unless asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from memcli.errors import MemError

if TYPE_CHECKING:
    from memcli.index.catalog import Catalog
    from memcli.store.memory import Memory


def chain(catalog: Catalog, memory_id: str) -> list[Memory]:
    """Every version linked to this memory (earlier, later, other branches of a fork), newest first."""
    seen, todo = {memory_id}, [memory_id]
    while todo:
        linked = catalog.links(todo)
        todo = list({i for pair in linked for i in pair} - seen)
        seen.update(todo)
    found = []
    for version in seen:
        try:
            found.append(catalog.get(version))
        except MemError:  # named by a successor, but its file is gone
            continue
    return sorted(found, key=lambda m: (m.created_at, m.id), reverse=True)


def heads(versions: Iterable[Memory]) -> list[Memory]:
    """The current ones among versions of one chain (two or more: a fork), newest first."""
    versions = list(versions)
    return [m for m in versions if not m.superseded_by] or versions[:1]  # a hand-made cycle has none


@dataclass
class Fork:
    base: str  # the version two successors replace
    heads: list[Memory]


def forks(catalog: Catalog) -> list[Fork]:
    """Chains with more than one current version (two people updated the same memory, then merged)."""
    found, seen = [], set()
    for base in catalog.branched():
        tips = heads(chain(catalog, base))
        key = frozenset(m.id for m in tips)
        if len(tips) > 1 and key not in seen:
            seen.add(key)
            found.append(Fork(base, tips))
    return found
