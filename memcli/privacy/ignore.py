"""`.memignore` (and `.gitignore`): which files mem must never read, in gitignore syntax.

Every path is decided the same way, whichever command reads it (`mem add --file`, `mem ingest`, a
`source`, `mem ignore check`). Rules come from, later ones overriding earlier ones as in git (the
last matching pattern decides, and `!pattern` re-includes):

1. built-in defaults (secrets and caches: `.git/`, `.env*`, `*.pem`, `id_rsa*`, `.index/`, ...), in any case;
2. the user's file `~/.config/mem/ignore` (`$MEM_CONFIG_DIR/ignore`);
3. the store's `.memignore` (at the store's home: the project folder around a `.mem/` store), for
   paths outside that folder too;
4. every `.memignore` from the top folder down to the path's own folder, each applying to its
   folder and below (like nested .gitignore files). The top is the top of the path's git work tree,
   else the home folder if the path is under it, else the file-system root; a walked folder or the
   store's home above that top lifts it.

Inside a git work tree, `.git/info/exclude` and every `.gitignore` from the work tree's top down to
the path's folder decide too (on by default, as ripgrep does; `gitignore=False` turns it off). They
count only where no mem rule matched: a `.memignore` `!pattern` re-includes a git-ignored file, and no
`.gitignore` can re-include what mem's rules ignore.

Patterns in a `.memignore` or `.gitignore` are relative to the folder that holds it (`/todo.md` is
only that folder's todo.md). Built-in, user and (outside its folder) store patterns are relative to
the top folder. Patterns without a slash (`*.pem`) match at any depth either way.

As in git, a path inside an ignored directory stays ignored whatever a later `!pattern` says. To keep
one file of a folder, ignore the folder's contents (`build/*`) rather than the folder (`build/`), then
`!build/keep.md`.

Links and other names. A path is decided under its name and under what it resolves to (every link
on the way followed): `docs/notes.md -> ../.env` is ignored because `.env` is. A regular file with
more than one hard link is ignored when another of its names, in its folder or a folder above it up
to the top, is ignored. A walk never follows a link out of the walked folder unless asked
(`follow_links`), and enters a linked folder only then. An ignore file that is a link is read when
it leads to a regular file; one that cannot be read as such (a FIFO, a device, a dangling link) is
an error, never silently skipped.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Iterator

from memcli.privacy.patterns import (
    DEFAULTS,
    GIT_IGNORE_FILE,
    IGNORE_FILE,
    RULE_FILES,
    Match,
    Rule,
    parse_rules,
    read_rules,
)
from memcli.privacy.pinned import Pin, pin
from memcli.util.paths import display_path, user_config_dir, work_tree_top

log = logging.getLogger("memcli")


def _absolute(path: Path | str) -> str:
    """The absolute path, with a leading `//` as `/` (POSIX keeps it apart, so no folder above it would
    ever be the root)."""
    found = os.path.abspath(os.fspath(path))
    return "/" + found.lstrip("/") if found.startswith("//") else found


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _relative(path: str, folder: str) -> str:
    """`path` relative to `folder`, which contains it; plain strings because this runs per rule per file."""
    return path[len(folder) :].lstrip("/")


LINKS_SOURCE = "links"  # the `source` of a Match that skips a link out of a walked folder


class IgnoreRules:
    """The denylist for one store and (optionally) one walk; see the module docstring."""

    def __init__(self, store_root: Path | None = None, walk_root: Path | None = None, *, gitignore: bool = True,
                 follow_links: bool = False):
        self.store_root = _absolute(store_root) if store_root else None
        self.walk_root = Path(_absolute(walk_root)) if walk_root else None
        self.gitignore = gitignore
        self.follow_links = follow_links
        self._home = _absolute(Path.home())
        self._builtin = parse_rules(list(DEFAULTS), None, ignore_case=True) + read_rules(user_config_dir() / "ignore")
        self._store_rules = read_rules(Path(self.store_root) / IGNORE_FILE) if self.store_root else []
        self._files: dict[tuple[str, str], list[Rule]] = {}
        self._chains: dict[tuple, list[tuple[Rule, str]]] = {}
        self._dir_decisions: dict[tuple, Rule | None] = {}
        self._git_tops: dict[str, str | None] = {}
        if self.walk_root is not None:  # a broken .memignore fails now, not halfway through a walk
            self._rules(str(self.walk_root), IGNORE_FILE)

    @classmethod
    def load(cls, store_root: Path | None = None, walk_root: Path | None = None, **options) -> "IgnoreRules":
        return cls(store_root, walk_root, **options)

    def is_ignored(self, path: Path | str) -> bool:
        found = self.match(path)
        return found is not None and found.ignored

    def match(self, path: Path | str, is_dir: bool | None = None, real: str | None = None) -> Match | None:
        """The rule that decides `path` (absolute or relative to the cwd), or None if no rule matches.

        The path is decided under its name and under what it resolves to (`real`, computed when not
        given); either one ignored ignores it. A Match with `ignored=False` means a `!pattern`
        re-included it. `is_dir` defaults to asking the file system.
        """
        given = Path(path)
        named = _absolute(given)
        real = os.path.realpath(named) if real is None else real
        if is_dir is None:
            is_dir = os.path.isdir(real)
        found = None
        for name in dict.fromkeys((named, real)):
            rule = self._decide_path(name, is_dir)
            if rule is not None:
                match = Match(rule.ignores, rule.text, rule.source, rule.line, given, None if name == named else name)
                if match.ignored:
                    return match
                found = found or match
        twin = None if is_dir else self._ignored_twin(real, given)
        return twin or found

    def decide(self, path: Path | str) -> tuple[Match | None, Pin]:
        """The deciding rule of a file, and the pin to read exactly the file decided on
        (memcli.privacy.pinned.read_pinned)."""
        pinned = pin(path)
        return self.match(path, is_dir=False, real=pinned.real), pinned

    def walk(self) -> Iterator[tuple[Path, Match | None, Pin | None]]:
        """Every file under the walk root with the rule that decides it (None: no rule) and its pin.

        Ignored folders, and links out of the walk root, are yielded once with their Match (and no
        pin), and not entered. Files come in a stable sorted order. The .memignore and .gitignore files
        are rules, not content, and are not yielded. A linked folder is entered only with `follow_links`.
        """
        if self.walk_root is None:
            raise ValueError("IgnoreRules.walk needs a walk_root")
        real_root = os.path.realpath(self.walk_root)
        yield from self._walk(self.walk_root, real_root, {real_root})

    def _walk(self, folder: Path, real_root: str, entered: set[str]) -> Iterator[tuple[Path, Match | None, Pin | None]]:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            log.warning("cannot list %s: %s", folder, exc)
            return
        for entry in entries:
            path = folder / entry.name
            try:
                real = os.path.realpath(path) if entry.is_symlink() else None
                is_dir = entry.is_dir()
            except OSError as exc:  # a link that names itself (ELOOP), one into /proc: nothing to stop for
                log.warning("cannot look at %s: %s", path, exc)
                continue
            if real is not None and not self.follow_links and not _inside(real, real_root):
                yield path, Match(True, f"a link out of {display_path(self.walk_root)} (--follow-links reads it)",
                                  LINKS_SOURCE, 0, path, real), None
                continue
            if is_dir:
                found = self.match(path, is_dir=True, real=real)
                if found is not None and found.ignored:
                    yield path, found, None
                elif real is None:
                    yield from self._walk(path, real_root, entered)
                elif self.follow_links and real not in entered:  # a linked folder, once (no loops)
                    entered.add(real)
                    yield from self._walk(path, real_root, entered)
            elif entry.is_file() and entry.name not in RULE_FILES:
                pinned = pin(path)
                yield path, self.match(path, is_dir=False, real=pinned.real), pinned

    def _top(self, target: str) -> tuple[str, str | None]:
        """(the top folder for `target`, the top of its git work tree or None); see the module docstring."""
        git = self._git_top(os.path.dirname(target))
        top = git or (self._home if _inside(target, self._home) else os.path.splitdrive(target)[0] + os.sep)
        for root in (str(self.walk_root) if self.walk_root else None, self.store_root):
            if root and _inside(target, root) and len(root) < len(top):
                top = root
        return top, git

    def _git_top(self, folder: str) -> str | None:
        if folder not in self._git_tops:
            found = work_tree_top(Path(folder))
            self._git_tops[folder] = str(found) if found else None
        return self._git_tops[folder]

    def _decide_path(self, target: str, is_dir: bool) -> Rule | None:
        """The rule deciding one name: the first ignored folder on the way down from the top, else the
        last rule matching the name itself."""
        top, git = self._top(target)
        if target == top:
            return None
        store_global = self.store_root is None or not _inside(target, self.store_root)
        folder = top
        for part in _relative(os.path.dirname(target), top).split("/"):
            if not part:
                continue
            folder = os.path.join(folder, part)
            key = (folder, top, git, store_global)
            if key not in self._dir_decisions:
                self._dir_decisions[key] = self._decide(folder, top, git, store_global, is_dir=True)
            rule = self._dir_decisions[key]
            if rule is not None and rule.ignores:
                return rule
        return self._decide(target, top, git, store_global, is_dir)

    def _decide(self, target: str, top: str, git: str | None, store_global: bool, is_dir: bool) -> Rule | None:
        """mem's rules first; git's only where none of mem's matched."""
        folder = os.path.dirname(target)
        rule = _last_match(self._mem_chain(folder, top, store_global), target, is_dir)
        if rule is None and git is not None and self.gitignore and _inside(folder, git):
            rule = _last_match(self._git_chain(folder, git), target, is_dir)
        return rule

    def _mem_chain(self, folder: str, top: str, store_global: bool) -> list[tuple[Rule, str]]:
        """mem's rules that apply inside `folder`, in order, each with the folder it is relative to."""
        key = ("mem", folder, top, store_global)
        if key not in self._chains:
            if folder == top or not _inside(folder, top):
                base = self._builtin + (self._store_rules if store_global else [])
                chain = [(rule, top) for rule in base]
            else:
                chain = list(self._mem_chain(os.path.dirname(folder), top, store_global))
            self._chains[key] = chain + [(rule, folder) for rule in self._rules(folder, IGNORE_FILE)]
        return self._chains[key]

    def _git_chain(self, folder: str, git: str) -> list[tuple[Rule, str]]:
        """git's rules inside `folder`: .git/info/exclude, then each .gitignore from the work tree's top."""
        key = ("git", folder, git)
        if key not in self._chains:
            if folder == git or not _inside(folder, git):
                exclude = Path(git) / ".git" / "info" / "exclude"
                chain = [(rule, git) for rule in (read_rules(exclude) if os.path.isdir(exclude.parent) else [])]
            else:
                chain = list(self._git_chain(os.path.dirname(folder), git))
            self._chains[key] = chain + [(rule, folder) for rule in self._rules(folder, GIT_IGNORE_FILE)]
        return self._chains[key]

    def _rules(self, folder: str, name: str) -> list[Rule]:
        key = (folder, name)
        if key not in self._files:
            self._files[key] = read_rules(Path(folder) / name)
        return self._files[key]

    def _ignored_twin(self, real: str, given: Path) -> Match | None:
        """For a regular file with several hard links: the Match of another of its names, in its folder or
        a folder above it up to the top, that is ignored."""
        try:
            info = os.stat(real)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
            return None
        top = self._top(real)[0]
        folder = os.path.dirname(real)
        while True:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                entries = []
            for entry in entries:
                if entry.inode() == info.st_ino and entry.path != real and entry.is_file(follow_symlinks=False) \
                        and entry.stat(follow_symlinks=False).st_dev == info.st_dev:
                    rule = self._decide_path(entry.path, False)
                    if rule is not None and rule.ignores:
                        return Match(True, rule.text, rule.source, rule.line, given, entry.path)
            if folder == top or folder == os.path.dirname(folder):
                return None
            folder = os.path.dirname(folder)


def _last_match(chain: list[tuple[Rule, str]], target: str, is_dir: bool) -> Rule | None:
    for rule, base in reversed(chain):
        if _inside(target, base) and rule.regex.search(_relative(target, base) + ("/" if is_dir else "")):
            return rule
    return None
