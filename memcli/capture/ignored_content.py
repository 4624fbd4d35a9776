"""Whether a tool event can carry what a file the denylist excludes holds, and the lines of a search's
output that come from such a file.

An event's input path fields are decided by the caller; this is about the names an event gives in other
ways: the words of a shell command (memcli.capture.shell_words: behind sudo, `bash -c`, `python -c`,
subshells, xargs, find -exec, redirections and `tee`), globs expanded against the project's real files
(`cat .e*`), a `file:` URL in any field, in any case, percent-encoded or nested (`FILE:///app/%2Eenv`, a
URL inside another's query), an apply_patch's move target. A command that can reach files none of its
words names (`xargs cat`, `find -exec cat {}`, `grep -rh`) can name an ignored file when the project
holds one. Its output is then withheld whole: over-dropping loses an output, under-dropping leaks a secret.

Search output (grep, rg, ag, git grep, a client's Grep tool, whatever runs them) names the file of each
line in several layouts: `path:line:text`, `path:text` (no `-n`), `path-line-text` (context),
`HEAD:path:text`, rg's `--json` records, `Binary file path matches`, or a heading line holding the path alone with its matches
below (`rg --heading`, `git grep --heading`, `tail`'s `==> path <==`, read_many_files' `--- path ---`). A line naming an ignored
file goes, and so do the lines under an ignored heading, up to the next line that names a kept file.

What names cannot catch (a listing in `$(...)`, a name built at run time, `printenv`) the values of the
project's ignored files do: the same walk that tells whether the project holds one gives them
(`IgnoredFiles`, memcli.capture.ignored_values). The walk starts at the project's top (the git work tree
holding the session's folder, else the project around the store), not at the session's folder: a
session in `backend/` reads `../.env` as easily as its own. A runner that lives long (`mem queue run
--linger`, `mem mcp`) walks again for an event that happened after its walk began, so a `.env` the
session made a moment ago counts; a project whose walk is costly is walked again at most every
WALK_TTL_S, and each file is read again only when its size or time changed.
"""

from __future__ import annotations

import glob
import os
import re
import time
from typing import Callable
from urllib.parse import unquote

from memcli.capture.ignored_values import IgnoredValues, gives_values, values_of
from memcli.capture.shell_words import argv_command, command_words
from memcli.errors import MemError
from memcli.privacy.ignore import LINKS_SOURCE
from memcli.privacy.patterns import GIT_IGNORE_FILE
from memcli.privacy.pinned import Pin, pin, read_pinned

SHELL_KEYS = ("command", "cmd", "argv", "args", "script")
GLOB = re.compile(r"[*?\[]")
FILE_URL = re.compile(r"(?i)\bfile:(?://(?:localhost)?)?(?P<path>[^\s'\"<>?#&|;]+)")
MOVE = re.compile(r"(?m)^\*\*\* Move to: (.+)$")
# A grep-like line's file: before its first colon (or `-N-` of a context line), after a `HEAD:`-like
# revision, or a binary file's notice.
_LINE_FILES = re.compile(r"^(?P<a>[^:\n]{1,300}?)(?::(?P<b>[^:\n]{1,300}?))?:|^(?P<c>[^\n]{1,300}?)-\d+-")
# A file's text under a line naming it: `tail`/`head` of several files (`==> path <==`), read_many_files
# (`--- path ---`).
_SECTION = re.compile(r"^(?:==> (.+) <==|--- (.+) ---)$")
_JSON_PATH = re.compile(r'"path"\s*:\s*(?:\{\s*"text"\s*:\s*)?"((?:[^"\\]|\\.){1,300})"')  # rg --json
_BINARY = re.compile(r"^(?:Binary file (.+) matches|grep: (.+): binary file matches)$")
_PATHLIKE = re.compile(r"^[\w./@+~ -]{1,300}$")
UNNAMED = ""  # in `named`: the command reaches files none of its words names, and the folder holds an ignored one
BACKGROUND = "the background task of a withheld command"
# How a client says a command went on in the background, and the id a later call fetches its output by
# (Claude Code's `Command running in background with ID: b1x2`, then TaskOutput/BashOutput with that id).
_BACKGROUND_ID = re.compile(r'(?:in background with ID:?\s*|"(?:backgroundTaskId|task_id|shell_id|bash_id)"\s*:\s*")'
                            r"([\w-]{4,64})")
