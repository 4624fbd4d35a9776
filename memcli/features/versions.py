"""Versions: a memory that changes keeps its history, and a write that repeats a memory says so.

An update is a new memory whose file names the versions it replaces (`supersedes: [ID]`); the old
files stay as they are. Keeping the link in the new file only is what lets git merge: two people who
update the same memory add two files and touch none, so after a merge both successors are current (a
fork, which `forks` finds for `mem doctor`) until someone updates either, which replaces both. The
catalog derives `superseded_by` from the links, and reads leave superseded versions out unless asked.

Near-duplicates: a new memory whose meaning (MiniLM cosine) and words (overlap of word stems) are both
close to a current memory is reported, or made its update (`on_similar`). The weights and threshold
were chosen by bench/near_dup.py on labelled pairs (tests/data/near_dup_pairs.jsonl).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable

from memcli.config import ON_SIMILAR
from memcli.errors import InputError, MemError
from memcli.store.memory import Memory, content_key, normalise_tags

if TYPE_CHECKING:
    from memcli.core.mem import AddResult, Compressing, Mem

log = logging.getLogger("memcli")

# score = COSINE_WEIGHT x cosine + (1 - COSINE_WEIGHT) x stem overlap; similar at SIMILAR_AT or above.
# bench/near_dup.py chose both on 115 labelled pairs (MiniLM): the cosine alone cross-validated as well
# as any blend with the word overlap (F1 0.981 against 0.980 for half and half), so the weight is 1.0.
# On 78 held-out pairs: precision 0.895, recall 1.0; 22% of related-but-different pairs are flagged.
COSINE_WEIGHT = 1.0
SIMILAR_AT = 0.62
SIMILAR_LIMIT = 3
CANDIDATES = 8  # nearest memories by the index whose whole texts the rule compares
STEM = 5  # words are compared by their first letters: "deploys" and "deployment" meet, no stemmer needed


@dataclass
class Similar:
    memory: Memory
    score: float

    def to_contract(self) -> dict:
        return {"id": self.memory.id, "score": round(self.score, 3), "content": self.memory.content}


@dataclass
class Written:
    """What a write did about versions: the memory stored (or found), what it now replaces, what it is
    close to."""

    memory: Memory
    duplicate: bool = False
    redacted: dict[str, int] = field(default_factory=dict)
    replaced: list[Memory] = field(default_factory=list)
    similar: list[Similar] = field(default_factory=list)
    unchanged: bool = False
    tags_added: list[str] = field(default_factory=list)  # new tags merged into an exact duplicate


# -- the version graph -------------------------------------------------------------------------------


def chain(mem: Mem, memory_id: str) -> list[Memory]:
    """Every version linked to this memory (earlier, later, other branches of a fork), newest first."""
    seen, todo = {memory_id}, [memory_id]
    while todo:
        linked = mem.catalog.links(todo)
        todo = list({i for pair in linked for i in pair} - seen)
        seen.update(todo)
    found = []
    for version in seen:
        try:
            found.append(mem.catalog.get(version))
        except MemError:  # named by a successor, but its file is gone
            continue
    return sorted(found, key=lambda m: (m.created_at, m.id), reverse=True)


def heads(versions: Iterable[Memory]) -> list[Memory]:
    """The current ones among versions of one chain (two or more: a fork), newest first."""
    versions = list(versions)
    return [m for m in versions if not m.superseded_by] or versions[:1]  # a hand-made cycle has none


def current(mem: Mem, prefix: str) -> tuple[Memory, list[Memory]]:
    """The memory a prefix names and the current version(s) of its chain."""
    memory = mem.get(prefix)
    return memory, heads(chain(mem, memory.id))


@dataclass
class Fork:
    base: str  # the version two successors replace
    heads: list[Memory]


def forks(mem: Mem) -> list[Fork]:
    """Chains with more than one current version (two people updated the same memory, then merged)."""
    found, seen = [], set()
    for base in mem.catalog.branched():
        versions = chain(mem, base)
        tips = heads(versions)
        key = frozenset(m.id for m in tips)
        if len(tips) > 1 and key not in seen:
            seen.add(key)
            found.append(Fork(base, tips))
    return found


# -- writing versions --------------------------------------------------------------------------------


def update(mem: Mem, prefix: str, text: str, *, tags: Iterable[str] | None = None, source: str | None = None,
           written_by: str = "cli", compressing: Compressing | None = None, local_only: bool = False) -> Written:
    """Write `text` as the new version of the memory `prefix` names. It replaces every current version of
    that memory's chain, so updating either side of a fork resolves it. The new version keeps the tags
    and source of the one it replaces unless given, and stays local-only if it was. The same text as the
    current version changes nothing."""
    from memcli.core.mem import Compressing

    _, tips = current(mem, prefix)
    same_text = [tip for tip in tips if content_key(text) == content_key(tip.raw)]
    if len(tips) == 1 and same_text and (tags is None or normalise_tags(list(tags)) == tips[0].tags):
        return Written(tips[0], unchanged=True)
    if tags is None:
        tags = _inherited(tips, ())
    result = mem.add(text, tags=tags, source=source if source is not None else tips[0].source,
                     written_by=written_by, compressing=compressing or Compressing(), allow_duplicate=bool(same_text),
                     local_only=local_only or any(tip.extra.get("send_to_remote") is False for tip in tips),
                     check_source=source is not None, supersedes=[tip.id for tip in tips])
    return _linked(mem, result, tips)


def write(mem: Mem, text: str, *, supersedes: str | None = None, on_similar: str = "keep",
          confirm: Callable[[Similar], bool] | None = None, **add_args) -> Written:
    """`Mem.add`, plus versions: `supersedes` makes the new memory replace that one's current version(s);
    otherwise current memories close to it are reported, and with `on_similar` "update" (or "ask" and
    `confirm(best)` says yes) the new memory replaces the closest one."""
    if on_similar not in ON_SIMILAR:
        raise InputError(f"on_similar must be one of {', '.join(ON_SIMILAR)} (got {on_similar!r})")
    tips = current(mem, supersedes)[1] if supersedes else []
    if tips:
        add_args["tags"] = _inherited(tips, add_args.get("tags") or ())
    result = mem.add(text, supersedes=[tip.id for tip in tips], **add_args)
    if tips or result.duplicate:
        return _linked(mem, result, tips)
    close = similar(mem, result.memory)
    written = Written(result.memory, redacted=result.redacted, similar=close)
    if close and (on_similar == "update" or (on_similar == "ask" and confirm is not None and confirm(close[0]))):
        written.replaced = heads(chain(mem, close[0].memory.id))
        written.memory = _supersede(mem, result.memory, written.replaced,
                                    tags=_inherited(written.replaced, result.memory.tags))
    return written


def _inherited(olds: list[Memory], tags: Iterable[str]) -> list[str]:
    """A new version written as an add (`--supersedes`, `on_similar`) keeps the tags of the versions it
    replaces, as an update does, and adds its own: a tag filter still finds the current fact."""
    return list(dict.fromkeys([*(tag for old in olds for tag in old.tags), *normalise_tags(list(tags))]))


def _linked(mem: Mem, result: AddResult, tips: list[Memory]) -> Written:
    """A write that should replace `tips`: a new memory already names them; text already stored as a
    current memory is made to replace them instead (unless it is one of them)."""
    written = Written(result.memory, duplicate=result.duplicate, redacted=result.redacted, replaced=tips,
                      tags_added=result.tags_added)
    if result.duplicate:
        others = [tip for tip in tips if tip.id != result.memory.id]
        written.replaced = others
        written.unchanged = not others
        if others:
            written.memory = _supersede(mem, result.memory, others)
    return written


def _supersede(mem: Mem, memory: Memory, olds: list[Memory], tags: list[str] | None = None) -> Memory:
    """Make a stored memory replace `olds` as well: its file gets the links (and `tags` when given), its
    text stays."""
    links = list(dict.fromkeys(memory.supersedes + [old.id for old in olds if old.id != memory.id]))
    return mem.relabel(memory, source=memory.source, tags=memory.tags if tags is None else tags, supersedes=links)


# -- near-duplicates ---------------------------------------------------------------------------------


def stems(text: str) -> set[str]:
    from memcli.index.lexical import STOPWORDS, TOKEN

    return {word[:STEM] for word in TOKEN.findall(text.lower()) if word not in STOPWORDS}


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' word stems (stopwords out)."""
    left, right = stems(a), stems(b)
    return len(left & right) / len(left | right) if left | right else 0.0


