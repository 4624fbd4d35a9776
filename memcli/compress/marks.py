"""The only words a compressed form may say that its raw text does not: how much it left out.

Every other word of a form is taken from the raw text (memcli.compress.guard checks it). A count of
what was left out ("[... 12 similar lines]", "[... 8 frames in libraries]", a line seen 3 times "[x3]",
a file's "[+12 -3]" lines) is the reader's cue that there is more in `--raw`, so it is said in one
fixed shape that the guard can tell from the text and leave out of its check.
"""

from __future__ import annotations

import re

MARK = re.compile(r"\[\.\.\. \d+ [a-z ]+\]| \[x\d+\]| \[\+\d+ -\d+\]")


def omitted(count: int, what: str) -> str:
    """A line saying how many `what` (plural, lower case) were left out here."""
    return f"[... {count} {what}]"


def repeated(count: int) -> str:
    """The suffix of a line kept once for `count` occurrences."""
    return f" [x{count}]"


def changes(added: int, removed: int) -> str:
    """The suffix of a file's line in a diff: lines added and removed."""
    return f" [+{added} -{removed}]"


def unmarked(text: str) -> str:
    return MARK.sub("", text)
