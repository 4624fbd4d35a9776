"""Hybrid search: BM25 over the raw text (SQLite FTS5) and cosine over embeddings, fused by rank.

Words find what meaning misses (names, numbers, identifiers) and meaning finds what words miss
(paraphrase); reciprocal-rank fusion needs no score calibration between the two. The weights and
the rank constant were chosen on the LoCoMo development conversations (bench/retrieval.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memcli.catalog import Catalog, Filters
    from memcli.memory import Memory

MODES = ("hybrid", "vector", "text")
RRF_K = 60
WEIGHTS = {"text": 1.0, "vector": 1.0}
CANDIDATES = 50

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


def fuse(rankings: dict[str, list[tuple[int, float]]], weights: dict[str, float] = WEIGHTS,
         k: int = RRF_K) -> list[tuple[int, float]]:
    """Weighted reciprocal-rank fusion, scaled so that first place in every list scores 1.0."""
    best = sum(weights[name] for name in rankings) / (k + 1)
    fused: dict[int, float] = {}
    for name, ranking in rankings.items():
        for rank, (label, _) in enumerate(ranking, 1):
            fused[label] = fused.get(label, 0.0) + weights[name] / (k + rank)
    return sorted(((label, score / best) for label, score in fused.items()), key=lambda item: -item[1])
