"""Word search: BM25 over SQLite FTS5, on the words that tell memories apart when a query matches many.

FTS5 evaluates bm25() for every row matching any query word, so one common word ("Caroline" in a store
of her chats) made each query score most of the store: ~10 ms at 10k memories and ten times that at
100k, for rows that rank last. So when more than SCORED memories match, the query keeps only its
telling words: a word found in more than COMMON_SHARE of the memories is not telling (its idf is at
most log(9) = 2.2, against 5-9 for the words that decide a ranking; when every word is that common, the
rarest one stays). The meaning side still reads the whole query. Counting a word costs a scan that stops
at the cap, once per word and index state. Measured by forcing it on the small dev stores, this costs
conv-26 about 0.01 of R@10 and conv-30 nothing (README); scoring the same rows exactly (all words,
only the memories holding a telling one) lost the same and took 4x as long.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Protocol

from memcli.index.filters import Filters

COMMON_SHARE = 0.1
SCORED = 2000  # matches that BM25 evaluates in full (~3 ms); above that only those of telling words

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
    """How many memories hold each word, counted through FTS5 (so its tokenizer and stemmer apply) and
    kept until the index changes; a long-lived process (MCP, `mem search -`) counts each word once."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self._state: tuple[int, int] | None = None
        self._counts: dict[str, int] = {}
        self.size = 0

    def check(self) -> None:
        """Forget the counts when the index changed (this connection's writes or another process's)."""
        state = (self.db.execute("PRAGMA data_version").fetchone()[0], self.db.total_changes)
        if state != self._state:
            self._state, self._counts = state, {}
            self.size = self.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]

    @property
    def cap(self) -> int:
        return max(1, int(self.size * COMMON_SHARE))

    def matches(self, expression: str, upto: int = SCORED) -> int:
        """Memories matching an FTS5 expression, counted up to `upto` + 1 (a scan that stops there)."""
        return self.db.execute("SELECT COUNT(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)",
                               (expression, upto + 1)).fetchone()[0]

    def frequency(self, word: str) -> int:
        """Memories holding the word, counted up to cap + 1 (above the cap the exact figure does not matter)."""
        if word not in self._counts:
            self._counts[word] = self.matches(match_expression([word]), self.cap)
        return self._counts[word]

    def telling(self, terms: list[str]) -> list[str]:
        """The terms worth a BM25 evaluation: found, and not common; the rarest one when all are common."""
        found = {term: self.frequency(term) for term in terms}
        found = {term: n for term, n in found.items() if n}
        kept = [term for term, n in found.items() if n <= self.cap]
        return kept or sorted(found, key=found.get)[:1]


class WordIndex(Protocol):
    """What word search asks of the catalog (memcli.index.queries.CatalogQueries)."""

    lexicon: Lexicon

    def bm25(self, match: str, limit: int, filters: Filters) -> list[tuple[int, float]]: ...


def bm25(catalog: WordIndex, terms: list[str], limit: int, filters: Filters) -> list[tuple[int, float]]:
    """(label, score) best first, higher is better: BM25 over every term, or over the telling ones when
    more than SCORED memories match (see the module docstring)."""
    if not terms:
        return []
    lexicon = catalog.lexicon
    lexicon.check()
    if lexicon.matches(match_expression(terms)) > SCORED:
        terms = lexicon.telling(terms)
    return catalog.bm25(match_expression(terms), limit, filters) if terms else []
