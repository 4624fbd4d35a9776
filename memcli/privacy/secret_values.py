"""What a secret's value looks like, and what a look-alike does: a placeholder (`<your password>`,
`changeme`, `****`), a reference (`$DB_PASSWORD`, a path or URL), code (`os.environ["X"]`), a word
rather than a generated string. Shared by the detectors of memcli.privacy.detectors and
memcli.privacy.named_secrets."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

# Characters that may continue a token; a shape-matched token must not be glued to more of them.
TOKEN_CHARS = r"A-Za-z0-9_-"
# Before a token known by its prefix: not a letter, digit or dash (the token would be the tail of a longer
# word), but an underscore may be (`_ghp_...`, `MY_x_sk-...`: a name glued on). Prefixes that no word
# holds (`ghp_`, `sk-ant-`, `xoxb-`, `glpat-`) are found after any character (`\nghp_...` in escaped JSON).
LEAD = r"(?<![A-Za-z0-9-])"


@dataclass(frozen=True)
class Detector:
    kind: str
    pattern: re.Pattern
    # Given the match, is the `secret` group (or the whole match) really a secret?
    accept: Callable[[re.Match], bool] = lambda m: True
    keywords: tuple[str, ...] = ()  # when given, text holding none of them cannot match (a cheap test first)

    def span(self, m: re.Match) -> tuple[int, int]:
        return m.span("secret") if "secret" in self.pattern.groupindex else m.span()

    def kind_of(self, m: re.Match) -> str:
        return self.kind


def looks_random(value: str) -> bool:
    """Generated keys mix digits and letters; words like "sk-learn-style-estimators" do not."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


PLACEHOLDER = re.compile(
    r"""^(?:
        [xX*.#_-]+                              # xxxx, ****, ..., ___
      | <[^<>]*>                                # <your password>, <|endoftext|>
      | \[[^\[\]]*\]                            # [SEP], [REDACTED:...]
      | \$.* | %\(.*\)s | \{.*\}                # $VAR, ${VAR}, ${{ secrets.X }}, %(pw)s, {{ .Values.x }}
      | (?:your|my|the|some)[_ -].*             # your_password_here, my-secret
      | change[_-]?me | replace[_-]?me | todo | tbd | fixme | placeholder | example | dummy | redacted
      | none | null | nil | true | false | undefined | nan | empty | required | optional
      | password | passwd | secret | token | api[_-]?key
      | string | str | int | integer | number | bool | boolean | bytes | object | any   # a schema, not a value
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
# Values that point at a secret instead of holding one.
REFERENCE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://.*|(?:~|\.{1,2})?/[\w.@/-]*)$", re.IGNORECASE)
# Unquoted values that are code: a call or subscript, or an attribute chain without digits.
CODE = re.compile(r"^(?:.*[(\[].*|[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][A-Za-z_$]*)+)$")
SECRET_WORDS = (
    r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|secret[_-]?key|private[_-]?key|access[_-]?key"
    r"|account[_-]?key|secret[_-]?key[_-]?base"
)
SECRET_WORD = re.compile(SECRET_WORDS, re.IGNORECASE)
PASSWORD_WORD = re.compile(r"pass|pw", re.IGNORECASE)


def generated(value: str) -> bool:
    """Letters with digits or punctuation: a password someone chose, not a word of a sentence."""
    return any(c.isalpha() for c in value) and any(c.isdigit() or not c.isalnum() for c in value)


def is_placeholder(value: str) -> bool:
    value = value.strip()
    return not value or bool(PLACEHOLDER.match(value))


def real_secret(m: re.Match) -> bool:
    return not is_placeholder(m.group("secret"))
