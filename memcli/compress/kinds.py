"""What a text is made of: its kind, and the parts of a mixed text, found without a model.

Developers store tool output as often as prose: diffs, test runs, tracebacks, logs, shell sessions,
code, JSON. Each compresses by its own method (memcli.compress.bykind), so the first step is to cut a
text into segments, each of one kind (DESIGN.md, "Content kinds"):

1. fenced blocks (```lang ... ```) are segments of their own, whatever surrounds them;
2. parts with an unmistakable start run as far as their shape goes: a `$ command` and its output
   (shell), a unified diff or `git show`/`git log -p` (diff, to the end of its last hunk), a Python
   traceback (to its last exception line), a test run (to its summary line);
3. what is left is cut at blank lines and each paragraph is judged by its lines (memcli.compress.lines);
   neighbouring paragraphs of one kind join.
The segments cover the text's lines exactly, in order: joined with "\\n" they are the text. Regular
expressions over lines only, so a 16 KB text takes a millisecond or two.
"""

from __future__ import annotations

import ast
import json
import textwrap
from dataclasses import dataclass

from memcli.compress import lines as L

KINDS = ("prose", "markdown", "code", "diff", "shell", "test_output", "traceback", "log", "json", "table")
MIXED = "mixed"
PROSE_KINDS = frozenset({"prose", "markdown"})
SAMPLE = 90


@dataclass(frozen=True)
class Segment:
    kind: str
    text: str
    lang: str | None = None  # code: its language; a fenced block: the fence's info word


def kind_of(segments: list[Segment]) -> str:
    """The kind of a whole text: its segments' one kind (prose with markdown is markdown), else mixed."""
    kinds = {s.kind for s in segments if s.text.strip()} or {"prose"}
    if kinds <= PROSE_KINDS:
        return "markdown" if "markdown" in kinds else "prose"
    return kinds.pop() if len(kinds) == 1 else MIXED


def detect(text: str) -> str:
    return kind_of(segments(text))


def segments(text: str) -> list[Segment]:
    rows = text.split("\n")
    out: list[tuple[str, int, int, str | None]] = []  # kind, first row, row after the last, lang
    loose = 0
    i = 0
    while i < len(rows):
        found = _region(rows, i)
        if found is None:
            i += 1
            continue
        kind, end, lang = found
        out += _paragraphs(rows, loose, i)
        out.append((kind, i, end, lang))
        i = loose = end
    out += _paragraphs(rows, loose, len(rows))
    return _joined(rows, out)


def _python(rows: list[str]) -> bool:
    """Whether a part is Python source (a module or a function taken out of one): Python's own parser
    says so, asked only when a line looks like a definition or an import."""
    if sum(1 for r in rows if r.strip()) < 3 or not any(L.PY_DEFINITION.match(r) for r in rows):
        return False
    try:
        ast.parse(textwrap.dedent("\n".join(rows)))
    except (SyntaxError, ValueError):
        return False
    return True


def _region(rows: list[str], i: int) -> tuple[str, int, str | None] | None:
    """A part with an unmistakable start at row i: (kind, row after its end, lang), else None."""
    row = rows[i]
    if not L.ANY_START.match(row):
        return None
    fence = L.FENCE.match(row)
    if fence and (fence.group(1)[0] == "`" or i == 0 or not rows[i - 1].strip()):
        end = next((j for j in range(i + 1, len(rows)) if rows[j].strip().startswith(fence.group(1))), len(rows) - 1)
        body = rows[i + 1:end]
        info = fence.group(2).strip().split()[0].lower() if fence.group(2).strip() else None
        kind, lang = L.FENCE_KINDS.get(info, (None, info)) if info else (None, None)
        if kind is None:
            kind, lang = block_kind(body, lang)
            if kind in PROSE_KINDS and info is None:
                kind = "code"  # a fence says: take this as it is
        return kind, end + 1, lang
    if L.PROMPT.match(row):
        end = i + 1
        while end < len(rows) and not L.PROMPT.match(rows[end]) and not L.FENCE.match(rows[end]):
            end += 1
        return "shell", _trim_blank(rows, i, end), None
    if L.starts_diff(rows, i):
        return "diff", L.diff_end(rows, i), None
    if L.PY_TRACEBACK.match(row):
        return "traceback", L.traceback_end(rows, i), "python"
    if L.TEST_START.match(row) or L.PROGRESS.match(row) and i + 1 < len(rows) and L.TEST_START.match(rows[i + 1]):
        return "test_output", L.test_end(rows, i), None
    return None


def _trim_blank(rows: list[str], start: int, end: int) -> int:
    """A shell segment ends at its last line with text: the blank lines after it go with what follows."""
    while end > start + 1 and not rows[end - 1].strip():
        end -= 1
    return end


