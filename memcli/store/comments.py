"""The comments a person wrote in a memory file, put back when mem rewrites it.

A memory file is plain YAML that people edit and commit. A YAML loader drops comments, so without this
a rewrite (`mem tag`, a version link, compression, `mem edit`) would delete them without a word; a
refusal would block mem's own work on every file someone annotated. So they are kept: each comment is
found with the YAML scanner (what lies between tokens, so a `#` inside the raw text or a quoted value
is never taken for one) and tied to the top-level key it belongs to; the new file gets it back in the
same place: above its key, at the end of its key's line, or at the end of the file. A comment from
inside a value that mem writes its own way (a list written one item a line) goes just above that key,
and one on a key the new file no longer has goes at the end. What the file says never changes: if
putting a comment back would change it, every comment goes at the top of the file instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from memcli.store import yamlfile

_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*[ \t]+(#[^\n]*)")


@dataclass(frozen=True)
class Comment:
    text: str  # as written, from its `#`
    key: str | None  # the top-level key it belongs to; None after the last key (the file's end)
    inline: bool = False  # at the end of its key's own line


def comments_of(text: str) -> list[Comment]:
    """The comments of a memory file's text, in order; none for a text YAML cannot scan."""
    if "#" not in text:
        return []
    try:
        tokens = list(yaml.scan(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return []
    keys = _top_keys(tokens)
    found: list[tuple[int, str]] = []
    for before, after in zip(tokens, tokens[1:]):
        found += _in_gap(text, before.end_mark.index, after.start_mark.index)
        if isinstance(before, yaml.ScalarToken) and before.style in ("|", ">"):
            header = _BLOCK_HEADER.match(text, before.start_mark.index)
            if header:
                found.append((header.start(1), header.group(1).rstrip("\r")))
    comments = []
    for position, comment in sorted(found):
        line_start = text.rfind("\n", 0, position) + 1
        owner = next((key for key in reversed(keys) if key[0] <= position), None)
        if text[line_start:position].strip():  # after something on its line
            inline = owner is not None and text.count("\n", owner[0], position) == 0
            comments.append(Comment(comment, owner[1] if owner else None, inline))
        elif position > line_start and owner is not None:  # indented: inside the value of `owner`
            comments.append(Comment(comment, owner[1]))
        else:  # a line of its own: it goes with the key below it
            below = next((key for key in keys if key[0] > position), None)
            comments.append(Comment(comment, below[1] if below else None))
    return comments


def with_comments(text: str, comments: list[Comment]) -> str:
    """A memory file's fresh text (no comments) with `comments` put back (see the module docstring)."""
    if not comments:
        return text
    tokens = list(yaml.scan(text, Loader=yaml.SafeLoader))
    lines = text.splitlines(keepends=True)
    places = {name: (line, one_line) for line, name, one_line in _key_lines(text, tokens)}
    above: dict[int, list[str]] = {}
    at_end: list[str] = []
    ended: set[int] = set()  # lines given their comment already
    for comment in comments:
        place = places.get(comment.key) if comment.key is not None else None
        if place is None:
            at_end.append(comment.text)
        elif comment.inline and place[1] and place[0] not in ended:
            lines[place[0]] = lines[place[0]].rstrip("\r\n") + "  " + comment.text + "\n"
            ended.add(place[0])
        else:
            above.setdefault(place[0], []).append(comment.text)
    merged = "".join("".join(f"{c}\n" for c in above.get(n, [])) + line for n, line in enumerate(lines))
    merged += "".join(f"{c}\n" for c in at_end)
    if _says(merged) != _says(text):
        merged = "".join(f"{comment.text}\n" for comment in comments) + text
    return merged


def _says(text: str):
    return yamlfile.load(text)


def _top_keys(tokens: list) -> list[tuple[int, str]]:
    """(position, name) of every key of the top-level mapping."""
    found = []
    for key, name in zip(tokens, tokens[1:]):
        if isinstance(key, yaml.KeyToken) and key.start_mark.column == 0 and isinstance(name, yaml.ScalarToken):
            found.append((key.start_mark.index, name.value))
    return found


def _key_lines(text: str, tokens: list) -> list[tuple[int, str, bool]]:
    """(line, name, whether a comment may end that line) of every top-level key: its value ends on the
    key's line, or is a block scalar whose header is there."""
    found = []
    starts = [n for n, token in enumerate(tokens) if isinstance(token, yaml.KeyToken) and token.start_mark.column == 0
              and isinstance(tokens[n + 1], yaml.ScalarToken)]
    for i, n in enumerate(starts):
        key_line = tokens[n].start_mark.line
        end = starts[i + 1] if i + 1 < len(starts) else len(tokens)
        value = [t for t in tokens[n + 3:end] if not isinstance(t, (yaml.BlockEndToken, yaml.StreamEndToken))]
        block = bool(value) and isinstance(value[0], yaml.ScalarToken) and value[0].style in ("|", ">")
        one_line = all(t.end_mark.line == key_line for t in value)
        found.append((key_line, tokens[n + 1].value, block or one_line))
    return found


def _in_gap(text: str, start: int, end: int) -> list[tuple[int, str]]:
    """The comments between two tokens (a gap holds only spaces, line breaks and comments)."""
    found = []
    position = text.find("#", start, end)
    while position >= 0:
        line_end = text.find("\n", position, end)
        line_end = end if line_end < 0 else line_end
        found.append((position, text[position:line_end].rstrip("\r")))
        position = text.find("#", line_end, end)
    return found
