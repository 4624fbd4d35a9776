"""Near-identical search hits shown once: the same text stored under several ids (ingest keeps a file's
text once per source; `--allow-duplicate`; an import), or a re-worded copy that differs in a few words.

Two memories are near-identical when their word 3-grams overlap by at least SAME (Jaccard); a text
shorter than three words is compared by its words. The better-ranked one stays; each repeat the
reader does not get is a whole memory's worth of tokens saved.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, TypeVar

Hit = TypeVar("Hit")  # a memcli.index.search.Hit: anything with a `.memory`

SAME = 0.8
WORD = re.compile(r"\w+", re.UNICODE)


def shingles(text: str) -> frozenset:
    words = WORD.findall(text.casefold())
    if len(words) < 3:
        return frozenset(words)
    return frozenset(zip(words, words[1:], words[2:]))


def near(a: frozenset, b: frozenset) -> bool:
    """Jaccard >= SAME, without building the union; sizes too far apart cannot get there."""
    if not a or not b:
        return a == b
    if min(len(a), len(b)) < SAME * max(len(a), len(b)):
        return False
    common = len(a & b)
    return common >= SAME * (len(a) + len(b) - common)


def distinct(hits: Iterable[Hit]) -> Iterator[Hit]:
    """The hits in order, each left out when an earlier one is near-identical to it."""
    kept: list[frozenset] = []
    for hit in hits:
        own = shingles(hit.memory.raw)
        if not any(near(own, other) for other in kept):
            kept.append(own)
            yield hit
