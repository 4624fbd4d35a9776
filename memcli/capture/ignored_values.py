"""The values the ignored files of a session's project hold, and a text with each of them replaced.

memcli.capture.ignored_content decides by names: an event naming an ignored file is withheld. Names
cannot catch a file reached through a listing (`cat $(grep -rl KEY .)`), a name built at run time
(`printf`, `$'\\x2e'env`, `open('.e'+'nv')`), a program that reads `.env` on its own (`printenv`,
`docker compose config`) or a link with an innocent name. So every text of an event (a tool's input,
output and error, a prompt, an answer) also loses each value an ignored file of the folder holds,
replaced by REDACTED wherever it occurs, whichever way it came.

A value is what follows a key (`KEY=VALUE`, `export KEY=VALUE`, `KEY: VALUE`, `"key": "value"`,
`key = 'value'`, `'key' => 'value'`), a `.pgpass` line's password, a netrc `password`, the password
of a URL (`postgres://user:PASSWORD@host`), a PEM body line, or a line that is one word alone (a token
file, a base64 line). Only a value that cannot be common text is taken (`hidden`): replacing `true`,
`localhost`, `5432` or `development` wherever it occurs would cut ordinary output to pieces.

Which files give values (`gives_values`): a file named as a placeholder (`.env.example`, `*.sample`,
`*.template`, `*.dist`) never does: it is committed for others to copy and holds what anyone may read
(`APP_MODULE=main:app`), even when a rule such as the built-in `.env*` ignores it. A file the user's
`.memignore`, the user's ignore file or the built-in denylist ignores always does: those rules name
secrets on purpose. A file only `.gitignore` (or `.git/info/exclude`) ignores does only when its name
says settings or keys (`.env*`, `*.pem`, `*.key`, `credentials.json`, `local_settings.py`, a `.yml` or
`.toml`): git ignores logs, build output and personal notes (`server.log`, `CLAUDE.local.md`) for other
reasons than secrecy, and their text is the very text later output repeats; those give none.

Values are plain strings replaced as such (never made into a regex), each also in the forms JSON output
escapes it to (`\\/`, `\\"`, `\\u0026`), kept in memory by the queue runner, never written or logged; a
count says how many were replaced, never which.
"""

from __future__ import annotations

import json
import re
from typing import Iterable
from urllib.parse import unquote, urlsplit

REDACTED = "[REDACTED:ignored-file]"
MIN_CHARS = 8  # a shorter value is common text somewhere (`true`, `5432`, `admin`)
MAX_VALUE_CHARS = 4096  # a longer "value" is a blob, not a setting; its lines are taken instead

_COMMENT = ("#", ";", "//", "<!--")
_ASSIGN = re.compile(r"""^(?:export\s+|set\s+|setx\s+|\$)?["']?[\w.\-\[\]]{1,200}["']?\s*(?:=>|:=|=|:(?!//))\s*(.*)$""")
_JSON_PAIR = re.compile(r'"(?:[^"\\]|\\.){1,200}"\s*:\s*("(?:[^"\\]|\\.)*")')
_PGPASS = re.compile(r"^(?:[^:\s\\]|\\.)*:(?:[^:\s\\]|\\.)*:(?:[^:\s\\]|\\.)*:(?:[^:\s\\]|\\.)*:(\S+)$")
_NETRC = re.compile(r"(?:^|\s)(?:password|passwd|account)\s+(\S+)")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]{6,}={1,2}$")
_PEM = re.compile(r"^-----(?:BEGIN|END) [A-Z0-9 ]+-----$")
# Generated values of one kind of character, long enough to be no word or count: a Gmail app password
# (16 letters), an API key of digits.
_GENERATED = re.compile(r"^(?:[A-Za-z]{16,}|\d{12,})$")
_PATH = re.compile(r"^[~.]?/?[\w.-]+(?:/[\w.-]+)*/?$")  # /var/log/app, ./data: taken only for a generated part
# Values that are common text however long: numbers, versions, dates, addresses, hosts with a port,
# e-mail addresses, plain words and names (`smtp.gmail.com`, `my_app-db`).
_COMMON = re.compile(r"""^(?:[vV]?[\d.,:/+_ -]+              # 3000, 1.2.3, 2024-01-01, 10.0.0.1:80
                           |[\w.-]+:\d{1,5}                    # db:5432, localhost:6379
                           |[\w.+-]+@[\w-]+(?:\.[\w-]+)+        # noreply@example.com
                           |[a-z._-]+|[A-Z._-]+|[A-Za-z]+      # development, my_app.db, INFO, Postgres
                           |(?=(?:\D*\d){0,2}\D*$)[a-z\d._-]+    # us-east-1, python3.11, node-18
                           |\$\{?\w+\}?|[^A-Za-z0-9]+           # ${DB_PASSWORD}, another variable; ********
                           )$""", re.VERBOSE)
