"""The values the ignored files of a session's folder hold, and a text with each of them replaced.

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

Values are plain strings replaced as such (never made into a regex), kept in memory for one queue run,
never written or logged; a count says how many were replaced, never which.
"""

from __future__ import annotations

import json
import re
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
                           |[^@\s]+@[\w.-]+                    # noreply@example.com
                           |[a-z._-]+|[A-Z._-]+|[A-Za-z]+      # development, my_app.db, INFO, Postgres
                           |(?=(?:\D*\d){0,2}\D*$)[a-z\d._-]+    # us-east-1, python3.11, node-18
                           |\$\{?\w+\}?|[^A-Za-z0-9]+           # ${DB_PASSWORD}, another variable; ********
                           )$""", re.VERBOSE)


def values_of(text: str) -> set[str]:
    """The values a file's text holds that are worth replacing wherever they occur (see `hidden`)."""
    found: set[str] = set()
    in_pem = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(_COMMENT) or line.startswith("[") and line.endswith("]"):
            continue
        if _PEM.match(line):
            in_pem = line.startswith("-----BEGIN")
            continue
        found.update(value for value in _candidates(line, in_pem) if hidden(value))
    return found


def _candidates(line: str, in_pem: bool) -> list[str]:
    if in_pem or _BASE64.match(line) or " " not in line and "=" not in line and ":" not in line:
        return [line]  # a PEM body line, a base64 line, a token alone on its line
    found = []
    for quoted in _JSON_PAIR.findall(line):
        try:
            value = json.loads(quoted)
        except ValueError:
            continue
        found += [part.strip() for part in value.splitlines()]  # a key's PEM in one JSON string
    if found:
        return _with_passwords(found)
    pgpass = _PGPASS.match(line)
    if pgpass:
        return [pgpass.group(1).replace("\\:", ":").replace("\\\\", "\\")]
    netrc = _NETRC.findall(line)
    if netrc:
        return netrc
    assigned = _ASSIGN.match(line)
    if assigned:
        return _with_passwords([_unquoted(assigned.group(1))])
    return _with_passwords([line]) if " " not in line else []


def _unquoted(value: str) -> str:
    """A value as its program reads it: inside its quotes, or up to a ` #` comment; a trailing `,` or
    `;` of a config file's line goes."""
    value = value.strip().rstrip(",;").strip()
    if value and value[0] in "\"'`":
        end = value.find(value[0], 1)
        return value[1:end] if end > 0 else value[1:]
    return value.split(" #", 1)[0].strip()


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


def hidden(value: str) -> bool:
    """Whether a value is replaced wherever it occurs: at least MIN_CHARS long, and generated-looking
    (`_GENERATED`) or neither a common shape (`_COMMON`) nor a URL whose parts are all common."""
    if not MIN_CHARS <= len(value) <= MAX_VALUE_CHARS or "\x00" in value:
        return False
    if _GENERATED.match(value):
        return True
    if _COMMON.match(value):
        return False
    if "://" in value or "/" in value and _PATH.match(value):
        parts = re.split(r"[/?&=#@]+", value.split("://", 1)[-1])
        return any(len(part) >= MIN_CHARS and hidden(part) for part in parts)
    return True


class IgnoredValues:
    """The values of some ignored files, replaced in any text."""

    def __init__(self, values: set[str]):
        # the longest first, so a value holding another is replaced whole
        self._values = sorted(values, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._values)

    def replaced(self, text: str) -> tuple[str, int]:
        """The text with every value replaced by REDACTED, and how many replacements were made."""
        count = 0
        for value in self._values:
            if value in text:
                count += text.count(value)
                text = text.replace(value, REDACTED)
        return text, count
