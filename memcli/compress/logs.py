"""A log made short: each line that tells something new, once; repeats counted; alerts always kept.

A log (and any tool output with no shape of its own: pip, npm, apt, git, cargo, a service's lines)
repeats itself: progress lines that differ by a number, lines said again word for word, lines that
only restate what earlier lines named (apt's `Conf x` after its `Inst x`). What people ask of one is
which versions, files, sizes, counts and warnings it names, and when it started and ended. So:
- progress bars go; a run of lines of one shape keeps its first and last (memcli.compress.repeats);
- a line is kept when it names something no kept line named before (a word, number, path, version),
  and every warning or error line is kept once, with how many times it came;
- the first and the last timestamp stay; the lines between lose theirs.
Which line was dropped is never a guess: the form counts them in a mark.
"""

from __future__ import annotations

import re

from memcli.compress import marks, repeats

_BAR = re.compile(r"^\s*[━─█▏▎▍▌▋▊▉#=\->\s|]*[━█]{3,}")
_TIMESTAMP = re.compile(
    r"^\[?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2})\]?[ \t]+(?=\S)"
)
ALERT = re.compile(r"\b(?:error|ERROR|Error|ERR!|FATAL|[Ff]atal|CRITICAL|[Ff]ailed|FAILED|[Ff]ailure|WARN|WARNING"
                   r"|[Ww]arning|[Dd]eprecat\w*|Traceback|[Ee]xception|denied|refused|timed out|not found"
                   r"|[Cc]annot|[Uu]nable)\b")
_WORD = re.compile(r"\w[\w.+:~/@-]*")


def compress(text: str, *, listing: bool = False) -> str:
    """`listing`: output whose every line may be asked about (ls, git tag, grep): only exact repeats
    and runs where nothing but numbers change are shortened."""
    rows = [r.rstrip() for r in text.split("\n")]
    rows = [r for r in rows if r.strip() and not _BAR.match(r)]
    rows = _first_and_last_stamps(rows)
    if listing:
        return "\n".join(repeats.collapse(rows, keep=ALERT, shape=repeats.number_template))
    rows = repeats.collapse(rows, keep=ALERT)
    out: list[str] = []
    seen: set[str] = set()
    dropped = 0
    for row in rows:
        if marks.MARK.fullmatch(row):
            out.append(row)
            continue
        words = set(_WORD.findall(marks.unmarked(row)))
        if ALERT.search(row) or words - seen:
            out.append(row)
        else:
            dropped += 1
        seen |= words
    if dropped:
        out.append(marks.omitted(dropped, "lines that repeat earlier ones" if dropped > 1 else "line that repeats earlier ones"))
    return "\n".join(out)


def _first_and_last_stamps(rows: list[str]) -> list[str]:
    stamped = [i for i, r in enumerate(rows) if _TIMESTAMP.match(r)]
    if len(stamped) < max(3, len(rows) // 2):
        return rows
    ends = {stamped[0], stamped[-1]}
    return [r if i in ends else _TIMESTAMP.sub("", r, count=1) for i, r in enumerate(rows)]