# Settings that are text anyone writes, however long: a lowercase `name:tag` or `module:attr` whose parts
# are words and numbers (`main:app`, `python:3.12-slim`, `ghcr.io/acme/api:1.4`; `admin:s3cr3tpa55`,
# whose part mixes them, is no such text), a locale, a `Region/City` time zone, a wildcard domain, a
# mail sender's display name and address.
_PIECE = r"(?:[a-z]+|\d+)"
_ZONE = r"[A-Z][a-z]+(?:[_-][A-Z]?[a-z]+)*"  # a place's name in a time zone: New_York, Port-au-Prince
_SHAPES = re.compile(rf"""^(?:{_PIECE}(?:[./_-]{_PIECE})*:{_PIECE}(?:[._-]{_PIECE})*   # main:app, node:20-alpine
                            |[a-z]{{2,3}}_[A-Z]{{2}}(?:\.[\w-]+)?(?:@\w+)?           # en_US.UTF-8
                            |{_ZONE}(?:/{_ZONE}){{1,2}}|Etc/GMT[+-]\d{{1,2}}         # America/New_York, Etc/GMT+5
                            |\*\.[\w.-]+                                        # *.example.com
                            )$""", re.VERBOSE)
_ADDRESSED = re.compile(r"""^["']?([^"'<>]*?)["']?\s*<[^@\s<>]+@[\w.-]+>$""")  # Acme Support <help@acme.io>
# A word of a phrase: a plain or capitalised word, an acronym, a number, an option (`--port`), a dash;
# a value made only of such words (`Acme Payments`, `npm run dev -- --port 3001`) is prose or a command.
_WORD = re.compile(r"^(?:[A-Z]?[a-z]+|[A-Z]+|\d+|-{1,2}[a-z][a-z-]*|-{1,2}|&)[.,:;!?]?$")
# Names a file is committed under to be copied: its values are placeholders anyone may read.
_PLACEHOLDER = frozenset(("example", "sample", "template", "tpl", "dist", "defaults"))
# Names that say settings or keys: of the files only git ignores, these give values.
_SETTINGS_NAME = re.compile(r"""(?ix)^\.env|\.env$|^\.(?:pgpass|netrc|npmrc|pypirc|htpasswd|git-credentials)$|^id_(?:rsa|dsa|ecdsa|ed25519)
                               |(?:^|[._-])(?:env|secrets?|credentials?|creds|tokens?|passwords?|passwd|api[_-]?keys?
                                  |private|auth|settings|config|keys?)(?:[._-]|$)
                               |\.(?:pem|key|p12|pfx|jks|keystore|kubeconfig|tfvars|json|ya?ml|toml|ini|cfg|cnf|conf|properties|php)$""")


def values_of(text: str) -> set[str]:
    """The values a file's text holds that are worth replacing wherever they occur (see `hidden`)."""
    found: set[str] = set()
    in_pem = False
    for raw in text.lstrip("\ufeff").splitlines():
        line = _LIST_ITEM.sub("", raw.strip())  # `- POSTGRES_PASSWORD=...` of a compose list, `- sk_live_...`
        if not line or _comment(line) or line.startswith("[") and line.endswith("]") or _MARKUP.match(line):
            continue
        if _PEM.match(line):
            in_pem = line.startswith("-----BEGIN")
            continue
        for value in _candidates(line, in_pem):  # `Bearer TOKEN`, `{ user = "app", token = "TOKEN" }`: the token too
            found.update(part for part in {value, *(word.strip(_AROUND_WORD) for word in value.split())} if hidden(part))
    return found


def _comment(line: str) -> bool:
    """A comment line; not `.npmrc`'s `//registry.example.org/:_authToken=...`, whose `//` opens a URL."""
    return line.startswith(_COMMENT) and not (line.startswith("//") and "=" in line and line[2:3] not in " /")


