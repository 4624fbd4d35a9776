"""Near-duplicates: a new memory whose meaning (MiniLM cosine) and words (overlap of word stems) are
both close to a current memory is reported, or made its update (`on_similar`, memcli.core.writing).

The weights and threshold were chosen by bench/near_dup.py on labelled pairs
(tests/support/fixtures/near_dup_pairs.jsonl).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memcli.errors import MemError
from memcli.index.versions import chain

if TYPE_CHECKING:
    from memcli.core.mem import Mem
    from memcli.store.memory import Memory

log = logging.getLogger("memcli")

# score = COSINE_WEIGHT x cosine + (1 - COSINE_WEIGHT) x stem overlap; similar at SIMILAR_AT or above.
# bench/near_dup.py chose both on 115 labelled pairs (MiniLM): the cosine alone cross-validated as well
# as any blend with the word overlap, so the weight is 1.0 (bench/RESULTS.md, "Versions").
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


def stems(text: str) -> set[str]:
    from memcli.index.lexical import STOPWORDS, TOKEN

    return {word[:STEM] for word in TOKEN.findall(text.lower()) if word not in STOPWORDS}


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' word stems (stopwords out)."""
    left, right = stems(a), stems(b)
    return len(left & right) / len(left | right) if left | right else 0.0


def closeness(cosine: float, a: str, b: str) -> float:
    return COSINE_WEIGHT * cosine + (1 - COSINE_WEIGHT) * overlap(a, b)


def similar(mem: Mem, memory: Memory, vector, limit: int = SIMILAR_LIMIT) -> list[Similar]:
    """Current memories close to this one, closest first: `vector` (the index vector its write made)
    finds the candidates, and its text embedded whole is compared with theirs (one call to the model).
    Looks among the memories that have a vector (a write does not wait to embed a backlog, e.g. after a
    big `git pull`); nothing when the embedding model could not run (the write already said so).

    The rule compares whole texts, as bench/near_dup.py measured it: a stored vector carries each
    sentence's label (memcli.index.sentence_vectors), which pulls any two texts of one speaker together
    (two of Melanie's turns, camping and painting: 0.30 whole, 0.69 by their sentences)."""
    if vector is None:
        return []
    try:
        mine = {m.id for m in chain(mem.catalog, memory.id)}
        hits = mem.vectors.query(vector, CANDIDATES + len(mine), skip=mem.catalog.superseded_labels())
        found = mem.catalog.by_labels(label for label, _ in hits)
        others = [found[label] for label, _ in hits if label in found and found[label].id not in mine]
        if not others:
            return []
        whole, *theirs = mem.embedder().model.embed([memory.raw] + [other.raw for other in others])
    except MemError as exc:
        log.debug("no near-duplicate check: %s", exc)
        return []
    close = []
    for other, their in zip(others, theirs):
        score = closeness(float(whole @ their), memory.raw, other.raw)
        if score >= SIMILAR_AT:
            close.append(Similar(other, score))
    return sorted(close, key=lambda s: -s.score)[:limit]
