"""The words compression dropped, marked: a memory's raw text and its compressed form as runs of text,
each plain or marked, for the two columns of a memory's page.

A word of the raw that the compressed form does not keep in order is dropped; a word of the compressed
form that the raw does not have there is added (the counts a form by kind writes, "[12 lines]", or a
facts line's keys). Words are compared without case (prune may capitalise a sentence's new first word);
punctuation counts as words of its own. A text of more than MAX_WORDS words is not compared (the
matching grows with the square of the length): the page says so instead.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

TOKEN = re.compile(r"\s+|\w+(?:['’]\w+)*|[^\w\s]")
MAX_WORDS = 20_000


@dataclass(frozen=True)
class Marked:
    raw: list[tuple[str, bool]]  # (text, dropped)
    short: list[tuple[str, bool]]  # (text, added)
    dropped: int
    added: int


def marked(raw: str, short: str) -> Marked | None:
    """The two texts as runs, or None when they are too long to compare."""
    raw_tokens, short_tokens = TOKEN.findall(raw), TOKEN.findall(short)
    raw_words = [n for n, token in enumerate(raw_tokens) if not token.isspace()]
    short_words = [n for n, token in enumerate(short_tokens) if not token.isspace()]
    if max(len(raw_words), len(short_words)) > MAX_WORDS:
        return None
    matcher = difflib.SequenceMatcher(None, [raw_tokens[n].casefold() for n in raw_words],
                                      [short_tokens[n].casefold() for n in short_words], autojunk=False)
    kept_raw, kept_short = set(), set()
    for a, b, size in matcher.get_matching_blocks():
        kept_raw.update(raw_words[a:a + size])
        kept_short.update(short_words[b:b + size])
    return Marked(_runs(raw_tokens, kept_raw), _runs(short_tokens, kept_short),
                  len(raw_words) - len(kept_raw), len(short_words) - len(kept_short))


def _runs(tokens: list[str], kept: set[int]) -> list[tuple[str, bool]]:
    """Neighbouring tokens of one kind as one run; a space between two marked words is marked with them."""
    marks = []
    for n, token in enumerate(tokens):
        if token.isspace():  # one token holds a whole run of spaces: its neighbours are words
            marks.append(0 < n < len(tokens) - 1 and n - 1 not in kept and n + 1 not in kept)
        else:
            marks.append(n not in kept)
    runs: list[tuple[str, bool]] = []
    for token, mark in zip(tokens, marks):
        if runs and runs[-1][1] == mark:
            runs[-1] = (runs[-1][0] + token, mark)
        else:
            runs.append((token, mark))
    return runs
