"""Hybrid search: BM25 over the raw text, tags and date words (SQLite FTS5) and cosine over embeddings, blended.

A memory's embedding is the mean of its sentences', weighted by their words (memcli.index.sentence_vectors); a query is embedded whole.

Words find what meaning misses (names, numbers, identifiers) and meaning finds what words miss
(paraphrase). The blend is the weighted mean `0.5 x cosine + 0.5 x BM25 / best BM25 x coverage` over
100 candidates a side; bench/retrieval.py measures it against each side alone, per dev conversation, and
the README quotes the figures. Reciprocal-rank fusion scored below BM25 alone there: it throws away how
far ahead the leader is, which matters because the vector side is weak; the blend keeps it, and keeps an
absolute meaning in the score (the cosine part), so `--min-score` means something across queries.
Coverage, the share of the query a memory holds (lexical.coverage), keeps BM25 over its best from giving
full marks to the best match of any one word ("rate" of "rate limiting" in "the FX rate").
Normalising each side by its own spread, MMR diversity, neighbouring memories of the same source,
feedback on either side were measured too (README): none helped both conversations beyond the noise
of a fresh build while keeping the score's scale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Iterator

from memcli.index import lexical
from memcli.index.dates import query_date_words
from memcli.index.distinct import distinct
from memcli.index.filters import Filters
from memcli.index.names import names

if TYPE_CHECKING:
    from memcli.index.catalog import Catalog
    from memcli.store.memory import Memory

MODES = ("hybrid", "vector", "text")
# The default cut-off of hybrid search asks of the query, not of each result, whether it has a real match,
# from how the query's cosines spread across the store: its best (within the filters) stands STAND_OUT
# above the rest of the store (the memory at rank rest_rank() of the whole store, filters aside), or it is
# CLOSE whatever the rest does, or some memory holds words carrying half its weight (MATCH_COVERAGE of
# lexical.coverage: "amazon" of "amazon rate limit" where "amazon" is rare); a query naming a name the
# store holds nowhere (memcli.index.names: "Celery", "Gina") is close only at CLOSE_UNKNOWN_NAME, as a
# question about someone else sits as close to a chat as a real one does. And a match of a query of
# LEAN_WORDS words or more must not hang on its commonest word (leaned_on(): held by at most LEAN_SHARE of
# the store): the query without that word must still stand out or be close, as "can the SQLite helper
# library replicate a database" stands out from a store of SQLite commits only by "sqlite". A topic's name meets the
# note it names at a low cosine ("rate limiting" against the Amazon note: 0.21) but well above the
# rest of the store (0.01 for the third of five notes), where a query the store knows nothing of scores flat against all of it; a
# question of a sentence sits high against many memories, so a close cosine alone stands for a match.
# A query that has one gets its best k that score at least RELATIVE times its best (the rest only fill
# a listing); one that has none gets nothing. Tuned, not chosen: bench/spread.py on the tune parts of
# the keyword notes, devcontent and LoCoMo (docs/search.md, bench/RESULTS.md); re-run it whenever the
# embedding model changes. A caller's min_score replaces the question by a cut of each result's score;
# 0 turns it off. The single-sided modes have no default cut: a cosine's scale belongs to the embedding
# model, and BM25 has no absolute scale.
REST = 10
STAND_OUT = 0.15
CLOSE = 0.36
CLOSE_UNKNOWN_NAME = 0.55
LEAN_WORDS = 3
LEAN_SHARE = 0.4
MATCH_COVERAGE = 0.5
RELATIVE = 0.25
ALPHA = 0.5
CANDIDATES = 100
MAX_K = 1 << 31  # more than any store holds; a larger -k means "all" and must not overflow SQLite's LIMIT


@dataclass
class Hit:
    memory: Memory
    score: float


class Results(list):
    """Hits, best first; `under_cut`: the best score the cut-off left out (None when it left out none), for
    an empty result to say what it would have shown."""

    under_cut: float | None = None


def fuse(rankings: list[tuple[float, list[tuple[int, float]]]]) -> list[tuple[int, float]]:
    """The weighted mean over (weight, ranking) of each memory's scores (each within 0-1, below 0 as 0),
    so a blend stays within 0-1; a memory that a ranking missed gets 0 there."""
    total = sum(weight for weight, _ in rankings)
    blended: dict[int, float] = {}
    for weight, ranking in rankings:
        for label, score in ranking:
            blended[label] = blended.get(label, 0.0) + weight / total * max(score, 0.0)
    return sorted(blended.items(), key=lambda item: (-item[1], item[0]))


def weighed(words: list[tuple[int, float]], cover: dict[int, float]) -> list[tuple[int, float]]:
    """BM25 over the query's best, times the share of the query the memory holds (lexical.coverage)."""
    best = max((score for _, score in words), default=0.0) or 1.0
    return [(label, score / best * cover.get(label, 0.0)) for label, score in words]


