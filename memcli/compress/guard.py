"""The check every compressed form passes before it is stored.

A compressed memory is read instead of the raw one, so it must be smaller (in bytes and in the
reading model's tokens), must keep every protected span of the raw (memcli.compress.spans), must keep
what each number, amount and date is about (its anchor, memcli.compress.relations: "$90 a month"
without "save" reads as a cost), and must not invent facts: no number and no capitalised word (names,
months, weekdays) that the raw lacks.
Spans are compared after lower-casing, reading `_` as a space and collapsing whitespace, so a
`facts` line may write price_observations as "price observations" or "Rate limit" as "rate limit".
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from memcli.compress.relations import unanchored
from memcli.compress.spans import find_spans

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_WORD = re.compile(r"[^\W\d_]+")


def check(
    raw: str,
    result: str,
    count_tokens: Callable[[str], int],
    *,
    allowed: Iterable[str] = (),
) -> str | None:
    """None when result may replace raw, else a short reason. `allowed` lists words the result may
    add (the KEY names of a facts line)."""
    if not result.strip():
        return "empty result"
    if len(result.encode("utf-8")) >= len(raw.encode("utf-8")) or count_tokens(result) >= count_tokens(raw):
        return "not smaller"
    lost = missing_spans(raw, result)
    if lost:
        return "lost " + _listed(lost)
    drifted = unanchored(raw, result)
    if drifted:
        return "lost what these are about: " + _listed(drifted)
    invented = invented_facts(raw, result, allowed)
    if invented:
        return "invented " + _listed(invented)
    return None


def _listed(texts: list[str]) -> str:
    return ", ".join(repr(text) for text in texts[:3]) + (" ..." if len(texts) > 3 else "")


def normalise(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").split())


def missing_spans(raw: str, result: str) -> list[str]:
    """The protected spans of raw that result does not contain (in order, without repeats)."""
    haystack = normalise(result)
    lost: list[str] = []
    for span in find_spans(raw):
        needle = normalise(span.text)
        if needle and needle not in lost and not _contains(haystack, needle):
            lost.append(span.text)
    return lost


def invented_facts(raw: str, result: str, allowed: Iterable[str] = ()) -> list[str]:
    """Numbers and capitalised words of result that raw never mentions."""
    raw_numbers = set(_NUMBER.findall(raw))
    raw_words = {w.lower() for w in _WORD.findall(raw)} | {w.lower() for w in allowed}
    invented = [n for n in _NUMBER.findall(result) if n not in raw_numbers]
    invented += [w for w in _WORD.findall(result) if w[0].isupper() and w.lower() not in raw_words]
    return list(dict.fromkeys(invented))


def _contains(haystack: str, needle: str) -> bool:
    before = r"(?<!\w)" if needle[0].isalnum() else ""
    after = r"(?!\w)" if needle[-1].isalnum() else ""
    return re.search(before + re.escape(needle) + after, haystack) is not None
