"""Ignore files in gitignore syntax: the built-in defaults, one `.memignore` or `.gitignore` read into
rules, and the Match that names the rule deciding a path (memcli.privacy.ignore decides with them).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from memcli.errors import StoreError
from memcli.util.paths import display_path

IGNORE_FILE = ".memignore"
GIT_IGNORE_FILE = ".gitignore"
RULE_FILES = (IGNORE_FILE, GIT_IGNORE_FILE)  # rules, not content: a walk does not yield them
BUILTIN_SOURCE = "built-in defaults"
# Matched whatever the case of the name: `.ENV` is `.env` on macOS and Windows, and a file named so is
# as secret on a file system that minds case.
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
    # credential files: passwords in formats of their own, and shell histories full of typed ones
    ".pgpass",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".my.cnf",
    ".htpasswd",
    ".*_history",
    ".histfile",
    "**/.aws/credentials",
    "**/.docker/config.json",
    "**/.kube/config",
    "*.kubeconfig",
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
    source: Path | str | None  # the file the rule is in; None for the built-in defaults; a word for links
    line: int
    path: Path
    via: str | None = None  # the name that was decided, when not `path` itself (a link's target, a hard link)

    @property
    def source_name(self) -> str:
        if self.source is None:
            return BUILTIN_SOURCE
        return self.source if isinstance(self.source, str) else display_path(self.source)

    def __str__(self) -> str:
        via = f" -> {display_path(Path(self.via))}" if self.via else ""
        return f"{self.source_name}:{self.line}:{self.pattern}\t{self.path}{via}"


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern  # matches a relative path (folders with a trailing /) that the pattern names
    ignores: bool  # False for a `!` pattern
    text: str
    source: Path | None
    line: int


def _element_regex(pattern, text: str, ignore_case: bool) -> re.Pattern:
    """pathspec's regex also matches everything below a matching folder. mem decides each folder on the
    way down itself (git's own algorithm), so a rule must match the path it is asked about exactly."""
    source = _without_backtracking(pattern.regex.pattern)
    flags = re.IGNORECASE if ignore_case else 0
    if source == ".":  # `*`, `**`, `/**`: everything
        return re.compile(".")
    if text.endswith("/**"):  # what is inside the folder, not the folder itself
        return re.compile(f"(?:{source}).+\\Z", flags)
    return re.compile(f"(?:{source})\\Z", flags)


_STAR = "[^/]*"  # a `*` in pathspec's regex
_FIXED = re.compile(r"(?:\\.|\[\^?\]?[^\]]*\]|[^\\()\[\]*+?{}|^$])+\Z")  # characters and classes, one each


def _without_backtracking(source: str) -> str:
    """`a*a*...*b` against a long name: each `*` would try every length against every other (minutes for
    a 200-character name, as in git). A `*` followed by fixed characters and then another `*` can take
    the first place those characters occur, since the next `*` takes whatever lies between (neither
    crosses a `/`). So each such `*` and its characters become an atomic group of a lazy star (written
    with a lookahead, as Python before 3.11 has no atomic groups); the last `*` stays as it is."""
    parts = source.split(_STAR)
    out = [parts[0]]
    for n, part in enumerate(parts[1:], 1):
        if n < len(parts) - 1 and _FIXED.match(part):
            out.append(f"(?=(?P<_s{n}>{_STAR}?{part}))(?P=_s{n})")
        else:
            out.append(_STAR + part)
    return "".join(out)


def parse_rules(lines: list[str], source: Path | None, *, ignore_case: bool = False) -> list[Rule]:
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
        Rule(_element_regex(pattern, line.strip(), ignore_case), pattern.include, line.strip(), source, no)
        for (no, line), pattern in zip(numbered, patterns)
        if pattern.include is not None
    ]


MAX_IGNORE_FILE = 1 << 20


def read_rules(file: Path) -> list[Rule]:
    """The rules of one ignore file; none when it is not there. A file that is there but cannot be read
    as a regular text file is a StoreError: a denylist must not be skipped. On a file system that does
    not mind case the rules do not either (as git's core.ignorecase there): `secrets.txt` is `Secrets.txt`."""
    if not os.path.lexists(file):
        return []
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise StoreError(f"cannot read ignore file {file}: not a regular file")
            data = handle.read(MAX_IGNORE_FILE + 1)
        if len(data) > MAX_IGNORE_FILE:
            raise StoreError(f"cannot read ignore file {file}: larger than {MAX_IGNORE_FILE} bytes")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read ignore file {file}: {getattr(exc, 'strerror', None) or exc}") from None
    return parse_rules(text.splitlines(), file, ignore_case=case_blind(file))


def case_blind(file: Path) -> bool:
    """Whether the file system holding `file` (which exists) finds it under its name in other case."""
    other = file.with_name(file.name.swapcase())
    if other.name == file.name:
        return False
    try:
        mine, theirs = os.stat(file), os.stat(other)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)
