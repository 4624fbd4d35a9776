"""The words of a shell command that can name a file, wherever the command hides them.

A command reaches a file through the arguments of any program, not only of `cat`: behind wrappers (`sudo`,
`env`, `nice`, `timeout`, `xargs`), inside a script handed to a shell or an interpreter (`bash -c 'cat
.env'`, `python -c "print(open('.env').read())"`, `eval`), in subshells (`$(...)`, backticks, `<(...)`),
after redirections (`< .env`, `>> .env`) and as `tee`'s target. `command_words` lists every such word,
split at the punctuation code puts around a name (`open('.env')`, `--env-file=.env`, `file:.env`), with
brace alternatives spelled out (`.{env,x}`); it leaves out only the programs run (`.venv/bin/python -m
pytest` runs a program inside an ignored folder and reads nothing of it). Globs stay globs: the caller
expands them against the project's real files (memcli.capture.ignored_content).

`wide` says the command can reach files that no word of it names: `xargs` (the names come on stdin),
`find -exec`, a search that prints no file names (`grep -rh`), an archiver (`tar cz .`), a listing in a
substitution (`cat $(ls -a)`). Variables set in the script are expanded (`f=.e; cat ${f}nv`), and string
literals joined by `+` in inline code are read as one (`open('.e' + 'nv')`). `searches` says its output lines may name
the files they come from (grep, rg, ag, ack, git grep). Parsing errs towards more words: a word that is
not a path costs one denylist lookup; a path missed is a leak.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

# Programs that run the program named after them (their own options and durations skipped).
WRAPPERS = {"sudo", "doas", "env", "nice", "nohup", "time", "timeout", "command", "exec", "builtin", "stdbuf",
            "ionice", "chrt", "taskset", "xargs", "unbuffer", "caffeinate", "then", "do", "else", "if", "while",
            "until", "!", "{", "}", "strace", "ltrace", "watch", "flock", "setsid", "runuser"}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox", "eval", "su"}
INTERPRETERS = {"python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl", "ruby",
                "php", "lua", "Rscript", "osascript", "pwsh", "powershell", "awk", "gawk", "jq"}
# Programs whose output is names of files (`cat $(ls -a)` reads what they list) and programs that pack
# whole folders (`tar cz .`).
LISTERS = {"ls", "find", "fd", "fdfind", "locate", "compgen"}
ARCHIVERS = {"tar", "zip", "7z", "7za", "cpio", "pax"}
SEARCHERS = {"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "git-grep"}
_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}
ACTIVATE = re.compile(r"(?:^|/)(?:bin|Scripts)/activate(?:\.\w+)?$")  # a virtualenv's (or conda's) activation script
_SEPARATOR = re.compile(r"^[();|&]+$")
_REDIRECT = re.compile(r"^\d*[<>&]+[|&-]?$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_NUMERIC = re.compile(r"^[+-]?\d[\d.]*[smhd]?$")
# What code and URLs put around a name: quotes, brackets, commas, operators, a `file:` scheme's colon.
_AROUND = re.compile(r"[\s'\"()\[\]{},;|&<>=+`:$]+")
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
_JOIN = re.compile(r"\s*\+\s*")
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
# git commands whose -m/--message is a text for git, not a name (`git checkout -m` is a flag: not here).
MESSAGE_TAKERS = {"commit", "tag", "merge", "stash", "notes"}
# What a shell may expand in a word: `$(...)`, `$X`, a backtick (read as `;` here), braces, globs.
_EXPANDS = re.compile(r"[$;{}*?\[]")
MAX_DEPTH = 8  # scripts inside scripts inside scripts: deeper than this is read as plain words


@dataclass
class CommandWords:
    words: list[str] = field(default_factory=list)
    wide: bool = False
    searches: bool = False


def command_words(command: str) -> CommandWords:
    found = CommandWords()
    _script(command, found, 0)
    found.words = list(dict.fromkeys(w for w in found.words if w and len(w) < 4096))
    return found


def argv_command(value) -> str:
    """A command given as an argv list (`["bash", "-lc", "cat .env"]`) as one shell line; a string as is."""
    if isinstance(value, list):
        return shlex.join(str(item) for item in value)
    return value if isinstance(value, str) else ""


def _script(text: str, found: CommandWords, depth: int) -> None:
    if depth > MAX_DEPTH:
        found.words += _pieces(text)
        return
    substitutes = "$(" in text or "`" in text
    variables: dict[str, str] = {}
    for simple in _simple_commands(text, found):
        simple = [_expanded(word, variables) for word in simple]
        if all(_ASSIGNMENT.match(word) for word in simple):  # `f=.e; cat ${f}nv`
            variables.update(word.split("=", 1) for word in simple)
        if substitutes and os.path.basename(simple[0]) in LISTERS:  # `cat $(ls -a)`: names from a listing
            found.wide = True
        _simple(simple, found, depth)


def _expanded(word: str, variables: dict[str, str]) -> str:
    if "$" not in word or not variables:
        return word
    return _VARIABLE.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group()), word)


def _simple_commands(text: str, found: CommandWords) -> list[list[str]]:
    """The simple commands of a script: split at `;`, `|`, `&&`, `||`, `&`, newlines, parentheses (so
    `$(...)` and `<(...)` are commands of their own) and backticks. A redirection's target is a file
    whatever it stands beside (`exec 3<.env`): it goes to `found.words` at once."""
    text = text.replace("`", " ; ").replace("\n", " ; ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, ""
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: plain words, split at the same punctuation
        tokens = re.findall(r"[();|&]+|[^\s();|&]+", text)
    commands: list[list[str]] = [[]]
    redirected = False
    for token in tokens:
        if _SEPARATOR.match(token):
            commands.append([])
        elif _REDIRECT.match(token):
            redirected = True
        elif redirected:
            found.words += _pieces(token)
            redirected = False
        else:
            commands[-1].append(token)
    return [words for words in commands if words]


def _simple(words: list[str], found: CommandWords, depth: int) -> None:
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGNMENT.match(word):  # `KEY=value cmd`: the value is a word like any other
            found.words += _pieces(word.split("=", 1)[1])
            _script(word.split("=", 1)[1], found, depth + 1)
            i += 1
            continue
        name = os.path.basename(word)
        if name not in WRAPPERS:
            break
        found.wide = found.wide or name == "xargs"
        i += 1
        while i < len(words) and (words[i].startswith("-") or _NUMERIC.match(words[i])):
            found.words += _pieces(words[i])
            i += 1
    if i >= len(words):
        return
    program, args = os.path.basename(words[i]), words[i + 1:]
    if program == "git" and "grep" in args[:3]:
        program = "git-grep"
    if program in SHELLS:  # `bash -lc SCRIPT args`, `eval SCRIPT`; `bash FILE args` reads FILE
        inline = program == "eval" or any(re.match(r"-[a-z]*c", arg) for arg in args)
        for arg in args:
            if program == "eval" or (inline and not arg.startswith("-")):
                _script(arg, found, depth + 1)
                inline = program == "eval"
            elif not arg.startswith("-"):
                found.words += _pieces(arg)
        return
    if program in INTERPRETERS:
        for arg in args:  # inline code: its string literals are names or commands (`os.system("cat .env")`)
            literals = [(m, m.group(1) if m.group(1) is not None else m.group(2)) for m in _LITERAL.finditer(arg)]
            for literal, text in literals:
                found.words.append(text)
                _script(text, found, depth + 1)
            joined = ""  # `open('.e' + 'nv')`: literals joined by `+` are one name
            for (before, text), (after, more) in zip(literals, literals[1:]):
                joined = (joined or text) + more if _JOIN.fullmatch(arg, before.end(), after.start()) else ""
                if joined:
                    found.words.append(joined)
    elif program == "find":
        for at, arg in enumerate(args):
            if arg in _EXEC:
                found.wide = True
                _simple(args[at + 1:], found, depth + 1)
                args = args[:at]
                break
    elif program in ARCHIVERS:  # `tar cz . | base64`: every file under a folder, none by name
        found.wide = True
    elif program in SEARCHERS:
        found.searches = True
        found.wide = found.wide or any(_hides_names(program, arg) for arg in args)
    elif program in ("source", ".") and args and ACTIVATE.search(args[0]):
        args = args[1:]  # a virtualenv's activation: a script run (like `.venv/bin/python`), nothing of it printed
    elif program == "git" and args[:1] and args[0] in MESSAGE_TAKERS:
        args = _without_messages(args)
    for arg in args:
        found.words += _pieces(arg)


def _without_messages(args: list[str]) -> list[str]:
    """A git command's arguments without the text of its `-m`/`--message` options (`git commit -am 'read
    settings from .env'` names no file it reads). Only the plain forms (`-m TEXT`, `-am TEXT`,
    `--message TEXT`, `--message=TEXT`), and only a text the shell leaves as it is: one it could expand
    (`"$(cat .env)"`, a backtick, a variable, `{x,--pathspec-from-file=.env}`) or that reads as an option
    stays a word like any other."""
    kept, message = [], False
    for arg in args:
        if message and _plain_text(arg):
            message = False
            continue
        message = arg in ("-m", "-am", "--message")
        if arg.startswith("--message=") and _plain_text(arg.split("=", 1)[1]):
            continue
        kept.append(arg)
    return kept


def _plain_text(text: str) -> bool:
    return not text.startswith("-") and not _EXPANDS.search(text)


def _hides_names(program: str, arg: str) -> bool:
    """A search option that prints matches without the file each comes from."""
    if arg in ("--no-filename", "--nofilename"):
        return True
    flag = "I" if program == "rg" else "h"
    return arg.startswith("-") and not arg.startswith("--") and flag in arg


def _pieces(word: str) -> list[str]:
    """A word, its brace alternatives, the pieces code and URLs put around a name, and what follows a
    short option's letter (`-F.env`: git reads `.env`)."""
    found = [word, word[2:]] if re.match(r"-[A-Za-z].", word) else [word]
    alternatives = _BRACES.search(word)
    if alternatives:
        found += [word[:alternatives.start()] + choice + word[alternatives.end():]
                  for choice in alternatives.group(1).split(",")[:32]]
    for each in list(found):
        found += _AROUND.split(each)
    return [piece for piece in found if piece]
