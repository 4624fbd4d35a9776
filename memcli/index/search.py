"""Hybrid search: BM25 over the raw text, tags and date words (SQLite FTS5) and cosine over embeddings, blended.

A memory's embedding is the mean of its sentences', weighted by their words (memcli.index.sentence_vectors); a query is embedded whole.

Words find what meaning misses (names, numbers, identifiers) and meaning finds what words miss
(paraphrase). The blend is the weighted mean `0.5 x cosine + 0.5 x BM25 / best BM25` over 100
candidates a side; bench/retrieval.py measures it against each side alone, per dev conversation, and
the README quotes the figures. Reciprocal-rank fusion scored below BM25 alone there: it throws away how
far ahead the leader is, which matters because the vector side is weak; the blend keeps it, and keeps an
absolute meaning in the score (the cosine part), so `--min-score` means something across queries.
Normalising each side by its own spread, MMR diversity, neighbouring memories of the same source,
feedback on either side were measured too (README): none helped both conversations beyond the noise
of a fresh build while keeping the score's scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Iterator

from memcli.index import lexical
from memcli.index.dates import query_date_words
from memcli.index.distinct import distinct
from memcli.index.filters import Filters

if TYPE_CHECKING:
    from memcli.index.catalog import Catalog
    from memcli.store.memory import Memory

MODES = ("hybrid", "vector", "text")
# The default cut-off of the hybrid score: results below it have no real match. Measured, not chosen:
# bench/min_score.py prints the score that 95% of the nonsense queries sharing no word with a store
# stay below (their score is meaning alone) on the LoCoMo development conversations; re-run it whenever
# the score scale changes. A higher cut silences no more nonsense (what shares a word is a word match)
# and only drops relevant results. A caller's min_score replaces it; 0 turns it off. The single-sided
# modes have no default cut: a cosine's scale belongs to the embedding model, and BM25 has no absolute scale.
MIN_SCORE = 0.20
ALPHA = 0.5
CANDIDATES = 100
MAX_K = 1 << 31  # more than any store holds; a larger -k means "all" and must not overflow SQLite's LIMIT


@dataclass
class Hit:
    memory: Memory
    score: float


def fuse(rankings: list[tuple[float, list[tuple[int, float]], bool]]) -> list[tuple[int, float]]:
    """The weighted mean over (weight, ranking, relative) of each memory's scores, so a blend stays
    within 0-1: a relative ranking (BM25) is divided by this query's best, a cosine counts as it is
    (below 0 as 0), and a memory that a ranking missed gets 0 there."""
    total = sum(weight for weight, _, _ in rankings)
    blended: dict[int, float] = {}
    for weight, ranking, relative in rankings:
        best = (max((score for _, score in ranking), default=0.0) or 1.0) if relative else 1.0
        for label, score in ranking:
            blended[label] = blended.get(label, 0.0) + weight / total * max(score, 0.0) / best
    return sorted(blended.items(), key=lambda item: (-item[1], item[0]))


def candidates(k: int) -> int:
    """How many memories each side ranks for a query wanting k."""
    return max(CANDIDATES, min(k, MAX_K))


def word_ranking(catalog: Catalog, query: str, limit: int, filters: Filters) -> list[tuple[int, float]]:
    """BM25 over the query's words and the date words it names (memcli.index.dates)."""
    return lexical.bm25(catalog, lexical.words(query) + query_date_words(query), limit, filters)


def ranked(catalog: Catalog, query: str, *, k: int, filters: Filters, min_score: float | None,
           words: list[tuple[int, float]] | None, meaning: list[tuple[int, float]] | None) -> list[Hit]:
    """Best memories first from the rankings a search made (None: that side did not run); `score` is the
    blend (both), cosine (meaning) or BM25 (words)."""
    k = min(k, MAX_K)
    blended = words is not None and meaning is not None
    ranking = fuse([(1 - ALPHA, words, True), (ALPHA, meaning, False)]) if blended else words if meaning is None else meaning
    cut = (MIN_SCORE if blended else 0.0) if min_score is None else min_score  # hybrid fallen back to words is BM25
    if cut:
        ranking = [(label, score) for label, score in ranking if score >= cut]
    if cut and blended and query_date_words(query):
        # A date reorders what matches, it makes no match: the cut reads the blend without the date tokens,
        # else "quantum chromodynamics in June" passes with every June memory (BM25 is relative to its best).
        undated = lexical.bm25(catalog, lexical.words(query), candidates(k), filters)
        passing = {label for label, score in fuse([(1 - ALPHA, undated, True), (ALPHA, meaning, False)])
                   if score >= cut}
        ranking = [(label, score) for label, score in ranking if label in passing]
    return list(islice(distinct(hits_of(catalog, ranking, batch=min(k, 1000))), k))


def hits_of(catalog: Catalog, ranked: list[tuple[int, float]], batch: int) -> Iterator[Hit]:
    """The ranked labels as hits, read from the catalog `batch` at a time: the k wanted first, more only
    when distinct() left some out (reading a record is most of what a hit costs)."""
    for start in range(0, len(ranked), batch):
        part = ranked[start:start + batch]
        memories = catalog.by_labels(label for label, _ in part)
        yield from (Hit(memories[label], score) for label, score in part if label in memories)
