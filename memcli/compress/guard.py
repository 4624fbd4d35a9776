"""The check every compressed form passes before it is stored.

A compressed memory is read instead of the raw one, so it must be smaller (in bytes and in the
reading model's tokens), must keep every protected span of the raw (memcli.compress.spans), must keep
what each number, amount and date is about (its anchor, memcli.compress.relations: "$90 a month"
without "save" reads as a cost), and must not invent facts: no number and no capitalised word (names,
months, weekdays) that the raw lacks.
Spans are compared after lower-casing, reading `_` as a space and collapsing whitespace, so a
`facts` line may write price_observations as "price observations" or "Rate limit" as "rate limit".

A part compressed by its kind (memcli.compress.bykind) passes `check_part` instead: nothing invented
(every identifier, path, number and quoted string of the form, less the marks of memcli.compress.marks,
is one of the raw text's; a quoted string occurs in the raw as it is), kept code byte-exact (code, a
diff's changed lines and a shell command are kept as whole lines of the raw), and the lines its kind
protects (a test run's summary, an exception's line, ...) present. A part it rejects stays raw.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable, Iterable

from memcli.compress.marks import unmarked
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


# -- the guard's stamp on a form it passed ------------------------------------------------------------

# Changes whenever the guard learns to reject something it let through: older stamps are checked again.
GUARD_VERSION = "2"


def seal(raw: str, form: str, method: str | None) -> str:
    """The stamp a form gets when it passes the guard (`compression.guarded` in its file): a form whose
    raw text, wording and method are still those stamped needs no second look when the catalog takes its
    file in; one a merge or a hand edit changed, or an older mem made, does not match and is checked."""
    digest = hashlib.sha256("\0".join((GUARD_VERSION, method or "", raw, form)).encode("utf-8"))
    return digest.hexdigest()[:16]


# -- an extractive prose form: the raw text less only words safe to drop -------------------------------

_PIECE = re.compile(r"[^\W_]+")


def drifted(raw: str, form: str) -> str | None:
    """None when the form is the raw text with only words safe to drop left out (memcli.compress.meaning),
    in the raw's order, whatever the case, spacing and punctuation; else where it departs. A `prune`
    form is made so; one edited by hand or reversed by a merge ("DuckDB over SQLite" for "SQLite over
    DuckDB"), or made by an older method that dropped verbs, is not."""
    from memcli.compress.meaning import safe_drops
    from memcli.compress.units import split_units

    units = split_units(raw)
    safe = safe_drops(units)
    pieces: list[str] = []
    droppable: list[bool] = []
    for i, unit in enumerate(units):
        for piece in _PIECE.findall(unit.text.lower()):
            pieces.append(piece)
            droppable.append(i in safe)
    wanted = _PIECE.findall(form.lower())
    states = {0}  # how far into the raw's pieces the form's pieces so far can reach
    for piece in wanted:
        reached, blocked = set(), None
        for at in sorted(states):
            while at < len(pieces):
                if pieces[at] == piece:
                    reached.add(at + 1)
                if not droppable[at]:
                    blocked = blocked or pieces[at]
                    break
                at += 1
        if not reached:
            return f"departs from the raw text at {piece!r}" + (f" (the raw has {blocked!r} there)" if blocked else "")
        states = reached
    for at in sorted(states):
        rest = [p for p, d in zip(pieces[at:], droppable[at:]) if not d]
        if not rest:
            return None
    return f"lost {rest[0]!r}"


# -- the guard of a part compressed by its kind -------------------------------------------------------

_TOKEN = re.compile(r"[\w.~/-]*[/\w][\w.~/-]*")
_QUOTED = re.compile(r"\"[^\"\n]{1,200}\"|(?<!\w)'[^'\n]{1,200}'(?!\w)|`[^`\n]{1,200}`")
_DIFF_CHANGE = re.compile(r"^[+-](?![+-]{2} )")
# Kinds whose kept lines are whole lines of the raw text.
WHOLE_LINES = frozenset({"code", "diff", "traceback"})


def tokens(text: str) -> set[str]:
    """Identifiers, paths and numbers, each also without the punctuation a sentence puts around it,
    and a path's every tail (a form may shorten "/home/dev/src/app/models.py" to "app/models.py")."""
    found = set()
    for token in _TOKEN.findall(text):
        found.add(token)
        found.add(token.strip(".-/~"))
        for at in (i for i, c in enumerate(token) if c == "-"):  # "non-ascii" may be cut at its hyphen
            found.update((token[:at], token[at:], token[at + 1:]))
        at = token.find("/", 1)
        while at != -1:
            found.add(token[at + 1:])
            at = token.find("/", at + 1)
    found.discard("")
    return found


def invented_tokens(raw: str, form: str) -> list[str]:
    """What the form says that the raw text does not (at most a few, in order)."""
    text = unmarked(form)
    known = tokens(raw.lower())  # prose gets a capital where a sentence's first word went: no new word
    new = [t for t in _TOKEN.findall(text) if t.lower() not in known and t.lower().strip(".-/~") not in known]
    new += [q for q in _QUOTED.findall(text) if q not in raw]
    return list(dict.fromkeys(new))[:5]


def altered_lines(raw: str, form: str, kind: str) -> list[str]:
    """Lines of the form that should be whole lines of the raw and are not: every line of code, and
    a diff's changed lines."""
    rows = set(raw.split("\n"))
    wanted = (r for r in unmarked(form).split("\n") if r.strip())
    if kind == "diff":
        wanted = (r for r in wanted if _DIFF_CHANGE.match(r))
    elif kind not in WHOLE_LINES:
        return []
    return [r for r in wanted if r not in rows][:3]


def check_part(raw: str, form: str, kind: str, protected: Iterable[str] = ()) -> str | None:
    """None when a part's form may stand for its raw text, else why not."""
    if not form.strip():
        return "empty result"
    new = invented_tokens(raw, form)
    if new:
        return "invented " + ", ".join(repr(t) for t in new)
    altered = altered_lines(raw, form, kind)
    if altered:
        return "altered " + ", ".join(repr(r[:60]) for r in altered)
    lost = [p for p in protected if p not in form]
    if lost:
        return "lost " + ", ".join(repr(p[:60]) for p in lost[:3])
    return None
