"""The guard of a part compressed by its kind: nothing invented, kept code byte-exact, nothing dropped
that the kind protects. A part it rejects stays raw (memcli.compress.bykind), never something worse.

- Invented: every identifier, path, number and quoted string of the form (less the marks of
  memcli.compress.marks) is one of the raw text's; a quoted string occurs in the raw as it is.
- Byte-exact: code, a diff's changed lines and a shell command are kept as whole lines of the raw.
- Protected: the lines a kind's method names (a test run's summary, an exception's line, ...) are in
  the form.
"""

from __future__ import annotations

import re
from typing import Iterable

from memcli.compress.marks import unmarked

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


def invented(raw: str, form: str) -> list[str]:
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


def check(raw: str, form: str, kind: str, protected: Iterable[str] = ()) -> str | None:
    """None when form may stand for raw, else why not."""
    if not form.strip():
        return "empty result"
    new = invented(raw, form)
    if new:
        return "invented " + ", ".join(repr(t) for t in new)
    altered = altered_lines(raw, form, kind)
    if altered:
        return "altered " + ", ".join(repr(r[:60]) for r in altered)
    lost = [p for p in protected if p not in form]
    if lost:
        return "lost " + ", ".join(repr(p[:60]) for p in lost[:3])
    return None