MAX_GLOB = 5000  # names one glob may expand to before it counts as naming everything
MAX_WALK = 50_000  # entries a walk for ignored files looks at before it assumes there is one
MAX_VALUE_FILE = 64 * 1024  # an ignored file read for its values: a settings file is small, a log or a database not
MAX_VALUE_FILES = 256
MAX_VALUE_BYTES = 2 * 1024 * 1024
# A walk is trusted for an event that happened after it began only when walking is cheap (this project's
# last walk took less than CHEAP_WALK_S): then each such event gets a walk of its own, and a `.env` made
# by the command whose output holds its value counts. A costly walk (tens of thousands of files take
# seconds) is done again once WALK_TTL_S old: a few seconds is about one step of a session, so a file it
# made is read by the next events, while a burst of events costs one walk.
CHEAP_WALK_S = 0.2
WALK_TTL_S = 5.0
CAPS = "values: not every ignored file read"  # counted (`mem status`) with which cap, never silent
# Files read first when the caps leave no room for all: those whose name says environment settings.
_FIRST = re.compile(r"(?i)(?:^|[._-])env(?:[._-]|$)|^\.env")


class IgnoredContent:
    """The denylist's view of one session folder. `ignored(path)` decides one name (relative to `cwd`);
    `files` are the ignored files of the project holding it."""

    def __init__(self, cwd: str, ignored: Callable[[str], bool], files: "IgnoredFiles"):
        self.cwd = cwd
        self._decide = ignored
        self.files = files
        self._decided: dict[str, bool] = {}

    def ignored(self, name: str) -> bool:
        if name not in self._decided:
            self._decided[name] = bool(name.strip()) and self._decide(os.path.expanduser(name))
        return self._decided[name]

    # -- what an event names ------------------------------------------------------------------------

    def named(self, record: dict, shell: bool) -> list[str]:
        """The ignored files (as named) that the event's command, URLs or patch can reach; UNNAMED for a
        command that reaches files it does not name in a folder holding an ignored one."""
        found: list[str] = []
        strings = list(_strings(record.get("input")))
        for value in strings:
            found += [path for path in _file_urls(value) if self.ignored(path)]
            found += [path.strip() for path in MOVE.findall(value) if self.ignored(path.strip())]
        if shell:
            words = command_words(_command(record.get("input")))
            for word in words.words:
                found += self._reached(word)
            if words.wide and self._holds_ignored_file():
                found.append(UNNAMED)
        return list(dict.fromkeys(found))

    def _reached(self, word: str) -> list[str]:
        if self.ignored(word):
            return [word]
        if not GLOB.search(word) or not self.cwd or not os.path.isabs(self.cwd):
            return []
        pattern = os.path.expanduser(word)
        hits = []
        for n, path in enumerate(glob.iglob(pattern, root_dir=None if os.path.isabs(pattern) else self.cwd,
                                            recursive=True)):
            if n >= MAX_GLOB:
                return [word]
            if self.ignored(path):
                hits.append(path)
        return hits

    def _holds_ignored_file(self) -> bool:
        """Whether the project holds a file the denylist ignores (outside ignored folders, which a walk
        does not enter); a project too large to look through counts as holding one."""
        return self.files.walked().holds

    # -- search output ------------------------------------------------------------------------------

    def kept_lines(self, output: str, search: bool) -> tuple[str, int]:
        """The output less the lines that come from ignored files, and how many went. Only a search's
        output (`search`) names a line's file in front of it, or a heading holding a path alone; elsewhere
        `build: compiled 3 files` or a name in `git status` is just text. Sections of several files
        (`==> path <==`) are read in any output."""
        kept, dropped, under_ignored = [], 0, False
        for line in output.split("\n"):
            section = _SECTION.match(line)
            heading = (section.group(1) or section.group(2)) if section else line.strip() if search else ""
            if heading and _PATHLIKE.match(heading) and ("/" in heading or "." in heading):
                if self.ignored(heading):
                    under_ignored = True
                    dropped += 1
                    continue
                if under_ignored and (section or os.path.exists(os.path.join(self.cwd, heading))):
                    under_ignored = False
            if under_ignored or search and self._names_ignored(line):
                dropped += 1
            else:
                kept.append(line)
        return "\n".join(kept), dropped

    def _names_ignored(self, line: str) -> bool:
        if '"path"' in line and any(self.ignored(m.group(1)) for m in _JSON_PATH.finditer(line)):
            return True
        binary = _BINARY.match(line)
        if binary:
            return self.ignored(binary.group(1) or binary.group(2))
        found = _LINE_FILES.match(line)
        if not found:
            return False
        return any(name and _PATHLIKE.match(name) and self.ignored(name) for name in found.group("a", "b", "c"))


