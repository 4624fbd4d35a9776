"""Hybrid search: BM25 over the raw text (SQLite FTS5) and cosine over embeddings, blended.

Words find what meaning misses (names, numbers, identifiers) and meaning finds what words miss
(paraphrase). The blend is `0.5 x cosine + 0.5 x BM25 / best BM25` over 100 candidates a side;
bench/retrieval.py measures it against each side alone and the README quotes the figures.
Reciprocal-rank fusion scored below BM25 alone there: it throws away how far ahead the leader is,
which matters because the vector side is weak; the blend keeps it. Among blends that score within noise of each other, this one keeps an absolute
meaning in the score (the cosine part), so `--min-score` means something across queries.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Callable, Iterator

from memcli.errors import InputError, MemError
from memcli.index.distinct import distinct
from memcli.index.filters import Filters
from memcli.store.memory import check_text

if TYPE_CHECKING:
    from memcli.index.catalog import Catalog
    from memcli.store.memory import Memory

log = logging.getLogger("memcli")

MODES = ("hybrid", "vector", "text")
# The default cut-off of the hybrid score: results below it have no real match. Measured, not chosen:
# bench/min_score.py prints the score that keeps 95% of the relevant results the search finds on the
# LoCoMo development conversations (re-run it whenever the score scale changes). A caller's min_score
# replaces it; 0 turns it off. The single-sided modes have no default cut: a cosine's scale belongs to
# the embedding model, and BM25 has no absolute scale.
MIN_SCORE = 0.35
ALPHA = 0.5
CANDIDATES = 100
MAX_K = 1 << 31  # more than any store holds; a larger -k means "all" and must not overflow SQLite's LIMIT

TOKEN = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be been but by did do does for from had has have he her his how i if in into is it its "
    "me my of on or our she so that the their them they this to was we were what when where which who whom why "
    "will with would you your".split()
)


@dataclass
class Hit:
    memory: Memory
    score: float


def fts_query(text: str) -> str | None:
    """Any user text → a safe FTS5 query: each word quoted (no syntax errors), OR-ed, stopwords left out."""
    words = [w for w in TOKEN.findall(text.lower()) if w not in STOPWORDS] or TOKEN.findall(text.lower())
    unique = list(dict.fromkeys(words))
    return " OR ".join(f'"{w}"' for w in unique) if unique else None


def text_ranking(catalog: Catalog, query: str, limit: int, filters: Filters) -> list[tuple[int, float]]:
    """BM25 over raw text and tags; higher is better (FTS5's bm25() is negated)."""
    match = fts_query(query)
    if match is None:
        return []
    return catalog.bm25(match, limit, filters)


def fuse(text: list[tuple[int, float]], vector: list[tuple[int, float]], alpha: float = ALPHA) -> list[tuple[int, float]]:
    """alpha x cosine + (1 - alpha) x BM25 relative to this query's best; a memory one side missed gets 0 there."""
    best_text = max((score for _, score in text), default=0.0) or 1.0
    blended: dict[int, float] = {}
    for label, score in text:
        blended[label] = (1 - alpha) * score / best_text
    for label, similarity in vector:
        blended[label] = blended.get(label, 0.0) + alpha * max(similarity, 0.0)
    return sorted(blended.items(), key=lambda item: -item[1])


def search(catalog: Catalog, query: str, *, k: int, mode: str, filters: Filters, min_score: float | None,
           vector_ranking: Callable[[str, int, Filters], list[tuple[int, float]]]) -> list[Hit]:
    """Best memories first; `score` is the blend (hybrid), cosine (vector) or BM25 (text). When meaning
    search cannot run (no embedding model), hybrid says so once and goes on with words alone."""
    if not check_text(query, "the search query").strip():
        raise InputError("the search query is empty")
    k = min(k, MAX_K)
    rankings = {}
    if mode in ("hybrid", "text"):
        rankings["text"] = text_ranking(catalog, query, max(CANDIDATES, k), filters)
    if mode in ("hybrid", "vector"):
        try:
            rankings["vector"] = vector_ranking(query, max(CANDIDATES, k), filters)
        except MemError as exc:
            if mode == "vector":
                raise
            log.warning("meaning search unavailable (%s); showing word matches only", exc)
    ranked = fuse(rankings["text"], rankings["vector"]) if len(rankings) > 1 else next(iter(rankings.values()))
    default = MIN_SCORE if len(rankings) > 1 else 0.0  # hybrid that fell back to words alone is BM25
    cut = default if min_score is None else min_score
    if cut:
        ranked = [(label, score) for label, score in ranked if score >= cut]
    return list(islice(distinct(hits_of(catalog, ranked)), k))


def hits_of(catalog: Catalog, ranked: list[tuple[int, float]], batch: int = 32) -> Iterator[Hit]:
    """The ranked labels as hits, read from the catalog a batch at a time (distinct() may need more than k)."""
    for start in range(0, len(ranked), batch):
        part = ranked[start:start + batch]
        memories = catalog.by_labels(label for label, _ in part)
        yield from (Hit(memories[label], score) for label, score in part if label in memories)
