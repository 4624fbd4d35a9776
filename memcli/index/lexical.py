"""Word search: BM25 over SQLite FTS5, scoring at most SCORED memories whatever the store's size.

FTS5 evaluates bm25() for every row matching any query word, so one common word ("Caroline" in a store
of her chats) made each query score most of the store: ~10 ms at 10k memories and ten times that at
100k, for rows that rank last. So when more than SCORED memories match, the query keeps its rarest
words, rarest first, as long as the memories holding them add up to at most SCORED: the words that
decide a ranking are the rare ones (BM25's idf), and a memory that holds only common words ranks
last. When even the rarest word is in more than SCORED memories, the newest SCORED of them are scored.
The meaning side still reads the whole query. Counting a word stops at SCORED + 1 and is kept until
the index changes, so the per-query cost no longer grows with the store.

FTS5's BM25 of a query is a sum over its words, each word's part computed with that word's own idf
(fts5_aux.c), so each word is scored on its own, by FTS5, and the parts are added up here: the same
scores as one OR query of the words, bit for bit. A long-lived process (MCP, `mem search -`) keeps each
word's scores until the index changes, so a query of words seen before costs a few dictionary
lookups; and one word at a time is cheaper for FTS5 too than merging the words of an OR query.
"""

from __future__ import annotations

import heapq
import math
import re
from typing import Protocol

from memcli.index import db as db_file
from memcli.index.filters import Filters

SCORED = 1000  # the most memories one query's BM25 evaluates (~3 ms)
# What a long-lived process keeps of words, at most (then it starts afresh): the scores of 256 (at most
# SCORED pairs each, ~30 MB in all) and the counts of 65,536 (a few MB).
KEPT_SCORES = 256
KEPT_COUNTS = 1 << 16

TOKEN = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be been but by did do does for from had has have he her his how i if in into is it its "
    "me my of on or our she so that the their them they this to was we were what when where which who whom why "
    "will with would you your".split()
)


def words(text: str) -> list[str]:
    """The distinct searchable words of a text in order, stopwords left out (unless that leaves none)."""
    tokens = TOKEN.findall(text.lower())
    return list(dict.fromkeys([w for w in tokens if w not in STOPWORDS] or tokens))


def match_expression(terms: list[str]) -> str:
    """Each word quoted (no FTS5 syntax errors from user text), OR-ed."""
    return " OR ".join(f'"{w}"' for w in terms)


class Lexicon:
    """How many memories hold each word (up to SCORED + 1) and each word's BM25 scores, through FTS5 (so
    its tokenizer and stemmer apply), kept until the index changes; a long-lived process (MCP,
    `mem search -`) reads each word once."""

    def __init__(self, kept: db_file.Kept, scorer: "Scorer"):
        self.db = kept.db
        self._kept = kept
        self._scorer = scorer

    def matches(self, expression: str) -> int:
        """Memories matching an FTS5 expression, counted up to SCORED + 1 (a scan that stops there)."""
        return self.db.execute("SELECT COUNT(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)",
                               (expression, SCORED + 1)).fetchone()[0]

    def frequency(self, word: str) -> int:
        return self._word("counts", KEPT_COUNTS, word, lambda: self.matches(match_expression([word])))

    def too_common(self, terms: list[str]) -> bool:
        """Whether more than SCORED memories hold one of the terms: the words' own counts decide it when
        one word is held by more, or all of them together by no more; else the memories are counted."""
        counts = [self.frequency(term) for term in terms]
        if max(counts) > SCORED or sum(counts) <= SCORED:
            return max(counts) > SCORED
        return self.matches(match_expression(terms)) > SCORED

    def scores(self, word: str, filters: Filters) -> list[tuple[int, float]]:
        """(label, the word's BM25 part) of the newest SCORED memories holding the word, newest first."""
        return self._word("scores", KEPT_SCORES, (word, filters),
                          lambda: self._scorer.bm25(match_expression([word]), filters, SCORED))

    def _word(self, family: str, most: int, key, compute):
        """What is kept of words: until the index changes, and `most` of a family at most (then afresh),
        as a process that is never written to would otherwise keep every word it was ever asked."""
        kept = self._kept.get(("words", family), dict)
        if key not in kept:
            if len(kept) >= most:
                kept.clear()
            kept[key] = compute()
        return kept[key]

    def memories(self) -> int:
        """How many memories the word index holds (BM25's N), kept until the index changes."""
        return self._kept.get(("words", "memories"), lambda: self.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def rarest(self, terms: list[str]) -> list[str]:
        """The rarest found terms whose memories add up to at most SCORED (at least the rarest one)."""
        kept, total = [], 0
        for n, term in sorted((n, term) for term in terms if (n := self.frequency(term))):
            if kept and total + n > SCORED:
                break
            kept.append(term)
            total += n
        return kept


class Scorer(Protocol):
    """What the lexicon asks of the catalog (memcli.index.queries.CatalogQueries)."""

    def bm25(self, match: str, filters: Filters, scored: int) -> list[tuple[int, float]]: ...


class WordIndex(Protocol):
    lexicon: Lexicon


def bm25(catalog: WordIndex, terms: list[str], limit: int, filters: Filters) -> list[tuple[int, float]]:
    """(label, score) best first (the newer first among equals), higher is better: BM25 over every term,
    or over the rarest ones when more than SCORED memories match (see the module docstring)."""
    if not terms:
        return []
    lexicon = catalog.lexicon
    if lexicon.too_common(terms):
        terms = lexicon.rarest(terms)
    summed: dict[int, float] = {}  # at most SCORED memories: the terms kept are held by no more together
    for term in terms:  # in the query's order, the order FTS5 adds them up in
        for label, score in lexicon.scores(term, filters):
            summed[label] = summed.get(label, 0.0) + score
    return heapq.nlargest(limit, summed.items(), key=lambda item: (item[1], item[0]))


def idf(held: int, memories: int) -> float:
    """BM25's weight of a word `held` by that many of a store's `memories`: a word every memory holds
    weighs little, one only a few hold weighs most."""
    return math.log((memories - held + 0.5) / (held + 0.5) + 1)


def coverage(catalog: WordIndex, terms: list[str], filters: Filters) -> dict[int, float]:
    """Each memory holding a query word → the share of the query's weight that its words carry, each word
    weighed by its idf in the store (a word no memory holds weighs as one held by a single memory: the note
    may say it in other words, as "database hosting" of "Postgres stayed on Crunchy Bridge"; counted as
    weightier, it silenced such two-word queries): an absolute measure of a word match, where BM25 is
    relative to the query's best. "rate limiting" against "the FX rate" is 0.4
    (and that note ranks below one holding both words). Of a query with more than SCORED matches, the
    memories holding only its commonest words, left unscored by bm25(), count as holding none."""
    if not terms:
        return {}
    lexicon = catalog.lexicon
    n = lexicon.memories()
    weights = {term: idf(max(1, lexicon.frequency(term)), n) for term in terms}
    whole = sum(weights.values()) or 1.0
    held: dict[int, float] = {}
    for term in lexicon.rarest(terms) if lexicon.too_common(terms) else terms:
        for label, _ in lexicon.scores(term, filters):
            held[label] = held.get(label, 0.0) + weights[term]
    return {label: weight / whole for label, weight in held.items()}
