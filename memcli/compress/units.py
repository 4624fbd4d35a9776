"""A text cut into the pieces pruning decides on, and those pieces joined back into clean text."""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from typing import Sequence

from memcli.compress.spans import find_spans
from memcli.providers.protocols import TokenScore

_UNIT = re.compile(r"\s+|[^\W_]+(?:['’\-][^\W_]+)*|(.)\1*", re.S)
_SENTENCE_END = frozenset(".!?…")
_CLAUSE = frozenset(",;:")
_DASHES = frozenset({"-", "--", "–", "—"})


@dataclass
class Unit:
    """A word, a protected span, a punctuation run or whitespace of the raw text."""

    text: str
    kind: str  # word | protected | punct | space
    start: int
    span_kind: str = ""  # for protected units: memcli.spans.Span.kind
    surprisal: float = 0.0
    tokens: int = 0

    @property
    def lower(self) -> str:
        return self.text.lower()


def split_units(text: str) -> list[Unit]:
    units: list[Unit] = []
    position = 0
    for span in find_spans(text) + [None]:
        stop = span.start if span else len(text)
        for m in _UNIT.finditer(text, position, stop):
            piece = m.group()
            kind = "space" if piece.isspace() else "word" if piece[0].isalnum() else "punct"
            # A digit the span patterns missed is still a fact: never a candidate.
            digit = kind == "word" and any(c.isdigit() for c in piece)
            units.append(Unit(piece, "protected" if digit else kind, m.start(), "number" if digit else ""))
        if span:
            units.append(Unit(span.text, "protected", span.start, span.kind))
            position = span.end
    return units


def attach_scores(text: str, units: list[Unit], scores: list[TokenScore]) -> None:
    """A token belongs to the unit holding its first visible character (' health' → 'health')."""
    starts = [u.start for u in units]
    for token in scores:
        first = token.start
        while first < token.end and text[first].isspace():
            first += 1
        index = bisect.bisect_right(starts, first) - 1
        if first == token.end or index < 0 or units[index].kind == "space":
            continue
        unit = units[index]
        unit.tokens += 1
        if math.isfinite(token.surprisal):
            unit.surprisal += token.surprisal


def neighbour(units: Sequence[Unit], index: int, step: int) -> Unit | None:
    """The nearest unit that is not whitespace, before (step -1) or after (step 1) index."""
    at = neighbour_at(units, index, step)
    return None if at is None else units[at]


def neighbour_at(units: Sequence[Unit], index: int, step: int) -> int | None:
    """Where that unit is. Walked, not sliced: it is asked for many words, and a slice per call is
    quadratic on a long text."""
    index += step
    while 0 <= index < len(units):
        if units[index].kind != "space":
            return index
        index += step
    return None


def render(units: Sequence[Unit], keep: Sequence[bool]) -> str:
    """Join the kept units so the result reads cleanly: one space between words, line breaks kept,
    no comma left dangling or doubled, every sentence that keeps a word starts with a capital.
    A full stop or a semicolon is a token that tells the reader only where a clause ends; the
    capital of the next one (or a line break, or the end of the text) tells it as well, so the mark
    goes there. It stays before a name or a number, whose capital or digit would not show the break,
    and "!", "?" and "…" always stay: they say more than where a sentence ends."""
    out: list[str] = []
    kinds: list[str] = []  # word | open | bullet | clause | end | stop (an end whose mark may go)
    runs: list[str] = []  # whitespace runs since the last kept unit ("" marks a dropped unit)
    words_in_sentence = 0

    def emit(piece: str, kind: str) -> None:
        out.append(piece)
        kinds.append(kind)

    def drop_trailing_clause() -> None:
        while kinds and kinds[-1] == "clause":
            out.pop()
            kinds.pop()

    for index, (unit, kept) in enumerate(zip(units, keep)):
        if unit.kind == "space" or not kept:
            runs.append(unit.text if unit.kind == "space" else "")
            continue
        sep = _separator(runs, kinds[-1] if kinds else None)
        runs = []
        mark = unit.text
        if unit.kind == "word" and not words_in_sentence and (not kinds or kinds[-1] in ("end", "stop")):
            mark = mark[0].upper() + mark[1:]  # the sentence's first word may have been dropped
        if kinds and kinds[-1] == "stop" and ("\n" in sep or unit.kind == "word" and mark[0] != mark[0].lower()):
            out[-1] = ""
        if unit.kind != "punct":
            emit(sep + mark, "word")
            words_in_sentence += 1
        elif mark in _DASHES and (not out or "\n" in sep):
            emit(sep + mark, "bullet")
        elif mark in (*_DASHES, ".") and not sep and kinds and kinds[-1] == "word" and _glued(units, keep, index):
            emit(mark, "word")  # inside one name or value: "owner-only", "0.3.x"
        elif mark[0] in _SENTENCE_END:
            if out and out[-1] == ":" and words_in_sentence:
                kinds[-1], words_in_sentence = "end", 0  # "Gina: Thanks!" without "Thanks" is "Gina:"
                continue
            drop_trailing_clause()
            if words_in_sentence:
                emit(mark, "stop" if mark == "." else "end")
                words_in_sentence = 0
        elif mark == ";" and kinds and kinds[-1] == "word":
            emit(mark, "stop")
            words_in_sentence = 0
        elif mark in _CLAUSE or mark in _DASHES:
            if kinds and kinds[-1] == "word":
                emit(mark if mark in _CLAUSE else " " + mark, "clause")
        elif mark in "([{":
            emit(sep + mark, "open")
        elif mark in ")]}":
            if kinds and kinds[-1] == "open":
                out.pop()
                kinds.pop()
            else:
                emit(mark, "word")
        else:
            emit(sep + mark, "word")
    drop_trailing_clause()
    if kinds and kinds[-1] == "stop":
        out.pop()
    return "".join(out).strip()


def _glued(units: Sequence[Unit], keep: Sequence[bool], index: int) -> bool:
    """Whether a dash or a dot joins the kept unit right after it with no space: a part of one word."""
    return index + 1 < len(units) and units[index + 1].kind != "space" and keep[index + 1]


def _separator(runs: list[str], previous: str | None) -> str:
    """Line breaks survive (at most one blank line); any other gap becomes one space."""
    if previous is None:
        return ""
    breaks = max((run.count("\n") for run in runs), default=0)
    if breaks:
        indent = next(run for run in reversed(runs) if "\n" in run).rsplit("\n", 1)[1]
        return "\n" * min(2, breaks) + indent
    if previous == "open" or not runs:
        return ""
    return " "
