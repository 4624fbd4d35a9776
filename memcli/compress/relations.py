"""What a number, an amount or a date is about: the word that governs it in its clause.

"should save another $90 a month" and "scheduled Fly machines $90 a month" keep the same span and
say different things: the amount lost its verb. The anchor of a number, money, date or time span is
the nearest word before it in the same clause that is neither a function word nor protected itself
("save" in "save another $90", "grew" in "grew to 48 GB", "opening" in "grand opening on 20 June").
What it counts is already part of the span ("15 dollars", "8 concurrent pages"); a span that opens
its clause, or follows another protected span ("2:35 pm on 16 March"), has no anchor.
The pruner never drops an anchor (nor a quantifier between it and its span), and the guard rejects a
form in which a span no longer has its anchor close before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.compress.spans import Span, find_spans
from memcli.compress.wordlists import FRAMING_WORDS, FUNCTION_WORDS, QUANTIFIERS

ANCHORED_KINDS = frozenset({"number", "date", "time"})
REACH = 4  # words looked back over: "save another $90", "spent about half of it on ..."
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_CLAUSE_BREAK = re.compile(r"[,;:.!?()\[\]{}|=\"“”]|\n")


@dataclass(frozen=True)
class Anchor:
    span: Span
    start: int
    end: int
    word: str
    between: tuple[tuple[int, int], ...]  # quantifiers between the anchor and its span ("another")


def anchors(text: str, spans: list[Span] | None = None) -> list[Anchor]:
    """The anchor of every number, date and time span of text that has one."""
    spans = find_spans(text) if spans is None else spans
    found = []
    previous_end = 0
    for span in spans:
        if span.kind in ANCHORED_KINDS:
            anchor = _anchor(text, span, previous_end)
            if anchor:
                found.append(anchor)
        previous_end = span.end
    return found


def _anchor(text: str, span: Span, floor: int) -> Anchor | None:
    """Walk back word by word from the span, within its clause and not past the previous span."""
    window = text[floor:span.start]
    words = list(_WORD.finditer(window))
    between: list[tuple[int, int]] = []
    position = len(window)
    for m in reversed(words[-REACH:] if len(words) > REACH else words):
        if _CLAUSE_BREAK.search(window, m.end(), position):
            return None
        position = m.start()
        lower = m.group().lower()
        if lower in FUNCTION_WORDS or lower in FRAMING_WORDS:
            continue
        if lower in QUANTIFIERS:
            between.append((floor + m.start(), floor + m.end()))
            continue
        return Anchor(span, floor + m.start(), floor + m.end(), m.group(), tuple(between))
    return None


def unanchored(raw: str, result: str) -> list[str]:
    """The spans of raw whose anchor result no longer has among the REACH words before the span
    ("$90 a month" when "save" is gone), as "<anchor> <span>" phrases. A span may also stand right
    after a KEY= of a facts line, which says what it is."""
    lost = []
    result_words = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(result)]
    lowered = result.lower()
    for anchor in anchors(raw):
        needle = anchor.span.text.lower()
        word = anchor.word.lower()
        if not _anchored_somewhere(lowered, needle, word, result_words):
            lost.append(f"{anchor.word} {anchor.span.text}")
    return list(dict.fromkeys(lost))


def _anchored_somewhere(lowered: str, needle: str, word: str, result_words) -> bool:
    at = lowered.find(needle)
    if at < 0:
        return True  # a lost span is the guard's other rule; it is reported as lost, not here
    while at >= 0:
        # The words of the text before the span, cut where the span starts: in "content-first approach"
        # the anchor "content" is glued to the span "first approach" by its hyphen.
        before = [w for s, e, w in result_words if e <= at][-REACH:] + [m.group() for m in _WORD.finditer(
            lowered, max(0, at - 40), at)][-1:]
        if word in before or lowered[:at].rstrip().endswith("="):
            return True
        at = lowered.find(needle, at + 1)
    return False