def _paragraphs(rows: list[str], start: int, end: int) -> list[tuple[str, int, int, str | None]]:
    """Rows start..end cut at blank lines, each paragraph judged on its own, neighbours of one kind joined."""
    if _python(rows[start:end]):
        return [("code", start, end, "python")]
    found: list[tuple[str, int, int, str | None]] = []
    i = start
    while i < end:
        j = i
        while j < end and rows[j].strip():
            j += 1
        if j > i:
            kind, lang = block_kind(rows[i:j])
            if (found and found[-1][0] in PROSE_KINDS and kind in ("code", "log", "prose", "markdown")
                    and all(r.startswith(("    ", "\t")) for r in rows[i:j])):
                kind, lang = "code", L.language(rows[i:j])  # markdown's indented code block
            elif found and _continues(found[-1][0], kind, rows[i:j]):
                kind, lang = found[-1][0], found[-1][3]
            found.append((kind, i, j, lang))
        i = j
        while i < end and not rows[i].strip():
            i += 1
    return found


def _continues(before: str, kind: str, rows: list[str]) -> bool:
    """Code and logs have blank lines too: after one, a paragraph goes on with it when it is indented
    (the body of a function) or is not plainly prose."""
    if before not in ("code", "log") or kind == before:
        return False
    if kind not in PROSE_KINDS:
        return before == "code" and kind in ("json", "table", "log") or kind == "code"
    return rows[0][:1] in (" ", "\t") or sum(L.is_prose(r) for r in rows) < 0.5 * len(rows)


def _joined(rows: list[str], parts: list[tuple[str, int, int, str | None]]) -> list[Segment]:
    """Segments covering every row: blank rows go to the part before them (or the first part), and
    neighbouring prose, code of one language, or machine output of one kind make one segment."""
    if not parts:
        return [Segment("prose", "\n".join(rows))]
    merged: list[list] = []
    for kind, start, end, lang in parts:
        if merged and _joins(merged[-1], kind, lang):
            merged[-1][2] = end
            if kind == "markdown":
                merged[-1][0] = "markdown"
            continue
        merged.append([kind, start, end, lang])
    merged[0][1] = 0
    for before, after in zip(merged, merged[1:]):
        before[2] = after[1]
    merged[-1][2] = len(rows)
    return [Segment(kind, "\n".join(rows[start:end]), lang) for kind, start, end, lang in merged]


def _joins(last: list, kind: str, lang: str | None) -> bool:
    if last[0] in PROSE_KINDS and kind in PROSE_KINDS:
        return True
    if last[0] == kind == "code":
        last[3] = last[3] or lang
        return True
    return last[0] == kind and kind in ("log", "table", "traceback")


def block_kind(rows: list[str], lang: str | None = None) -> tuple[str, str | None]:
    """The kind of a block of lines with no start of its own, and the language if it is code."""
    text = [r for r in rows if r.strip()]
    if not text:
        return "prose", None
    if len(text) > SAMPLE:  # the head and tail of a long block say what it is, and cost a fixed time
        text = text[:SAMPLE * 2 // 3] + text[-SAMPLE // 3:]
    if _is_json(rows):
        return "json", None
    if any(L.starts_diff(rows, i) for i in range(len(rows))):
        return "diff", None
    if L.count(L.TEST_LINE, text) >= 1 and (L.count(L.TEST_LINE, text) >= 2 or len(text) <= 3):
        return "test_output", None
    if L.is_traceback(text):
        return "traceback", None
    if L.PROMPT.match(text[0]):
        return "shell", None
    if L.is_table(text):
        return "table", None
    if lang or L.STRONG_CODE.match(text[0]):
        return "code", lang or L.language(text)
    size = len(text)
    logged = sum(1 for r in text if L.LOG_LINE.match(r))
    if logged >= max(2, 0.5 * size) or size >= 5 and L.repeated_starts(text) >= 0.4 * size:
        return "log", None
    prose = sum(L.is_prose(r) for r in text)
    marked = sum(1 for r in text if L.MARKDOWN.match(r))
    if prose >= 0.5 * size or size <= 2 and prose:
        return ("markdown" if marked else "prose"), None
    if L.is_config(text):
        return "json", None
    if sum(L.is_code(r) for r in text) >= 0.5 * size and prose < 0.3 * size:
        return "code", L.language(text)
    if marked >= 0.5 * size or size < 3:
        return ("markdown" if marked else "prose"), None
    return "log", None


def _is_json(rows: list[str]) -> bool:
    text = "\n".join(rows).strip()
    if len(text) < 2 or (text[0], text[-1]) not in (("{", "}"), ("[", "]")):
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, (dict, list))