def closeness(cosine: float, a: str, b: str) -> float:
    return COSINE_WEIGHT * cosine + (1 - COSINE_WEIGHT) * overlap(a, b)


def similar(mem: Mem, memory: Memory, limit: int = SIMILAR_LIMIT) -> list[Similar]:
    """Current memories close to this one, closest first. Looks among the memories that have a vector
    (a write does not wait to embed a backlog, e.g. after a big `git pull`); nothing when the embedding
    model cannot run (the write already said so).

    The index finds the candidates; the rule then compares whole texts, as bench/near_dup.py measured
    it: a stored vector carries each sentence's label (memcli.index.sentence_vectors), which pulls any
    two texts of one speaker together (two of Melanie's turns, camping and painting: 0.30 whole, 0.69
    by their sentences)."""
    try:
        embedder = mem.embedder()
        mine = {m.id for m in chain(mem, memory.id)}
        hits = mem.vectors.query(embedder.embed([memory.raw])[0], CANDIDATES + len(mine),
                                 skip=mem.catalog.superseded_labels())
        found = mem.catalog.by_labels(label for label, _ in hits)
        others = [found[label] for label, _ in hits if label in found and found[label].id not in mine]
        if not others:
            return []
        whole = embedder.model.embed([memory.raw] + [other.raw for other in others])
    except MemError as exc:
        log.debug("no near-duplicate check: %s", exc)
        return []
    close = []
    for other, vector in zip(others, whole[1:]):
        score = closeness(float(whole[0] @ vector), memory.raw, other.raw)
        if score >= SIMILAR_AT:
            close.append(Similar(other, score))
    return sorted(close, key=lambda s: -s.score)[:limit]
