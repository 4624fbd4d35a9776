"""A client's JSON settings file, read and written back the way its owner keeps it.

These files are someone else's (the user's, their dotfiles', their team's): mem changes only its own entries
and must not change anything else about them. So a write goes through the symlink to the file it names (a
dotfiles checkout stays linked), keeps the file's permissions (`~/.claude.json` holds an account and
prompt history, 0600), refuses a file its owner made read-only, keeps the indentation and final newline it
had, and writes every number as it was written: a number is read as its own text, so `1e400` goes back as
`1e400`, never as `Infinity`, which is not JSON and would make the client read none of its settings.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from memcli.errors import InputError
from memcli.util.fsutil import atomic_write


class Settings:
    """One settings file: its data (`data`, a dict) and how it was written (`style`)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.exists = self.path.is_file()
        text = self._text() if self.exists else ""
        self.style = _style(text)
        self.data = _parse(text, self.path) if text.strip() else {}

    def _text(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {self.path} ({exc}); mem leaves it as it is") from None

    def save(self) -> None:
        write_text(self.path, dumps(self.data, *self.style))

    def remove(self) -> None:
        """The file held nothing but what mem took out: it goes (a symlink stays, naming an empty object,
        since the file it names is not mem's to delete)."""
        if self.path.is_symlink():
            write_text(self.path, dumps({}, *self.style))
        else:
            self.path.unlink()


def write_text(path: Path, text: str) -> None:
    """Replace the file's text at once: through a symlink, with the file's mode, refusing a read-only file."""
    target = Path(os.path.realpath(path))
    mode = None
    if target.exists():
        mode = stat.S_IMODE(target.stat().st_mode)
        if not mode & stat.S_IWUSR:
            raise InputError(f"{path} is read-only; mem leaves it as it is (make it writable, or add mem's "
                             "entries by hand)")
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, text, mode=mode)
    if mode is not None:
        os.chmod(target, mode)  # exactly as it was, whatever the umask took from the new file


def dumps(value, indent: str | None = "  ", newline: bool = True, spaced: bool = True) -> str:
    """JSON text of `value` (numbers read by `_parse` come back as they were written)."""
    return _dump(value, indent, 0, spaced) + ("\n" if newline else "")


def _dump(value, indent: str | None, depth: int, spaced: bool) -> str:
    if isinstance(value, dict):
        items = [f"{json.dumps(str(k), ensure_ascii=False)}{': ' if spaced or indent else ':'}"
                 f"{_dump(v, indent, depth + 1, spaced)}" for k, v in value.items()]
        return _wrap("{", "}", items, indent, depth, spaced)
    if isinstance(value, list):
        return _wrap("[", "]", [_dump(v, indent, depth + 1, spaced) for v in value], indent, depth, spaced)
    if isinstance(value, Number):
        return value.text
    return json.dumps(value, ensure_ascii=False)


def _wrap(start: str, end: str, items: list[str], indent: str | None, depth: int, spaced: bool) -> str:
    if not items:
        return start + end
    if indent is None:
        return start + (", " if spaced else ",").join(items) + end
    inner = "\n" + indent * (depth + 1)
    return start + inner + ("," + inner).join(items) + "\n" + indent * depth + end


def _parse(text: str, path: Path) -> dict:
    try:
        data = json.loads(text, parse_float=Number, parse_constant=_not_json)
    except ValueError as exc:
        raise InputError(f"cannot read {path} as JSON ({exc}); mem leaves it as it is") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a JSON object; mem leaves it as it is")
    return data


class Number:
    """A JSON number with a fraction or exponent, kept as its text (a float would turn 1e400 into inf)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __eq__(self, other) -> bool:
        return isinstance(other, Number) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def _not_json(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _style(text: str) -> tuple[str | None, bool, bool]:
    """(indent, final newline, spaces after separators) of the text; a new file gets two spaces."""
    if not text.strip():
        return "  ", True, True
    found = re.search(r"\n([ \t]+)\S", text)
    indent = found.group(1) if found else None
    return indent, text.endswith("\n"), indent is not None or bool(re.search(r'":\s', text))
