"""Hybrid search: BM25 over the raw text (SQLite FTS5) and cosine over embeddings, blended.

Words find what meaning misses (names, numbers, identifiers) and meaning finds what words miss
(paraphrase). Measured on the LoCoMo development conversations (bench/retrieval.py; 233 questions,
one memory per turn, recall@5 / @10):

    BM25 (porter stemming, stopwords out of the query)        0.534 / 0.620
    MiniLM cosine                                              0.353 / 0.465
    reciprocal-rank fusion, k = 60                             0.495 / 0.584
    reciprocal-rank fusion, best of k 1-60 and weights 0.5-2   0.577 / 0.646
    min-max normalised blend, best weight (0.4)                0.574 / 0.675
    0.5 x cosine + 0.5 x BM25 / best BM25, 100 candidates      0.585 / 0.669   <- chosen

RRF throws away how far ahead the leader is, which matters here because the vector side is weak;
the blend keeps it. Among blends that score within noise of each other, this one keeps an absolute
meaning in the score (the cosine part), so `--min-score` means something across queries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memcli.catalog import Catalog, Filters
    from memcli.memory import Memory

MODES = ("hybrid", "vector", "text")
ALPHA = 0.5
CANDIDATES = 100

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
    where, params = filters.sql("m")
    rows = catalog.db.execute(
        f"SELECT f.rowid, -bm25(fts, 1.0, 0.5) AS score FROM fts f JOIN memories m ON m.label = f.rowid"
        f" WHERE fts MATCH ? AND {where} ORDER BY bm25(fts, 1.0, 0.5) LIMIT ?",
        [match, *params, limit],
    ).fetchall()
    return [(label, float(score)) for label, score in rows]


def fuse(text: list[tuple[int, float]], vector: list[tuple[int, float]], alpha: float = ALPHA) -> list[tuple[int, float]]:
    """alpha x cosine + (1 - alpha) x BM25 relative to this query's best; a memory one side missed gets 0 there."""
    best_text = max((score for _, score in text), default=0.0) or 1.0
    blended: dict[int, float] = {}
    for label, score in text:
        blended[label] = (1 - alpha) * score / best_text
    for label, similarity in vector:
        blended[label] = blended.get(label, 0.0) + alpha * max(similarity, 0.0)
    return sorted(blended.items(), key=lambda item: -item[1])
