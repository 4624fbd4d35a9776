"""The spans of a text that compression must keep word for word.

A fact a reader asks about is nearly always a number, a date, a name, an identifier, a quotation, or
hinges on a negation; a compressed memory that loses one of these gives a wrong answer, not a short one.

Capitalised words count as names, except a capitalised word that starts a sentence (or a line, or
follows a colon) and is a function word or also appears in lower case elsewhere in the text: "The",
"However" and "Discussed" there are ordinary words written with a capital. A sentence-initial word that
is neither ("Caroline said ...") is kept as a name, since guessing wrong the other way loses a fact.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from memcli.compress.wordlists import (
    CONNECTIVES,
    FRAMING_WORDS,
    FUNCTION_WORDS,
    MONTH_ABBREVIATIONS,
    MONTHS,
    NEGATIONS,
    NUMBER_WORDS,
    RELATIVE_DAYS,
    TIME_UNITS,
    WEEKDAYS,
)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str
    text: str


def _alt(words) -> str:
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


# Case-sensitive where it is used: "May" is a month, "may" is not.
_MONTH = rf"(?:{_alt(MONTHS)}|(?:{_alt(MONTH_ABBREVIATIONS)})\.?)(?!\w)"
_DAYNUM = r"\d{1,2}(?:st|nd|rd|th)?"
_TIME_UNIT = _alt(TIME_UNITS)
_TIME_UNITS = frozenset(TIME_UNITS)
_COUNT = rf"(?:\d+|an?|{_alt(NUMBER_WORDS)})"
_COMPARATOR = (
    r"(?:(?:more|less|fewer|longer|shorter|higher|lower|greater|bigger|smaller)\s+than|at\s+(?:least|most)"
    r"|up\s+to|under|over|below|above|about|around|roughly|approximately|almost|nearly|exactly|only"
    r"|within)\s+"
)
_NUMBER = (
    r"(?:[$€£¥₹]\s?)?[-+±~≈−]?\d+(?:[.,:]\d+)*(?:[-–]\d+(?:[.,:]\d+)*)?"  # a range: 0.27-0.30
    r"(?:[A-Za-zµ°%‰]+(?:/[A-Za-z]+)?|\s?(?:%|‰|°[CF]?)|(?:-[^\W\d_]+)+)?"  # 5km, 30%, 3-D, 24-hour
)

# Ordered by priority: where two overlap, the merged span takes the kind of the one listed first.
_PATTERNS: list[tuple[str, re.Pattern]] = [
    ("url", re.compile(r"\b(?:https?|ftp|file|ssh|git|s3|gs)://[^\s<>\"'`]+|\bwww\.[^\s<>\"'`]+", re.I)),
    ("email", re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    ("quote", re.compile(r"^([`~]{3,})[^\n]*\n[\s\S]*?^\1[`~]*[ \t]*$|`[^`\n]{1,200}`|\"[^\"\n]{1,120}\"|“[^”\n]{1,120}”|«[^»\n]{1,120}»|„[^“\n]{1,120}“"
                         r"|(?<!\w)'[^'\n]{1,120}'(?!\w)|‘[^’\n]{1,120}’", re.M)),
    ("path", re.compile(r"(?<![\w/.])(?:~|\.{1,2})?/[\w.@%+~-]+(?:/[\w.@%+~-]*)*|[A-Za-z]:\\[^\s]+"
                        r"|(?<![\w/])[\w.@-]+(?:/[\w.@%+~-]+)+/?")),
    ("date", re.compile(
        r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        r"|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b"
        rf"|(?:\b{_DAYNUM}\s+(?:of\s+)?)?\b(?-i:{_MONTH})(?:\s+{_DAYNUM}\b)?(?:,?\s+\d{{4}}\b)?"
        rf"|\b(?:{_alt(WEEKDAYS)})s?\b"
        rf"|\b(?:{_alt(RELATIVE_DAYS)})\b"
        rf"|\b(?:last|next|this|past|coming|previous|following)\s+(?:{_TIME_UNIT}|{_alt(WEEKDAYS)})\b"
        rf"|\b{_COUNT}\s+(?:{_TIME_UNIT})\s+ago\b"
        r"|\b(?:Q[1-4]|H[12])(?:\s+\d{4})?\b"
        r"|\b(?:19|20)\d{2}s\b",
        re.I,
    )),
    ("time", re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?(?i:[ap]m|[ap]\.m\.)(?!\w))?(?:\s?(?:UTC|GMT|[A-Z]{1,4}T)\b)?"
                        r"|\b\d{1,2}\s?(?i:[ap]m|[ap]\.m\.)(?!\w)")),
    ("identifier", re.compile(
        r"(?<![\w-])--?[A-Za-z][\w-]*(?:=\S+)?"  # command-line flags
        r"|\b[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+(?:\(\))?"  # dotted names, files: os.path.join, a.py
        r"|(?<![\w.])\.[A-Za-z_][\w-]*(?:\.[\w-]+)*"  # dotfiles and domain suffixes: .env, .shop.example.de
        r"|\b[A-Za-z_]\w*_\w*\b(?:\(\))?"  # snake_case, SCREAMING_CASE, __init__
        r"|\b[a-z]+[A-Z][A-Za-z0-9]*\b(?:\(\))?"  # camelCase, iPhone
        r"|\b[A-Za-z]+\d\w*(?:[.-]\w+)*"  # v2, v2.4.0, py311, H100, x86_64
        r"|\b[A-Za-z][\w]*(?:-[\w]+)*-\d[\w.]*\b"  # UTF-8, Windows-1250, GPT-4
        r"|\b(?=[\w.-]*\d)[A-Za-z]\w*(?:-\w+)+(?:\.\w+)*"  # hyphenated names with a digit: all-MiniLM-L6-v2
        r"|\b\w+\(\)"  # call()
        r"|(?<![\w#+])[A-Za-z][\w.]*(?:\+\+|#)(?![\w#+])"  # C++, C#, g++
        r"|\b[A-Z]{2,}\+(?!\w)"  # LGBTQ+
        r"|(?<!\w)[#@][\w-]+"  # #4821, @alice, #general
        r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b"  # commit and content hashes
        r"|\b\w+=\S+"  # key=value settings
    )),
    ("number", re.compile(
        rf"(?:\b{_COMPARATOR})?(?<![\w./:-]){_NUMBER}(?![\w])"
        rf"|(?:\b{_COMPARATOR})?\b(?:{_alt(NUMBER_WORDS)})\b",
        re.I,
    )),
    ("negation", re.compile(rf"\b(?:{_alt(NEGATIONS)})\b|\b\w+n['’]t\b", re.I)),
]

_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*•>#]+\s*|\d+[.)]\s*)*)[\"'“‘(\[]*$")
_UNIT_AFTER_NUMBER = re.compile(r"[ \t]([^\W\d_][\w/-]*)")
_RATE = re.compile(rf"[ \t]+(?:per[ \t]+[^\W\d_][\w-]*|(?:a|an|each|every)[ \t]+(?:{_TIME_UNIT})\b)", re.I)
_NOT_NAMES = FUNCTION_WORDS | FRAMING_WORDS | NEGATIONS | CONNECTIVES
_NOT_UNITS = _NOT_NAMES | {"ago", "later", "earlier", "this", "each", "every", "times", "after", "before", "until",
                            "since", "during", "till", "onwards", "only", "all", "both"}
# Single letters that are units after a number ("8 s", "5 m", "3 d"), though "s", "m", "d" are also the
# tails of contractions among the function words.
_LETTER_UNITS = frozenset("smhdglbk")
_YEAR = re.compile(r"(?:19|20)\d\d")
_GLUED_UNIT = re.compile(r"\d(?:-?[^\W\d_]+)+$|[%‰]$|°[CF]?$")


def find_spans(text: str) -> list[Span]:
    """The protected spans of text, sorted and non-overlapping (overlaps are merged)."""
    return list(_spans_of(text))


@functools.lru_cache(maxsize=32)
def _spans_of(text: str) -> tuple[Span, ...]:
    """Kept for the last few texts: the guard asks for the spans of one raw text three times over (its
    spans, their anchors, its units), and finding them is most of its cost."""
    found: list[tuple[int, int, int, str]] = []
    for priority, (kind, pattern) in enumerate(_PATTERNS):
        for m in pattern.finditer(text):
            start, end = m.start(), _trim(text, m.start(), m.end(), kind)
            if end <= start:
                continue
            if kind == "number" and not _YEAR.fullmatch(m.group()):
                end = _with_unit(text, end, glued=bool(_GLUED_UNIT.search(m.group())))
            found.append((start, end, priority, kind))
    for start, end in _names(text):
        found.append((start, end, len(_PATTERNS), "name"))
    return tuple(_merge(text, found))


def _trim(text: str, start: int, end: int, kind: str) -> int:
    """URLs, paths and dotted names do not end with the sentence's punctuation."""
    if kind in ("url", "path", "identifier", "email"):
        while end > start and text[end - 1] in ".,;:!?'\")]}>":
            if text[end - 1] == ")" and text.count("(", start, end) >= text.count(")", start, end):
                break
            end -= 1
    return end