def rest_rank(store: int) -> int:
    """Where the rest of the store begins for a query (1 is its best memory): the tenth, or just past
    halfway down a store of fewer than 18 memories (a small store's tenth is its worst, and its second
    may be a note as near as the best: "rate limiting" meets "the FX rate feed" as closely as the Amazon
    note), the second at least."""
    return min(REST, max(2, store // 2 + 1))


def matched(meaning: list[tuple[int, float]], store: list[tuple[int, float]], cover: dict[int, float],
            unknown_name: bool = False, leaned: list[tuple[int, float]] | None = None) -> bool:
    """Whether the query has a real match (see REST): `meaning` within the filters, `store` the best
    2 x REST of the whole store (all of it when it holds fewer); `unknown_name`: the query names a name
    the store holds nowhere (unknown_name()); `leaned`: the best 2 x REST of the whole store for the query
    without the word leaned_on() gives (None when it gives none)."""
    if max(cover.values(), default=0.0) >= MATCH_COVERAGE:
        return True
    close = CLOSE_UNKNOWN_NAME if unknown_name else CLOSE
    best = max((score for _, score in meaning), default=0.0)
    return _near(best, store, close) and (leaned is None or _near(leaned[0][1] if leaned else 0.0, leaned, close))


def _near(best: float, store: list[tuple[int, float]], close: float) -> bool:
    """Whether a best cosine is close, or stands STAND_OUT above the rest of the store (rest_rank())."""
    rank = rest_rank(len(store))
    return best >= close or len(store) >= rank and best - store[rank - 1][1] >= STAND_OUT


def leaned_on(catalog: Catalog, query: str) -> str | None:
    """The word a match of this query must not hang on (see LEAN_WORDS and commonest())."""
    terms = lexical.words(query)
    if len(terms) < LEAN_WORDS:
        return None
    lexicon = catalog.lexicon
    return commonest({term: lexicon.frequency(term) for term in terms}, lexicon.memories())


def commonest(counts: dict[str, int], memories: int) -> str | None:
    """Of the query's words and how many memories hold each (lexical.Lexicon.frequency), the commonest
    held by at most LEAN_SHARE of the store's `memories` (the first of equals). A word held by more is
    what the store is about (the speaker of every turn of a chat), not one a hit stands out by; one held
    by more than lexical.SCORED memories is counted no further, so it counts as held by more."""
    most = min(LEAN_SHARE * memories, lexical.SCORED)
    held = [(count, term) for term, count in counts.items() if count <= most]
    return max(held, key=lambda pair: pair[0])[1] if held else None


def without(query: str, word: str) -> str:
    """The query with a word of it (as lexical.words spells it) left out."""
    return re.sub(rf"\b{re.escape(word)}\b", " ", query, flags=re.IGNORECASE)


def unknown_name(catalog: Catalog, query: str) -> bool:
    """Whether the query names a name (memcli.index.names) that no memory of the store holds."""
    return any(catalog.lexicon.frequency(name) == 0 for name in names(query))


def candidates(k: int) -> int:
    """How many memories each side ranks for a query wanting k."""
    return max(CANDIDATES, min(k, MAX_K))


def word_ranking(catalog: Catalog, query: str, limit: int, filters: Filters) -> list[tuple[int, float]]:
    """BM25 over the query's words and the date words it names (memcli.index.dates)."""
    return lexical.bm25(catalog, lexical.words(query) + query_date_words(query), limit, filters)


def ranked(catalog: Catalog, query: str, *, k: int, filters: Filters, min_score: float | None,
           words: list[tuple[int, float]] | None, meaning: list[tuple[int, float]] | None,
           store: list[tuple[int, float]] | None = None, leaned: list[tuple[int, float]] | None = None) -> Results:
    """Best memories first from the rankings a search made (None: that side did not run); `score` is the
    blend (both), cosine (meaning) or BM25 (words). `store`: the best 2 x REST of the whole store by
    cosine, when filters narrowed `meaning` (the cut-off weighs a hit against the rest of the store);
    `leaned`: the same for the query without the word leaned_on() gives (see matched()). The
    date words a query names reorder what matches but make no match: coverage and the cut-off leave them
    out."""
    k = min(k, MAX_K)
    if words is not None and meaning is not None:
        terms = lexical.words(query)
        cover = lexical.coverage(catalog, terms, filters)
        ranking = fuse([(1 - ALPHA, weighed(words, cover)), (ALPHA, meaning)])
        if min_score is None and not matched(meaning, meaning[:2 * REST] if store is None else store, cover,
                                             unknown_name(catalog, query), leaned):
            return _cut(ranking)
        if min_score is None and ranking:
            min_score = RELATIVE * ranking[0][1]
    else:  # a single side, or hybrid fallen back to words (BM25)
        ranking = words if meaning is None else meaning
    if min_score:
        kept = [(label, score) for label, score in ranking if score >= min_score]
        if not kept:
            return _cut(ranking)
        ranking = kept
    return Results(islice(distinct(hits_of(catalog, ranking, batch=min(k, 1000))), k))


def _cut(ranking: list[tuple[int, float]]) -> Results:
    """No hit, saying the best score the cut left out."""
    results = Results()
    results.under_cut = ranking[0][1] if ranking else None
    return results


def hits_of(catalog: Catalog, ranked: list[tuple[int, float]], batch: int) -> Iterator[Hit]:
    """The ranked labels as hits, read from the catalog `batch` at a time: the k wanted first, more only
    when distinct() left some out (reading a record is most of what a hit costs)."""
    for start in range(0, len(ranked), batch):
        part = ranked[start:start + batch]
        memories = catalog.by_labels(label for label, _ in part)
        yield from (Hit(memories[label], score) for label, score in part if label in memories)
