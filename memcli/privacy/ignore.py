"""`.memignore`: which files mem must never read, in gitignore syntax.

Rules come from several places, later ones overriding earlier ones as in git (the last matching
pattern decides, and `!pattern` re-includes):

1. built-in defaults (secrets and caches: `.git/`, `.env*`, `*.pem`, `id_rsa*`, `.index/`, ...);
2. the user's file `~/.config/mem/ignore` (`$MEM_CONFIG_DIR/ignore`);
3. `.memignore` at the store root (`Mem.ignore_rules` passes the store's home here: the project folder
   around a `.mem/` store, where people keep such files), and any `.memignore` below it;
4. `.memignore` at the root of an ingest walk, and any `.memignore` deeper in the tree, each one
   applying to its own folder and below (like nested .gitignore files).

Patterns in a `.memignore` are relative to the folder that holds it (`/todo.md` is only that folder's
todo.md). Built-in and user patterns are relative to the *top* folder of the path being checked: the
outermost of the store root and walk root that contains it, else the current directory if it contains
it, else the filesystem root. Patterns without a slash (`*.pem`) match at any depth either way.

As in git, a path inside an ignored directory stays ignored whatever a later `!pattern` says: mem does
not even look inside the directory (nor read a `.memignore` there). To keep one file of a folder, ignore
the folder's contents (`build/*`) rather than the folder (`build/`), then `!build/keep.md`.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from memcli.errors import StoreError
from memcli.paths import user_config_dir

log = logging.getLogger("memcli")

IGNORE_FILE = ".memignore"
BUILTIN_SOURCE = "built-in defaults"
DEFAULTS = (
    ".git/",
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".index/",
    ".mem/",
    "node_modules/",
    "__pycache__/",
    ".venv/",
)


@dataclass(frozen=True)
class Match:
    """The rule that decided a path, like one line of `git check-ignore -v`."""

    ignored: bool
    pattern: str
    source: Path | None  # None for the built-in defaults
    line: int
    path: Path

    @property
    def source_name(self) -> str:
        if self.source is None:
            return BUILTIN_SOURCE
        return _display(self.source)

    def __str__(self) -> str:
        return f"{self.source_name}:{self.line}:{self.pattern}\t{self.path}"


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern  # matches a relative path (folders with a trailing /) that the pattern names
    ignores: bool  # False for a `!` pattern
    text: str
    source: Path | None
    line: int


def _element_regex(pattern, text: str) -> re.Pattern:
    """pathspec's regex also matches everything below a matching folder. mem decides each folder on the
    way down itself (git's own algorithm), so a rule must match the path it is asked about exactly."""
    source = pattern.regex.pattern
    if source == ".":  # `*`, `**`, `/**`: everything
        return re.compile(".")
    if text.endswith("/**"):  # what is inside the folder, not the folder itself
        return re.compile(f"(?:{source}).+\\Z")
    return re.compile(f"(?:{source})\\Z")


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _parse(lines: list[str], source: Path | None) -> list[_Rule]:
    from pathspec import GitIgnoreSpec

    numbered = [(no, line) for no, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    try:
        patterns = GitIgnoreSpec.from_lines([line for _, line in numbered]).patterns
    except ValueError:
        for no, line in numbered:
            try:
                GitIgnoreSpec.from_lines([line])
            except ValueError as exc:
                where = BUILTIN_SOURCE if source is None else str(source)
                raise StoreError(f"{where}:{no}: invalid ignore pattern {line.strip()!r} ({exc})") from None
        raise
    return [
        _Rule(_element_regex(pattern, line.strip()), pattern.include, line.strip(), source, no)
        for (no, line), pattern in zip(numbered, patterns)
        if pattern.include is not None
    ]


def _read_rules(file: Path) -> list[_Rule]:
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read ignore file {file}: {exc}") from None
    return _parse(text.splitlines(), file)


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def local_paths(source: str) -> list[str]:
    """The local paths a memory's `source` names, to be checked against the denylist.

    A plain path (`~` expanded, relative ones against the cwd) names itself, and `path#3` (a chunk
    written by `mem ingest`) also names `path`. A `file:` URI names its path. Any other URI
    (`https://...`, `mailto:...`, `urn:...`) names no file mem could read, and none is returned.
    A one-letter scheme is a Windows drive (`C:\\notes.md`), so a path.
    """
    if _URI.match(source):
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(source)
        if parts.scheme.lower() != "file":
            return []
        return [unquote(parts.path)] if parts.path else []
    path = os.path.expanduser(source)
    head, hash_sign, number = path.rpartition("#")
    return [path, head] if hash_sign and head and number.isdigit() else [path]


def _absolute(path: Path | str) -> str:
    return os.path.abspath(os.fspath(path))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _relative(path: str, folder: str) -> str:
    """`path` relative to `folder`, which contains it; plain strings because this runs per rule per file."""
    return path[len(folder) :].lstrip("/")


class IgnoreRules:
    """The denylist for one store and (optionally) one ingest walk."""

    def __init__(self, store_root: Path | None = None, walk_root: Path | None = None):
        self.store_root = Path(_absolute(store_root)) if store_root else None
        self.walk_root = Path(_absolute(walk_root)) if walk_root else None
        self._roots = [str(r) for r in (self.store_root, self.walk_root) if r is not None]
        self._global = _parse(list(DEFAULTS), None) + _read_rules(user_config_dir() / "ignore")
        self._chains: dict[tuple[str, str], list[tuple[_Rule, str]]] = {}
        self._dir_decisions: dict[tuple[str, str], _Rule | None] = {}
        for root in self._roots:  # a broken root .memignore fails now, not halfway through a walk
            self._chain(root, root)

    @classmethod
    def load(cls, store_root: Path | None = None, walk_root: Path | None = None) -> "IgnoreRules":
        return cls(store_root, walk_root)

    def is_ignored(self, path: Path | str) -> bool:
        found = self.match(path)
        return found is not None and found.ignored

    def match(self, path: Path | str, is_dir: bool | None = None) -> Match | None:
        """The rule that decides `path` (absolute or relative to the cwd), or None if no rule matches.

        A Match with `ignored=False` means a `!pattern` re-included the path. `is_dir` defaults to
        asking the file system.
        """
        given = Path(path)
        target = _absolute(given)
        if is_dir is None:
            is_dir = os.path.isdir(target)
        top = self._top(target)
        if target == top:
            return None
        folder = top
        for part in _relative(os.path.dirname(target), top).split("/"):
            if not part:
                continue
            folder = os.path.join(folder, part)
            rule = self._dir_decision(folder, top)
            if rule is not None and rule.ignores:
                return Match(True, rule.text, rule.source, rule.line, given)
        rule = self._decide(target, top, is_dir)
        if rule is None:
            return None
        return Match(rule.ignores, rule.text, rule.source, rule.line, given)

    def walk(self) -> Iterator[tuple[Path, Match | None]]:
        """Every file under the walk root with the rule that decides it (None: no rule).

        Ignored folders are yielded once, with their Match, and not entered. Files come in a stable
        sorted order. The .memignore files themselves are rules, not content, and are not yielded.
        A link to a file is followed only when it points inside the walk root; linked folders are
        never entered (no loops, no escaping the tree).
        """
        if self.walk_root is None:
            raise ValueError("IgnoreRules.walk needs a walk_root")
        yield from self._walk(self.walk_root)

    def _walk(self, folder: Path) -> Iterator[tuple[Path, Match | None]]:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            log.warning("cannot list %s: %s", folder, exc)
            return
        for entry in entries:
            path = folder / entry.name
            if entry.is_symlink() and not _inside(os.path.realpath(path), str(self.walk_root)):
                log.info("skipping %s: a link to outside %s", path, self.walk_root)
                continue
            if entry.is_dir():
                found = self.match(path, is_dir=True)
                if found is not None and found.ignored:
                    yield path, found
                elif not entry.is_symlink():
                    yield from self._walk(path)
            elif entry.is_file() and entry.name != IGNORE_FILE:
                yield path, self.match(path, is_dir=False)

    def _top(self, target: str) -> str:
        """The folder that built-in and user patterns are relative to (see the module docstring)."""
        roots = [r for r in self._roots if _inside(target, r)]
        if roots:
            return min(roots, key=len)
        cwd = os.getcwd()
        return cwd if _inside(target, cwd) else os.path.splitdrive(target)[0] + os.sep

    def _dir_decision(self, folder: str, top: str) -> _Rule | None:
        key = (folder, top)
        if key not in self._dir_decisions:
            self._dir_decisions[key] = self._decide(folder, top, is_dir=True)
        return self._dir_decisions[key]

    def _decide(self, target: str, top: str, is_dir: bool) -> _Rule | None:
        """The last rule matching `target` itself."""
        for rule, base in reversed(self._chain(os.path.dirname(target), top)):
            if rule.regex.search(_relative(target, base) + ("/" if is_dir else "")):
                return rule
        return None

    def _chain(self, folder: str, top: str) -> list[tuple[_Rule, str]]:
        """Rules that apply inside `folder`, in order, each with the folder its pattern is relative to.

        .memignore files are read only within the store root or the walk root, from `top` down.
        """
        key = (folder, top)
        if key not in self._chains:
            if folder == top:
                chain = [(rule, top) for rule in self._global]
            else:
                chain = list(self._chain(os.path.dirname(folder), top))
            if top in self._roots:
                chain += [(rule, folder) for rule in _read_rules(Path(folder) / IGNORE_FILE)]
            self._chains[key] = chain
        return self._chains[key]