def _candidates(line: str, in_pem: bool) -> list[str]:
    if in_pem or _BASE64.match(line) or " " not in line and "=" not in line and ":" not in line:
        item = _QUOTED_ITEM.match(line)  # an item of a JSON array spread over lines: `"tok_...",`
        try:
            return [json.loads(item.group(1)) if item else line]  # a PEM body line, a base64 line, a token alone
        except ValueError:
            return [line]
    found = []
    for listed in _JSON_LIST.findall(line):  # `{"tokens": ["tok_...", "tok_..."]}`
        found += _JSON_ITEM.findall(listed)
    for quoted in _JSON_PAIR.findall(line):
        try:
            value = json.loads(quoted)
        except ValueError:
            continue
        found += [part.strip() for part in value.splitlines()]  # a key's PEM in one JSON string
    if found:
        return _with_passwords(found)
    npmrc = _NPMRC.match(line)
    if npmrc:
        return [npmrc.group(1)]
    pgpass = _PGPASS.match(line) if "://" not in line else None  # not a URL of several hosts with ports
    if pgpass:
        return [pgpass.group(1).replace("\\:", ":").replace("\\\\", "\\")]
    netrc = _NETRC.findall(line) if "=" not in line else None  # not `password = ...` of an INI or a TOML
    if netrc:
        return netrc
    assigned = _ASSIGN.match(line)
    if assigned:
        return _with_passwords(_as_read(_unquoted(assigned.group(1))))
    return _with_passwords([line]) if " " not in line else []


_LIST_ITEM = re.compile(r"^-\s+")
_JSON_LIST = re.compile(r"\[([^\[\]]*)\]")
_JSON_ITEM = re.compile(r'"((?:[^"\\]|\\.)*)"')
_AROUND_WORD = "\"',;{}[]()"  # what an inline table or a list puts around a word
_NPMRC = re.compile(r"^//\S+?:_(?:authToken|auth|password)\s*=\s*(\S+)$")  # .npmrc's registry credentials
_MARKUP = re.compile(r"^</?[\w:.-]+/?>$")  # `</component>` of an IDE's workspace.xml: structure, not a setting
_QUOTED_ITEM = re.compile(r'^("(?:[^"\\]|\\.)*"),?$')
_DOUBLE_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(.)")


def _unquoted(value: str) -> str:
    """A value as written inside its quotes (a double-quoted one up to its first unescaped `"`), or up to
    a ` #` comment; a trailing `,` or `;` of a config file's line goes."""
    value = value.strip().rstrip(",;").strip()
    quoted = _DOUBLE_QUOTED.match(value)
    if quoted:
        return quoted.group(1)
    if value and value[0] in "'`":
        end = value.find(value[0], 1)
        return value[1:end] if end > 0 else value[1:]
    return value.split(" #", 1)[0].strip()


def _as_read(value: str) -> list[str]:
    """A value as written and as programs read it when that differs: a dotenv's `\\"` and `\\n` decoded
    (a key kept on one line gives each of its lines, its BEGIN/END lines aside), compose's `$$` as `$`."""
    found = [value]
    if "\\" in value:
        decoded = _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), value)
        found += [line.strip() for line in decoded.splitlines() if not _PEM.match(line.strip())]
    if "$$" in value:
        found.append(value.replace("$$", "$"))
    return found


def _with_passwords(values: list[str]) -> list[str]:
    """The values and the password of each URL among them (`redis://:PASSWORD@host`), which output
    shows alone (a driver's error, a masked URL's neighbour)."""
    found = list(values)
    for value in values:
        if "://" in value and "@" in value:
            try:
                password = urlsplit(value).password
            except ValueError:
                continue
            if password:
                found.append(unquote(password))
    return found


def hidden(value: str, in_url: bool = False) -> bool:
    """Whether a value is replaced wherever it occurs: at least MIN_CHARS long, and generated-looking
    (`_GENERATED`) or none of: a common shape (`_COMMON`, `_SHAPES`), a phrase of plain words, a display
    name with its address, a URL whose parts are all common. A part of a URL (`in_url`) is judged without
    `_SHAPES` and phrases: `app:pw-of-words` before an `@` is a login, not an image's tag."""
    if not MIN_CHARS <= len(value) <= MAX_VALUE_CHARS or "\x00" in value:
        return False
    if _GENERATED.match(value):
        return True
    if _COMMON.match(value) or not in_url and (_SHAPES.match(value) or _phrase(value)):
        return False
    addressed = _ADDRESSED.match(value)
    if addressed and _plain(addressed.group(1)):
        return False
    if "://" in value or "/" in value and _PATH.match(value):
        parts = re.split(r"[/?&=#@]+", value.split("://", 1)[-1])
        return any(len(part) >= MIN_CHARS and hidden(part, True) for part in parts)
    if (":" in value or "/" in value) and " " not in value:  # `./app/:/usr/src/app/`, `${workspaceFolder}/app`
        return any(len(part) >= MIN_CHARS and hidden(part, in_url) for part in re.split(r"[/:]+", value))
    return True