def _with_unit(text: str, end: int, glued: bool) -> int:
    """A number keeps what it counts or measures and its rate: 5 km, 30 req/s, two session ids,
    40 MB per hour, 1.5 million rows a month."""
    for _ in range(0 if glued else 2):
        m = _UNIT_AFTER_NUMBER.match(text, end)
        word = m.group(1) if m else ""
        unit = word.lower() in _LETTER_UNITS
        if not m or (word.lower() in _NOT_UNITS and not unit) or (word[0].isupper() and not word.isupper()):
            break
        end = m.end()
        # A unit or a plural is what is counted; only an adjective ("8 concurrent pages") needs the next word.
        if len(word) <= 3 or word.endswith("s") or word.lower() in _TIME_UNITS:
            break
    rate = _RATE.match(text, end)
    return rate.end() if rate else end


def _names(text: str):
    capitalised = [m for m in _WORD.finditer(text) if m.group()[0].isupper()]
    initial = {m.start() for m in capitalised if _SENTENCE_START.search(text, max(0, m.start() - 30), m.start())}
    used_as_name = {_base(m.group()) for m in capitalised if m.start() not in initial}
    for m in capitalised:
        word = m.group()
        if word in ("I", "I'm", "I've", "I'd", "I'll"):
            continue
        if m.start() in initial and _is_common_word(text, _base(word), m.end(), used_as_name):
            continue
        yield m.start(), m.end()


def _base(word: str) -> str:
    return re.sub(r"['’]s$", "", word)


def _is_common_word(text: str, base: str, end: int, used_as_name: set[str]) -> bool:
    """Whether a capitalised word that opens a sentence is an ordinary word, not a name."""
    lower = base.lower()
    if lower in _NOT_NAMES:
        return True
    if (base.isupper() and len(base) > 1) or base in used_as_name:
        return False
    follower = _WORD.match(text, end + 1) if text[end:end + 1] == " " else None
    if follower and follower.group()[0].isupper():
        return False
    if re.search(rf"(?<![\w]){re.escape(lower)}(?![\w])", text):
        return True
    return len(base) >= 7 and lower.endswith(("ing", "ed", "ly"))


def _merge(text: str, found: list[tuple[int, int, int, str]]) -> list[Span]:
    found.sort(key=lambda f: (f[0], f[2]))
    merged: list[list] = []
    for start, end, priority, kind in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if priority < last[2]:
                last[2], last[3] = priority, kind
            continue
        merged.append([start, end, priority, kind])
    return [Span(s, e, k, text[s:e]) for s, e, _, k in merged]