class IgnoredFiles:
    """The ignored files of one project (walked from `top`) and the values they give (see the module
    docstring); kept by a runner for its life, fresh for each event (`as_of`)."""

    def __init__(self, top: str, walk_rules: Callable[[str], object], ignored: Callable[[str], bool]):
        self.top = top
        self._walk_rules = walk_rules
        self._ignored = ignored
        self._walk: _Walk | None = None
        self._read: dict[tuple, set[str]] = {}  # (device, inode, size, mtime) of a file read: its values
        self._values: tuple[frozenset, IgnoredValues] = (frozenset(), IgnoredValues(()))

    def as_of(self, at: float) -> None:
        """Forget a walk that may not show the project as it was when an event happened at `at`: one begun
        before it, when walking is cheap, else one ended more than WALK_TTL_S ago (ten times its own length
        for a walk that long: a walk of seconds is not done for every event)."""
        walk = self._walk
        if walk is None:
            return
        age = time.time() - walk.started - walk.took
        if age > max(WALK_TTL_S, 10 * walk.took) or walk.started < at and walk.took < CHEAP_WALK_S:
            self._walk = None

    def walked(self) -> "_Walk":
        """The last walk: whether the project holds an ignored file, and which give values (pinned)."""
        if self._walk is None:
            walk = _Walk()
            if too_wide(self.top):
                walk.holds = True  # assumed, as for a folder too large to look through
                walk.capped.add("the session's folder is / or the home folder: not walked")
            elif self.top and os.path.isdir(self.top):
                try:
                    self._walk_into(walk)
                except OSError as exc:  # what the walk could not step over: assume the worst, never stop capture
                    walk.holds = True
                    walk.capped.add(f"the walk stopped ({exc.strerror or exc})")
            walk.took = time.time() - walk.started
            self._walk = walk
        return self._walk

    def _walk_into(self, walk: "_Walk") -> None:
        for n, (path, match, pinned) in enumerate(self._walk_rules(self.top).walk()):
            if n >= MAX_WALK:
                walk.holds = True
                walk.capped.add(f"more than {MAX_WALK} entries walked")
                break
            if match is not None and match.ignored and pinned is not None:
                walk.holds = True
                if gives_values(path.name, _only_git(match.source)):
                    walk.files.append(pinned)
            elif match is not None and match.source == LINKS_SOURCE and self._ignored(str(path)) \
                    and gives_values(path.name, False) and gives_values(os.path.basename(match.via or ""), False):
                walk.files.append(pin(path))  # a link out of the folder to an ignored file

    def values(self) -> IgnoredValues:
        """The values the project's ignored files hold (memcli.capture.ignored_values). Only regular files
        are read (a FIFO or a device never blocks it), each once however many names lead to it and again
        only when its size or time changed, up to MAX_VALUE_FILES files and MAX_VALUE_BYTES in all, each
        up to its first MAX_VALUE_FILE bytes, `.env` files first; a binary or unreadable file gives none."""
        walk = self.walked()
        keys: dict[tuple, None] = {}
        total = 0
        now = [_now(pinned) for pinned in walk.files]
        walk.files = [pinned for pinned, _ in now]
        for pinned, key in sorted(now, key=lambda pair: not _FIRST.search(pair[0].path.name)):
            if key is None or key in keys:
                continue
            if len(keys) >= MAX_VALUE_FILES or total >= MAX_VALUE_BYTES:
                walk.capped.add(f"more than {MAX_VALUE_FILES} files or {MAX_VALUE_BYTES // 1024 // 1024} MiB")
                break
            if key not in self._read:
                self._read[key] = values_of(_read(pinned, walk))
            keys[key] = None
            total += min(key[2], MAX_VALUE_FILE)
        if frozenset(keys) != self._values[0]:
            self._read = {key: self._read[key] for key in keys}
            self._values = (frozenset(keys), IgnoredValues(set().union(*(self._read[key] for key in keys))))
        return self._values[1]

    def caps(self) -> list[str]:
        """The caps the last walk or read hit, each said once (memcli.capture.event_jobs counts them)."""
        walk = self._walk
        if walk is None or walk.said:
            return []
        walk.said = bool(walk.capped)
        return sorted(walk.capped)


def too_wide(top: str) -> bool:
    """Whether a session's folder is no project but `/` or the home folder (or above it): walking it
    would cost seconds for every few events, and read far more than a project's settings."""
    if not top:
        return False
    real, home = os.path.realpath(top), os.path.realpath(os.path.expanduser("~"))
    return real == os.sep or home == real or home.startswith(real.rstrip(os.sep) + os.sep)


def _only_git(source) -> bool:
    """Whether a rule comes from git's own files (a .gitignore, .git/info/exclude), which ignore a file
    for reasons other than secrecy; mem's rules (built-in, the user's, a .memignore) name secrets."""
    return hasattr(source, "name") and (source.name == GIT_IGNORE_FILE or source.parts[-3:] == (".git", "info", "exclude"))


