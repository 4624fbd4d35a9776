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
folder's ignored files do: the same walk that tells whether the folder holds one gives them (`values`,
memcli.capture.ignored_values).
"""

from __future__ import annotations

import glob
import os
import re
from typing import Callable
from urllib.parse import unquote

from memcli.capture.ignored_values import IgnoredValues, values_of
from memcli.capture.shell_words import argv_command, command_words
from memcli.errors import MemError
from memcli.privacy.ignore import LINKS_SOURCE
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


class IgnoredContent:
    """The denylist's view of one session folder. `ignored(path)` decides one name (relative to `cwd`);
    `walk_rules()` gives rules to walk `cwd` with (memcli.privacy.ignore.IgnoreRules)."""

    def __init__(self, cwd: str, ignored: Callable[[str], bool], walk_rules: Callable[[str], object]):
        self.cwd = cwd
        self._decide = ignored
        self._walk_rules = walk_rules
        self._decided: dict[str, bool] = {}
        self._walk: _Walk | None = None
        self._values: IgnoredValues | None = None

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
        """Whether the session's folder holds a file the denylist ignores (outside ignored folders, which a
        walk does not enter); a folder too large to look through counts as holding one."""
        return self._walked().holds

    def _walked(self) -> "_Walk":
        """One walk of the session's folder a run: whether it holds an ignored file, and which (pinned)."""
        if self._walk is None:
            self._walk = _Walk()
            if self.cwd and os.path.isdir(self.cwd):
                for n, (path, match, pinned) in enumerate(self._walk_rules(self.cwd).walk()):
                    if n >= MAX_WALK:
                        self._walk.holds = True
                        break
                    if match is not None and match.ignored and pinned is not None:
                        self._walk.holds = True
                        self._walk.files.append(pinned)
                    elif match is not None and match.source == LINKS_SOURCE and self.ignored(str(path)):
                        self._walk.files.append(pin(path))  # a link out of the folder to an ignored file
        return self._walk

    def values(self) -> IgnoredValues:
        """The values the folder's ignored files hold (memcli.capture.ignored_values), read once a run.
        Only regular files are read (a FIFO or a device never blocks it), each once however many names
        lead to it, up to MAX_VALUE_FILES files of at most MAX_VALUE_FILE bytes and MAX_VALUE_BYTES in all;
        a larger, binary or unreadable file gives none."""
        if self._values is None:
            found, seen, total = set(), set(), 0
            for pinned in self._walked().files:
                if pinned.ident is None or pinned.ident in seen:
                    continue
                if len(seen) >= MAX_VALUE_FILES or total >= MAX_VALUE_BYTES:
                    break
                seen.add(pinned.ident)
                data = _read(pinned)
                total += len(data)
                found |= values_of(data)
            self._values = IgnoredValues(found)
        return self._values

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


class _Walk:
    """What one walk of a session folder found: kept for the run, so a folder is walked once whatever asks."""

    def __init__(self):
        self.holds = False  # an ignored file is there (or the folder is too large to tell)
        self.files: list[Pin] = []


def _read(pinned: Pin) -> str:
    """An ignored file's text, or "" when it is larger than MAX_VALUE_FILE, binary, unreadable or changed
    since the walk (never an error: a file a run cannot read only gives no values)."""
    try:
        data = read_pinned(pinned, MAX_VALUE_FILE)
    except (MemError, OSError):
        return ""
    if len(data) > MAX_VALUE_FILE or b"\x00" in data:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ""


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
