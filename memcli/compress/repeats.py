"""Lines that say the same thing again, found by shape: what logs, test runs and listings repeat.

A line's template is the line with what varies in it blanked: numbers, hashes, paths, dotted and
`::` names, quoted strings. A run of three or more lines of one template keeps its first and last line
and says how many went between; a line seen again word for word is kept once and says how often.
"""

from __future__ import annotations

import re
from typing import Callable

from memcli.compress import marks

_VARIABLE = re.compile(r"\"[^\"]*\"|'[^']*'|\S*::[^\s\[]*(?:\[[^\]]*\])?|\S*(?:\d|::|/|\\)\S*|\b[0-9a-f]{7,}\b|[\w-]+\.[\w.-]+")
_SPACES = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+")
_WORDY = re.compile(r"[^\W\d_]{3}")
MIN_RUN = 3


def template(line: str) -> str:
    return _SPACES.sub(" ", _VARIABLE.sub("*", line)).strip()


def number_template(line: str) -> str:
    """The template of a line in a listing, where only numbers vary in a run worth collapsing (a
    progress counter): names differ from line to line and each is the answer to something."""
    shape = _SPACES.sub(" ", _NUMBER.sub("0", line)).strip()
    return shape if _WORDY.search(shape) else ""  # a line that is a number or version is itself the content


def collapse(rows: list[str], *, what: str = "similar lines", keep: re.Pattern | None = None,
             shape: Callable[[str], str] = template) -> list[str]:
    """Runs of one template shortened to their first and last line; exact repeats kept once. Lines
    that `keep` matches are never part of a run."""
    out: list[str] = []
    i = 0
    while i < len(rows):
        j = i + 1
        first = None if keep and keep.search(rows[i]) else shape(rows[i])
        while j < len(rows) and first and rows[j].strip() and shape(rows[j]) == first and not (
                keep and keep.search(rows[j])):
            j += 1
        if j - i >= MIN_RUN and first:
            out += [rows[i], marks.omitted(j - i - 2, what), rows[j - 1]]
        else:
            out += rows[i:j]
        i = j
    return once(out)


def once(rows: list[str]) -> list[str]:
    """Each non-blank line kept at its first place only, with how many times it came."""
    counts: dict[str, int] = {}
    for row in rows:
        if row.strip() and not marks.MARK.fullmatch(row):
            counts[row] = counts.get(row, 0) + 1
    out: list[str] = []
    seen: set[str] = set()
    for row in rows:
        if row in seen:
            continue
        if counts.get(row, 0) > 1:
            seen.add(row)
            out.append(row + marks.repeated(counts[row]))
        else:
            out.append(row)
    return out