def _plain(text: str) -> bool:
    """Plain words only (none at all counts)."""
    return all(_WORD.match(word) for word in text.split())


def _phrase(value: str) -> bool:
    """Words of common text only (`Acme Payments`, `python manage.py runserver 0.0.0.0:8000`): prose or a
    command, which output repeats. Not four or more lowercase words of three letters or more, a passphrase or a wallet's
    seed phrase as diceware and BIP-39 make them: prose has short words, capitals or punctuation."""
    words = value.split()
    if len(words) >= 4 and all(word.isalpha() and word.islower() and len(word) >= 3 for word in words):
        return False
    words = [word.strip(_AROUND_WORD + ":") for word in words]  # `{"**/__pycache__": true}` of a settings file
    return len(words) > 1 and all(not word or _WORD.match(word) or not hidden(word) for word in words)


def gives_values(name: str, only_git: bool) -> bool:
    """Whether an ignored file named `name` gives values (see the module docstring): never a placeholder
    (`.env.example`), else always when a mem rule or the built-in denylist ignores it, and when only git
    does (`only_git`), when its name says settings or keys."""
    if _PLACEHOLDER & set(re.split(r"[._-]", name.lower())):  # .env.example, .env-sample, config_template.yml
        return False
    return not only_git or bool(_SETTINGS_NAME.search(name))


def _forms(value: str) -> set[str]:
    """A value and the forms JSON output escapes it to: `\\"` and `\\\\` (every encoder), `\\/` (PHP),
    `\\u0026` for `&`, `<`, `>` (Go), `\\u00e9` for what is not ASCII (Python's default)."""
    if value.isascii() and not any(c in value for c in '"\\/&<>') and value.isprintable():
        return {value}  # as JSON writes it
    escaped = json.dumps(value, ensure_ascii=False)[1:-1]
    forms = {value, escaped, escaped.replace("/", "\\/"), json.dumps(value)[1:-1]}
    forms.add("".join(f"\\u{ord(c):04x}" if c in "&<>" else c for c in escaped))
    return forms


class IgnoredValues:
    """The values of some ignored files, replaced in any text."""

    FEW_PREFIXES = 16  # up to this many, a text is searched for each prefix (in C); beyond, scanned once

    def __init__(self, values: Iterable[str]):
        # Each value (and escaped form) filed under its first MIN_CHARS characters, the longest first: a
        # text is looked at once whatever the number of values, and a value holding another goes whole.
        self._index: dict[str, list[str]] = {}
        for value in sorted({form for value in values for form in _forms(value)}, key=len, reverse=True):
            self._index.setdefault(value[:MIN_CHARS], []).append(value)

    def __bool__(self) -> bool:
        return bool(self._index)

    def replaced(self, text: str) -> tuple[str, int]:
        """The text with every value replaced by REDACTED, and how many replacements were made: leftmost
        first, and there the longest value; plain string comparisons only."""
        if not self._index or len(text) < MIN_CHARS:
            return text, 0
        parts, count, done = [], 0, 0
        for at in self._starts(text):
            if at < done:
                continue
            for value in self._index.get(text[at:at + MIN_CHARS], ()):
                if text.startswith(value, at):
                    parts += [text[done:at], REDACTED]
                    count, done = count + 1, at + len(value)
                    break
        return ("".join(parts) + text[done:], count) if count else (text, 0)

    def _starts(self, text: str) -> Iterable[int]:
        """Where a value may start: each place a prefix occurs, found by `str.find`, for a few prefixes;
        every place, each looked up in the index once, for many (~90k values of 2 MiB of settings)."""
        if len(self._index) > self.FEW_PREFIXES:
            return range(len(text) - MIN_CHARS + 1)
        found = set()
        for prefix in self._index:
            at = text.find(prefix)
            while at >= 0:
                found.add(at)
                at = text.find(prefix, at + 1)
        return sorted(found)
