"""Splitting long text into memory-sized chunks for `mem ingest`.

Cuts are tried from the most meaningful boundary to the least: markdown headings, blank-line
paragraphs, sentences, lines, spaces, and last a hard cut inside a run longer than the limit. Small
neighbours are packed back together up to the limit, and a heading always travels with the text below
it. Chunks are slices of the input with surrounding whitespace trimmed, so no non-whitespace character
is lost or reordered, and the same input always gives the same chunks (re-ingesting an unchanged file
adds nothing). Headings, blank lines and sentence ends inside fenced code blocks are not boundaries,
and a code block is never cut from the text just before it: that is the sentence saying what the code
is for ("To install, run:"), and a chunk holding the code without it tells a reader nothing. A block
longer than a chunk is cut between its lines, its first piece still opening with that sentence.

`sections` also gives each chunk that does not open with a heading the path of headings it sits
under ("Install > Linux"), so a chunk from the middle of a long section still says where it comes from.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from memcli.errors import InputError

_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*\s+|[。！？]\s*")
_LINE_END = re.compile(r"\n\s*")
_SPACE = re.compile(r"\s+")

Range = tuple[int, int]  # [start, end) character offsets into the text


TITLE_CHARS = 80  # a heading longer than this is cut in a path (one runaway line must not swell every chunk)


def split(text: str, max_chars: int = 1500) -> list[str]:
    """Chunks of at most `max_chars` characters; whitespace-only text gives no chunk."""
    return [chunk for _, chunk in sections(text, max_chars)]


def sections(text: str, max_chars: int = 1500) -> list[tuple[tuple[str, ...], str]]:
    """The chunks of `split`, each with the titles of the headings it sits under, outermost first; empty
    for a chunk that opens with a heading (it says where it is, and its text stays the same when a
    heading above it is renamed)."""
    if max_chars < 1:
        raise InputError("chunk size must be at least 1 character")
    chunker = _Chunker(text, max_chars)
    headings = chunker.headings()
    found, stack, i = [], [], 0
    for a, b in chunker.chunks():
        while i < len(headings) and headings[i][0] <= a:
            position, level, title = headings[i]
            while stack and stack[-1][1] >= level:
                stack.pop()
            stack.append((position, level, title))
            i += 1
        opens_with_heading = bool(stack) and stack[-1][0] == a
        found.append(((), text[a:b]) if opens_with_heading else (tuple(t for _, _, t in stack if t), text[a:b]))
    return found


class _Chunker:
    def __init__(self, text: str, limit: int):
        self.text = text
        self.limit = limit
        self.fenced = _fenced_regions(text)
        self.fence_starts = [a for a, _ in self.fenced]
        # Where each block's fence marker is: a cut there would part the code from its introduction.
        self.fence_openers = {a + len(text[a:a + 4]) - len(text[a:a + 4].lstrip(" ")) for a, _ in self.fenced}

    def headings(self) -> list[tuple[int, int, str]]:
        """(position of the first #, level, title) of every heading outside code, in order."""
        found = []
        for m in _HEADING.finditer(self.text):
            if self._in_fence(m.start()):
                continue
            line_end = self.text.find("\n", m.start())
            line = self.text[m.start():len(self.text) if line_end < 0 else line_end].strip()
            level = len(line) - len(line.lstrip("#"))
            title = line.strip("#").strip()
            if len(title) > TITLE_CHARS:
                title = title[:TITLE_CHARS - 1].rstrip() + "…"
            found.append((self.text.index("#", m.start()), level, title))
        return found

    def chunks(self) -> list[Range]:
        units: list[Range] = []
        for heading, body in self._sections():
            units.extend(self._section_units(heading, body))
        return self._pack(units, self.limit)

    def _sections(self) -> list[tuple[Range | None, Range]]:
        """(heading line, body) pairs; headings with an empty body join the heading below them."""
        starts = [m.start() for m in _HEADING.finditer(self.text) if not self._in_fence(m.start())]
        sections: list[tuple[Range | None, Range]] = []
        if not starts or starts[0] > 0:
            sections.append((None, (0, starts[0] if starts else len(self.text))))
        pending: int | None = None
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(self.text)
            line_end = self.text.find("\n", start, end)
            line_end = end if line_end < 0 else line_end
            heading_start = start if pending is None else pending
            if not self.text[line_end:end].strip() and i + 1 < len(starts):
                pending = heading_start
                continue
            pending = None
            sections.append(((heading_start, line_end), (line_end, end)))
        return sections

    def _section_units(self, heading: Range | None, body: Range) -> list[Range]:
        start = heading[0] if heading else body[0]
        whole = self._strip(start, body[1])
        if whole is None:
            return []
        if whole[1] - whole[0] <= self.limit:
            return [whole]
        content = self._strip(*body)
        # The heading is glued to the first piece of its body, so that piece gets less room.
        room = self.limit - (content[0] - whole[0]) if heading and content else 0
        if room < self.limit // 2:
            return self._pieces(whole[0], whole[1], 1, self.limit)
        pieces = self._pieces(content[0], content[1], 1, room)
        return [(whole[0], pieces[0][1]), *pieces[1:]]

    def _pieces(self, start: int, end: int, level: int, limit: int) -> list[Range]:
        """Stripped spans of text[start:end], each at most `limit`, cut at the coarsest boundary that works."""
        span = self._strip(start, end)
        if span is None:
            return []
        if span[1] - span[0] <= limit:
            return [span]
        if level >= len(_CUTTERS):
            hard = (self._strip(a, min(a + limit, span[1])) for a in range(span[0], span[1], limit))
            return [piece for piece in hard if piece]
        cuts = [c for c in _CUTTERS[level](self, *span) if span[0] < c < span[1] and c not in self.fence_openers]
        if not cuts:
            return self._pieces(*span, level + 1, limit)
        bounds = [span[0], *cuts, span[1]]
        units: list[Range] = []
        for a, b in zip(bounds, bounds[1:]):
            units.extend(self._pieces(a, b, level + 1, limit))
        return self._pack(units, limit)

    def _pack(self, units: list[Range], limit: int) -> list[Range]:
        packed: list[Range] = []
        for unit in units:
            if packed and unit[1] - packed[-1][0] <= limit:
                packed[-1] = (packed[-1][0], unit[1])
            else:
                packed.append(unit)
        return packed

    def _strip(self, start: int, end: int) -> Range | None:
        while start < end and self.text[start].isspace():
            start += 1
        while end > start and self.text[end - 1].isspace():
            end -= 1
        return (start, end) if start < end else None

    def _in_fence(self, pos: int) -> bool:
        i = bisect_left(self.fence_starts, pos) - 1
        return i >= 0 and pos < self.fenced[i][1]

    def _ends(self, pattern: re.Pattern, start: int, end: int) -> list[int]:
        return [m.end() for m in pattern.finditer(self.text, start, end) if not self._in_fence(m.start())]

    def _paragraphs(self, start: int, end: int) -> list[int]:
        return self._ends(_BLANK_LINES, start, end)

    def _sentences(self, start: int, end: int) -> list[int]:
        return self._ends(_SENTENCE_END, start, end)

    def _lines(self, start: int, end: int) -> list[int]:
        return [m.end() for m in _LINE_END.finditer(self.text, start, end)]

    def _words(self, start: int, end: int) -> list[int]:
        return [m.end() for m in _SPACE.finditer(self.text, start, end)]


# Index 0 is the heading level, handled by _sections; _pieces starts at paragraphs.
_CUTTERS = (None, _Chunker._paragraphs, _Chunker._sentences, _Chunker._lines, _Chunker._words)


def _fenced_regions(text: str) -> list[Range]:
    """Spans of fenced code blocks (an unclosed fence runs to the end)."""
    regions: list[Range] = []
    opened: tuple[int, str] | None = None
    for m in _FENCE.finditer(text):
        if opened is None:
            opened = (m.start(), m.group(1))
        elif m.group(1) == opened[1]:
            regions.append((opened[0], m.end()))
            opened = None
    if opened is not None:
        regions.append((opened[0], len(text)))
    return regions
