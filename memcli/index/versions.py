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

from memcli.errors import InvalidMemory, MemError

if TYPE_CHECKING:
    from memcli.index.catalog import Catalog
    from memcli.store.memory import Memory


def chain(catalog: Catalog, memory_id: str, leaving_out: Iterable[tuple[str, str]] = ()) -> list[Memory]:
    """Every version linked to this memory (earlier, later, other branches of a fork), newest first;
    not through the (old, new) links `leaving_out` names."""
    left_out = set(leaving_out)
    seen, todo = {memory_id}, [memory_id]
    while todo:
        linked = catalog.links(todo) - left_out
        todo = list({i for pair in linked for i in pair} - seen)
        seen.update(todo)
    found = []
    for version in seen:
        try:
            found.append(catalog.get(version))
        except MemError:  # named by a successor, but its file is gone
            continue
    return sorted(found, key=lambda m: (m.created_at, m.id), reverse=True)


def own_versions(catalog: Catalog, memory_id: str) -> list[Memory]:
    """The versions that deleting or sharing a memory takes with it: its chain(), but not through the
    links of a memory that replaces separate memories (unrelated()). Those are memories it hides, not
    its versions: deleting a teammate's file that names yours deletes it alone (and shows yours again),
    and sharing one of yours does not share the others it names."""
    return chain(catalog, memory_id, [(old, new) for new, olds in unrelated(catalog) for old in olds])


def refuse_loop(catalog: Catalog, memory_id: str, supersedes: Iterable[str],
                pending: dict[str, list[str]] | None = None) -> None:
    """InvalidMemory when `memory_id` replacing `supersedes` would close a loop: a version replacing one
    that already replaces it (directly or through others). In a loop every version is replaced, so
    none is current and ls and search show none of them. `pending` holds the links of memories about
    to be written (an import's batch), which the catalog does not know yet."""
    pending = pending or {}
    for start in supersedes:
        path, todo, seen = {start: None}, [start], {start}
        while todo:
            version = todo.pop()
            if version == memory_id:
                loop = [version]
                while path[loop[-1]] is not None:
                    loop.append(path[loop[-1]])
                names = " -> ".join([memory_id, *reversed(loop)])
                raise InvalidMemory(f"{memory_id} cannot replace {start}: {start} already replaces it, which "
                                    f"would make a loop of versions ({names}) in which none is current")
            olds = pending.get(version)
            if olds is None:
                olds = [old for old, new in catalog.links([version]) if new == version]
            for old in olds:
                if old not in seen:
                    seen.add(old)
                    path[old] = version
                    todo.append(old)


def loops(catalog: Catalog) -> list[list[str]]:
    """Versions that replace each other round a loop (a hand edit or a merge made them), each loop once,
    its oldest link first: none of them is current."""
    replaced: dict[str, list[str]] = {}
    for old, new in catalog.all_links():
        replaced.setdefault(new, []).append(old)
    found, done = [], set()
    for first in sorted(replaced):
        if first in done:
            continue
        path, on_path, todo = [], set(), [(first, iter(replaced.get(first, ())))]
        path.append(first)
        on_path.add(first)
        while todo:
            version, olds = todo[-1]
            old = next(olds, None)
            if old is None:
                todo.pop()
                on_path.discard(path.pop())
                done.add(version)
            elif old in on_path:
                found.append(path[path.index(old):])
            elif old not in done:
                path.append(old)
                on_path.add(old)
                todo.append((old, iter(replaced.get(old, ()))))
    return found


def unrelated(catalog: Catalog) -> list[tuple[str, list[str]]]:
    """Memories that replace versions of separate memories, with those versions: an update replaces the
    current versions of one memory, so a file naming several memories (a teammate's commit, a hand edit)
    hides memories that were never its earlier versions. Versions are of one memory when plain updates
    (a version replacing exactly one other) join them, as the two heads of a fork are joined through
    the version both replace; links of versions that replace several never vouch for each other, so two
    hostile files naming the same memories are both named."""
    replaced: dict[str, list[str]] = {}
    for old, new in catalog.all_links():
        replaced.setdefault(new, []).append(old)
    linked: dict[str, set[str]] = {}
    for new, olds in replaced.items():
        if len(olds) == 1:
            linked.setdefault(olds[0], set()).add(new)
            linked.setdefault(new, set()).add(olds[0])
    found = []
    for new, olds in sorted(replaced.items()):
        if len(olds) < 2:
            continue
        reached, todo = {olds[0]}, [olds[0]]
        while todo:
            for other in linked.get(todo.pop(), set()) - reached:
                reached.add(other)
                todo.append(other)
        if not set(olds) <= reached:
            found.append((new, sorted(olds)))
    return found


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
