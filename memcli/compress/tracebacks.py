"""A traceback made short: the exception's type and message, where it was raised, and the calls that
led there from the project's own code; the frames inside libraries are counted, not listed.

What a reader asks of a traceback is what was raised with what message, which line of their own code
triggered it and where the exception came from. So every exception line and chain phrase stays
("During handling of the above exception ..."); of the frames, the outermost, the innermost and the
ones in the project's own files stay whole (the `File ...`/`at ...` line and its source line), while
frames in installed libraries (site-packages, node_modules, the runtime) are counted in one mark, and
a long run of own frames keeps its ends. The `^^^^` markers under a source line go. Python, Node,
Java, Go and Rust print these shapes.
"""

from __future__ import annotations

import re

from memcli.compress import marks

_LIBRARY = re.compile(r"site-packages|dist-packages|/lib/python\d|<frozen |node_modules|node:internal|\(node:|"
                      r"^\s+at (?:java|javax|jdk|sun|kotlin|scala)\.|/usr/(?:local/)?(?:lib|go)/|/rustc/|"
                      r"\bruntime/|/\.cargo/registry/|\bstd::|\bcore::")
_PY_FRAME = re.compile(r'^\s+File "[^"]+", line \d+')
_AT_FRAME = re.compile(r"^\s+at \S|^\s+\d+: \S|^\t/\S+:\d+")
_CARETS = re.compile(r"^\s*[~^]+[~^\s]*$")
KEEP_ENDS = (1, 2)  # own frames kept at the start and the end of a long run


def compress(text: str) -> str:
    rows = text.split("\n")
    frames = _frames(rows)
    if not frames:
        return "\n".join(r for r in rows if not _CARETS.match(r))
    keep = _kept_frames(frames)
    out: list[str] = []
    i = 0
    f = 0
    hidden: list[int] = []  # frames left out since the last kept line, own or library
    while i < len(rows):
        if f < len(frames) and frames[f][0] == i:
            start, end, library = frames[f]
            if f in keep:
                _flush(out, hidden)
                out += [r for r in rows[start:end if keep[f] else start + 1] if not _CARETS.match(r)]
            else:
                hidden.append(library)
            i, f = end, f + 1
            continue
        row = rows[i]
        if not _CARETS.match(row) and row.strip():
            _flush(out, hidden)
            out.append(row)
        i += 1
    _flush(out, hidden)
    return "\n".join(out)


def protected(text: str) -> list[str]:
    """Every exception line: a short form keeps what was raised."""
    rows = text.split("\n")
    return [r for r in rows if re.match(r"^[\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\b.*:", r)
            and not r.startswith(" ")]


def _flush(out: list[str], hidden: list[int]) -> None:
    if not hidden:
        return
    libraries = sum(hidden)
    if libraries == len(hidden):
        out.append(marks.omitted(libraries, "frames in libraries" if libraries > 1 else "frame in libraries"))
    else:
        out.append(marks.omitted(len(hidden), "frames" if len(hidden) > 1 else "frame"))
    hidden.clear()


def _frames(rows: list[str]) -> list[tuple[int, int, bool]]:
    """(first row, row after it, in a library) for each frame: its `File`/`at` line and the source
    lines under it (indented deeper, before the next frame or exception line)."""
    frames = []
    i = 0
    while i < len(rows):
        row = rows[i]
        if _PY_FRAME.match(row) or _AT_FRAME.match(row):
            depth = len(row) - len(row.lstrip())
            end = i + 1
            while (end < len(rows) and rows[end].strip() and len(rows[end]) - len(rows[end].lstrip()) > depth
                   and not _PY_FRAME.match(rows[end]) and not _AT_FRAME.match(rows[end])):
                end += 1
            frames.append((i, end, bool(_LIBRARY.search(row))))
            i = end
            continue
        i += 1
    return frames


def _kept_frames(frames: list[tuple[int, int, bool]]) -> dict[int, bool]:
    """The frames kept, each with whether its source line stays: the outermost and innermost frame of
    each traceback (with their source lines: the line that set it off and the one that raised), the
    innermost frame in a library, and the project's own frames (the ends of a long run of them)."""
    keep: dict[int, bool] = {}
    groups: list[list[int]] = []
    for f, (start, _, _) in enumerate(frames):
        if groups and frames[groups[-1][-1]][1] in (start, start - 1):
            groups[-1].append(f)
        else:
            groups.append([f])
    for group in groups:
        own = [f for f in group if not frames[f][2]]
        head, tail = KEEP_ENDS
        keep.update(dict.fromkeys(own if len(own) <= head + tail else own[:head] + own[-tail:], False))
        libraries = [f for f in group if frames[f][2]]
        if libraries:
            keep[libraries[-1]] = False
        keep.update({group[0]: True, group[-1]: True})
    return keep
