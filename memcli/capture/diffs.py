"""An edit event as a real unified diff, with the line numbers the change has in the file.

Each client says what it changed in its own way:
- Claude Code's Edit/Write answer with `structuredPatch` (hunks with their line numbers): used as they are.
  Without it (an older client, MultiEdit, a failure) only `old_string`/`new_string` are known: the hunk is
  placed by finding the new text in the file as it is now, and widened to whole lines, so a change in the
  middle of a line shows that line before and after, and a fragment without a final newline does not run
  the removed and added lines together.
- Gemini CLI's replace/write_file answer with `fileDiff`, a unified diff of the whole file.
- Codex's apply_patch sends its patch (`*** Update File:` sections whose hunks carry no line numbers): each
  hunk is placed by finding its new side in the file as it is now; added, deleted and moved files are
  named as such.
A hunk that cannot be placed (the file changed again since, or it is gone) says so in its header instead
of a made-up number. Files are read only inside the session's folder, and only regular files.
"""

from __future__ import annotations

import difflib
import os
import re

MAX_READ = 4 * 1024 * 1024
HEADER = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
NO_NEWLINE = "\\ No newline at end of file\n"


def from_structured(name: str, hunks: list) -> str:
    """Claude Code's structuredPatch ({oldStart, oldLines, newStart, newLines, lines}) as a unified diff."""
    out = [f"--- a/{name}\n", f"+++ b/{name}\n"]
    for hunk in hunks:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            continue
        numbers = [hunk.get(k) for k in ("oldStart", "oldLines", "newStart", "newLines")]
        if not all(isinstance(n, int) for n in numbers):
            continue
        out.append("@@ -{},{} +{},{} @@\n".format(*numbers))
        out += [line if line.endswith("\n") else line + "\n" for line in hunk["lines"] if isinstance(line, str)]
    return "".join(out) if len(out) > 2 else ""


def from_file_diff(name: str, diff: str) -> str:
    """Gemini's fileDiff with mem's a/ b/ labels (Gemini labels the sides Current and Proposed)."""
    lines = diff.splitlines(True)
    start = next((i for i, line in enumerate(lines) if line.startswith("--- ")), None)
    if start is None or start + 1 >= len(lines) or not lines[start + 1].startswith("+++ "):
        return diff
    return "".join([f"--- a/{name}\n", f"+++ b/{name}\n", *lines[start + 2:]])


def from_replacements(name: str, edits: list[tuple[str, str]], current: str | None) -> str:
    """old→new replacements, placed in the file's current text (which holds the new strings)."""
    placed, unplaced = [], []
    for old, new in edits:
        at = current.find(new) if current is not None and new else -1
        (placed if at >= 0 else unplaced).append((at, old, new))
    out, delta = [], 0
    for at, old, new in sorted(placed):
        begin = current.rfind("\n", 0, at) + 1
        end = current.find("\n", at + len(new))
        end = len(current) if end < 0 else end + 1
        new_block = current[begin:end]
        old_block = current[begin:at] + old + current[at + len(new):end]
        first = current.count("\n", 0, begin) + 1
        out += _hunks(old_block, new_block, first - delta, first)
        delta += new_block.count("\n") - old_block.count("\n")
    for _, old, new in unplaced:
        out += _unplaced(_lines(old), _lines(new))
    return _with_names(name, name, out)


def from_codex_patch(patch: str, read) -> tuple[str, list[tuple[str, str, str | None]]]:
    """The diff of a Codex patch, and what it did to each file: (action, path, moved to). `read(path)` is
    the file's current text or None."""
    parts, files = [], []
    for action, path, dest, hunks in _sections(patch):
        files.append((action, path, dest))
        if action == "add":
            added = [line[1:] for hunk in hunks for line in hunk[1] if line.startswith("+")]
            body = [f"@@ -0,0 +1,{len(added)} @@\n", *(f"+{line}\n" for line in added)]
            parts.append(_with_names(None, path, body))
        elif action == "delete":
            parts.append(f"--- a/{path}\n+++ /dev/null\n")
        else:
            parts.append(_with_names(path, dest or path, _placed_hunks(hunks, read(dest or path))))
    return "".join(parts), files


