"""A diff, `git show` or `git log -p` made short: what changed where, in the raw's own lines.

What people later ask of a diff is who changed it and why (the commit's header and message), which
files changed and how much (the stat, or a count per file), in which function (the hunk header) and
what a line was before and after. So, per commit: the header lines as they are, the message through
the prose method, the stat lines without their +/- bars; per file: its `+++`/`---` line and any
new/deleted/renamed line; per hunk: its header. Unchanged context lines go. The changed lines stay
exact up to a budget, the most asked-about first (a line replaced by another, a definition added or
removed), and a hunk says how many of its lines it left out. The files and hunks are read by unidiff.
"""

from __future__ import annotations

import re
from typing import Callable

from memcli.compress import marks

BUDGET_SHARE = 0.2  # of the raw characters, for the changed lines
MIN_BUDGET = 300
_COMMIT = re.compile(r"^commit [0-9a-f]{7,40}\b")
_HEADER = re.compile(r"^(?:commit |Merge: |Author: |AuthorDate: |Commit: |CommitDate: |Date: |From: |Subject: )")
_STAT = re.compile(r"^( \S.*?\|\s+(?:\d+|Bin [^|]*))(?: [+-]*)?\s*$")
_STAT_TOTAL = re.compile(r"^ \d+ files? changed")
_FILE_NOTE = re.compile(r"^(?:new file mode|deleted file mode|rename from |rename to |copy from |copy to |Binary files )")
_DEFINITION = re.compile(r"^[+-]\s*(?:(?:async )?def |class |(?:pub(?:\([\w:]+\))? )?(?:fn|struct|enum|impl|trait) "
                         r"|(?:export )?(?:async )?function\b|func |(?:public|private|protected) |@@|[A-Z_]{2,}\s*=)")
_DIFF_START = re.compile(r"^(?:diff --git |--- |Index: )")

Prose = Callable[[str], str]


def compress(text: str, prose: Prose | None = None) -> str:
    rows = text.split("\n")
    starts = [i for i, r in enumerate(rows) if _COMMIT.match(r)] or [0]
    starts[0] = 0
    budget = max(MIN_BUDGET, BUDGET_SHARE * len(text))
    chunks = [rows[a:b] for a, b in zip(starts, starts[1:] + [len(rows)])]
    total = sum(len("\n".join(c)) for c in chunks) or 1
    out: list[str] = []
    for chunk in chunks:
        out += _commit(chunk, prose, budget * len("\n".join(chunk)) / total)
    return "\n".join(out)


def protected(text: str) -> list[str]:
    """Each changed file's path and the stat's total line, which a short form must keep."""
    rows = text.split("\n")
    keep = [r.strip() for r in rows if _STAT_TOTAL.match(r)]
    try:
        keep += [f.path for f in _parsed(_diff_part(rows))]
    except Exception:  # noqa: BLE001 - a diff unidiff cannot read is compressed (and guarded) as it is
        pass
    return keep


def _diff_part(rows: list[str]) -> str:
    first = next((i for i, r in enumerate(rows) if _DIFF_START.match(r)), len(rows))
    return "\n".join(rows[first:]) + "\n"


def _commit(rows: list[str], prose: Prose | None, budget: float) -> list[str]:
    first = next((i for i, r in enumerate(rows) if _DIFF_START.match(r)), len(rows))
    out, message, has_stat = [], [], False
    for row in rows[:first]:
        stat = _STAT.match(row)
        if _HEADER.match(row) or _STAT_TOTAL.match(row):
            out.append(row.rstrip())
            has_stat = has_stat or bool(_STAT_TOTAL.match(row))
        elif stat:
            out.append(stat.group(1).rstrip())
            has_stat = True
        elif row.strip() and row.strip() != "---":
            message.append(row.strip())
    if message:
        text = "\n".join(message)
        at = next((i for i, r in enumerate(out) if not _HEADER.match(r)), len(out))
        short = prose(text) if prose and len(message) > 1 else text
        out[at:at] = ["    " + r for r in short.split("\n")]  # indented, as git shows a message
    if first < len(rows):
        out += _files(rows[first:], budget, has_stat)
    return out


def _files(rows: list[str], budget: float, has_stat: bool) -> list[str]:
    patch = _parsed("\n".join(rows) + "\n")
    chosen = _chosen_changes(patch, budget)
    headers = iter([r for r in rows if r.startswith("@@")])
    out: list[str] = []
    for f, patched in enumerate(patch):
        name = f"--- {patched.source_file}" if patched.is_removed_file else f"+++ {patched.target_file}"
        line = next((r for r in (str(x).rstrip("\n") for x in patched.patch_info) if r.startswith(name[:4])), None)
        out.append((name if line is None else line) + ("" if has_stat else marks.changes(patched.added, patched.removed)))
        out += [r for r in (str(x).rstrip("\n") for x in patched.patch_info) if _FILE_NOTE.match(r)]
        for h, hunk in enumerate(patched):
            out.append(next(headers, "@@"))
            left = 0
            for n, line in enumerate(hunk):
                if line.line_type not in "+-":
                    continue
                if (f, h, n) in chosen:
                    out.append(str(line).rstrip("\n"))
                elif str(line)[1:].strip():
                    left += 1
            if left:
                out.append(marks.omitted(left, "changed lines" if left > 1 else "changed line"))
    return out


def _parsed(text: str):
    """The files and hunks of a diff. A hunk whose last context lines were blank loses them when the
    text around it is trimmed; unidiff is given them back."""
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    try:
        return PatchSet(text)
    except UnidiffParseError:
        return PatchSet(text + "\n" * 3)


def _chosen_changes(patch, budget: float) -> set[tuple[int, int, int]]:
    """The changed lines kept: (file, hunk, line) indexes, most asked-about first, within budget chars."""
    ranked = []
    for f, patched in enumerate(patch):
        for h, hunk in enumerate(patched):
            lines = list(hunk)
            changed = [n for n, line in enumerate(lines) if line.line_type in "+-"]
            small = len(changed) <= 6
            run = 0
            for n in changed:
                text = str(lines[n]).rstrip("\n")
                run = run + 1 if n and lines[n - 1].line_type == lines[n].line_type else 0
                if not text[1:].strip():
                    continue
                if small:
                    rank = 0
                elif _DEFINITION.match(text):
                    rank = 1
                else:
                    rank = 2 if run < 3 else 3
                ranked.append((rank, f, h, n, len(text) + 1))
    chosen, spent = set(), 0.0
    for rank, f, h, n, size in sorted(ranked):
        if spent + size > budget and rank > 0:
            continue
        chosen.add((f, h, n))
        spent += size
    return chosen