def _now(pinned: Pin) -> tuple[Pin, tuple | None]:
    """The file now under a pinned name, pinned again when another took its place since the walk (`sed -i`
    and most editors write a new file and rename it over the old one), and its _state()."""
    state = _state(pinned)
    if state is None:
        pinned = pin(pinned.path)
        state = _state(pinned)
    return pinned, state


def _state(pinned: Pin) -> tuple | None:
    """(device, inode, size, mtime) of the regular file pinned, still there; None otherwise."""
    try:
        info = os.stat(pinned.real)
    except OSError:
        return None
    ident = (info.st_dev, info.st_ino)
    return None if ident != pinned.ident else (*ident, info.st_size, info.st_mtime_ns)


class _Walk:
    """What one walk of a project found, and when."""

    def __init__(self):
        self.started = time.time()
        self.took = 0.0
        self.holds = False  # an ignored file is there (or the folder is too large to tell)
        self.files: list[Pin] = []  # those that give values
        self.capped: set[str] = set()  # the caps this walk and its reads hit
        self.said = False


def _read(pinned: Pin, walk: _Walk) -> str:
    """An ignored file's text up to MAX_VALUE_FILE bytes (whole lines: a longer file's last, cut line goes,
    and the cap is noted), or "" when it is binary, unreadable or changed since the walk (never an error: a
    file a run cannot read only gives no values); a byte that is not UTF-8 reads as U+FFFD."""
    try:
        data = read_pinned(pinned, MAX_VALUE_FILE)
    except (MemError, OSError):
        return ""
    if b"\x00" in data:
        return ""
    if len(data) > MAX_VALUE_FILE:
        walk.capped.add(f"a file over {MAX_VALUE_FILE // 1024} KiB read in part")
        data = data[:data.rfind(b"\n", 0, MAX_VALUE_FILE) + 1]
    return data.decode("utf-8", errors="replace")  # a Latin-1 comment costs its own line, not the file's values


def searches(tool_input) -> bool:
    """Whether a command runs a search tool anywhere in it (`bash -lc 'rg --heading KEY'`)."""
    return command_words(_command(tool_input)).searches


def runs_a_command(tool_input) -> bool:
    """Whether a tool's input gives a command to run (an MCP server's shell tool, `{"command": ...}`)."""
    return isinstance(tool_input, dict) and any(isinstance(tool_input.get(key), (str, list)) for key in ("command", "cmd"))


def background_tasks(output) -> list[str]:
    """The ids of background tasks a tool's output reports (memcli.capture.event_jobs withholds a later
    call that fetches the output of one started by a withheld command)."""
    import json

    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    return list(dict.fromkeys(_BACKGROUND_ID.findall(text)))


def input_strings(tool_input) -> list[str]:
    return list(_strings(tool_input))


def _command(tool_input) -> str:
    if isinstance(tool_input, dict):
        return " ; ".join(argv_command(tool_input[key]) for key in SHELL_KEYS if key in tool_input)
    return argv_command(tool_input)


def _strings(value, depth: int = 0):
    """Every string in a tool's input, nested or not (keys too)."""
    if depth > 32:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key
            yield from _strings(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, depth + 1)


def _file_urls(value: str) -> list[str]:
    """The local paths of the `file:` URLs in a text, decoded as often as they were encoded (a URL inside
    another's query is encoded once more)."""
    if "file" not in value.lower() and "%" not in value:
        return []
    paths, seen = [], set()
    for _ in range(4):
        if value in seen:
            break
        seen.add(value)
        paths += [unquote(m.group("path")) for m in FILE_URL.finditer(value)]
        value = unquote(value)
    return list(dict.fromkeys(paths))


def withheld(tool: str, names: list[str]) -> str:
    """The text of an observation whose event named ignored files: which (redacted, as the hook's texts
    are) and why nothing else of it is kept."""
    from memcli.privacy.redact import redact

    named = [os.path.basename(name.rstrip("/")) or name for name in names if name not in (UNNAMED, BACKGROUND)]
    said = []
    if named:
        said.append(f"named {redact(', '.join(named[:5])[:300]).text}, which the denylist ignores")
    if BACKGROUND in names:
        said.append("fetched the output of a background task whose command was withheld")
    if UNNAMED in names:
        said.append("reached files it does not name (xargs, find -exec, an archive, a listing) in a folder "
                    "holding ignored ones")
    return f"{tool}: {'; '.join(said)}: its input and output are not kept (`mem ignore check -v` explains a name)"