def _placed_hunks(hunks: list, current: str | None) -> list[str]:
    lines = current.splitlines() if current is not None else None
    out, delta, cursor = [], 0, 0
    for _, body in hunks:
        old = [line[1:] for line in body if line[:1] in (" ", "-", "")]
        new = [line[1:] for line in body if line[:1] in (" ", "+", "")]
        at = _find(lines, new, cursor) if lines is not None and new else -1
        changed = [f"{line}\n" if line[:1] in " +-" else f" {line}\n" for line in body]
        if at < 0:
            out.append(f"@@ -?,{len(old)} +?,{len(new)} @@ (not found in the file as it is now)\n")
        else:
            out.append(f"@@ -{at + 1 - delta},{len(old)} +{at + 1},{len(new)} @@\n")
            cursor = at + len(new)
        out += changed
        delta += len(new) - len(old)
    return out


def _sections(patch: str) -> list[tuple[str, str, str | None, list]]:
    """A Codex patch's file sections: (add|delete|update, path, move-to path, [(header, lines)])."""
    marks = {"*** Add File: ": "add", "*** Delete File: ": "delete", "*** Update File: ": "update"}
    sections = []
    for line in patch.splitlines():
        mark = next((m for m in marks if line.startswith(m)), None)
        if mark:
            sections.append([marks[mark], line[len(mark):].strip(), None, []])
        elif not sections or line.startswith(("*** Begin Patch", "*** End Patch", "*** End of File")):
            continue
        elif line.startswith("*** Move to: "):
            sections[-1][2] = line[len("*** Move to: "):].strip()
        elif line.startswith("@@"):
            sections[-1][3].append((line[2:].strip(), []))
        else:
            if not sections[-1][3]:
                sections[-1][3].append(("", []))
            sections[-1][3][-1][1].append(line)
    return [tuple(s) for s in sections]


def read_inside(cwd: str, path: str) -> str | None:
    """The text of a file the event names, when it is a regular file inside the session's folder."""
    if not cwd or not os.path.isabs(cwd) or not path:
        return None
    root = os.path.realpath(cwd)
    full = os.path.realpath(os.path.join(root, path))
    try:
        if os.path.commonpath([root, full]) != root or not os.path.isfile(full) or os.path.getsize(full) > MAX_READ:
            return None
        with open(full, encoding="utf-8", errors="replace", newline="") as handle:
            return handle.read()
    except (OSError, ValueError):
        return None


def _find(lines: list[str], block: list[str], start: int) -> int:
    for begin in (start, 0):
        for i in range(begin, len(lines) - len(block) + 1):
            if lines[i:i + len(block)] == block:
                return i
    return -1


def _hunks(old: str, new: str, old_first: int, new_first: int) -> list[str]:
    """difflib's hunks of two blocks of whole lines, numbered from where the blocks start in the files."""
    out = []
    for line in list(difflib.unified_diff(old.splitlines(True), new.splitlines(True), n=1))[2:]:
        found = HEADER.match(line)
        if found:
            a, b = int(found.group(1)) + old_first - 1, int(found.group(3)) + new_first - 1
            line = f"@@ -{a}{found.group(2) or ''} +{b}{found.group(4) or ''} @@\n"
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return out


def _unplaced(old: list[str], new: list[str]) -> list[str]:
    body = list(difflib.unified_diff(old, new, n=1))[3:]
    return [f"@@ -?,{len(old)} +?,{len(new)} @@ (not found in the file as it is now)\n", *body]


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(True)]


def _with_names(old: str | None, new: str, body: list[str]) -> str:
    if not body:
        return ""
    return "".join([f"--- a/{old}\n" if old else "--- /dev/null\n", f"+++ b/{new}\n", *body])
