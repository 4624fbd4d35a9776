"""Which words pruning drops, and in which order: only the safe ones, the least surprising first.

The prose method (`rank_safe`) ranks only the words memcli.compress.meaning shows safe to drop
(articles, auxiliaries before a participle, fillers, ...); every other word is no candidate at all.
Within them the small model's surprisal decides which go first, which matters only for a text so full
of them that dropping all would take it below its target.
The baselines measured against it (bench/compression.py) rank every word by surprisal, or only the
words of a stopword list.
"""

from __future__ import annotations

from typing import Callable, Sequence

from memcli.compress.meaning import safe_drops
from memcli.compress.units import Unit

Ranker = Callable[[Sequence[Unit]], list]


def rank_safe(units: Sequence[Unit]) -> list:
    """A rank for each word safe to drop (lower goes first), None for every other unit."""
    safe = safe_drops(units)
    return [units[i].surprisal if i in safe else None for i in range(len(units))]


def rank_by_surprisal(units: Sequence[Unit]) -> list:
    """Baseline: every unprotected word, least surprising first."""
    return [u.surprisal if u.kind == "word" else None for u in units]


def rank_stopwords(stopwords: frozenset[str]) -> Ranker:
    """Baseline: only words of the given list are candidates (use with ratio=0 to drop them all)."""
    return lambda units: [0.0 if u.kind == "word" and u.lower in stopwords else None for u in units]
