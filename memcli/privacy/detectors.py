"""The secret shapes redaction looks for, most specific first, and how each tells a secret from a look-alike.

Secrets are recognised by shape (`ghp_...`, `AKIA...`, PEM blocks, JWTs) or by the name they are
assigned to (`password = "..."`, `"api_key": "..."`, `SECRET=...`). An assigned value is not a secret
when it is empty, a placeholder (`<your password>`, `changeme`, `****`), a reference (`$DB_PASSWORD`,
`${{ secrets.X }}`, `{{ .Values.x }}`), a path or URL, or code (`os.environ["X"]`, `get_token()`,
`settings.SECRET`, `None`). Base64 images (`data:image/png;base64,...`) are left alone: no detector
matches base64 without a token prefix or an assignment.

Kinds: private-key, aws-access-key, aws-secret-key, github-token, gitlab-token, npm-token,
huggingface-token, anthropic-key, openai-key, slack-token, slack-webhook, stripe-key, google-api-key,
jwt, bearer-token, basic-auth, url-password, password (assignments, flags and command lines whose name
says password/passwd/pwd/pass, and a value of several words under such a name), secret (any other
secret-named assignment: token, api_key, ...; and a generated-looking value under a name like *_KEY,
auth, credentials), password-hash (crypt(3), htpasswd), gcp-private-key-id, azure-sas, azure-devops-pat,
and the vendor kinds of memcli/privacy/vendors.py. Private keys are PEM, OpenSSH,
PGP and SSH2 blocks and PuTTY files.

memcli.privacy.redact runs these detectors over a text and replaces what they accept.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

# Characters that may continue a token; a shape-matched token must not be glued to more of them.
_T = r"A-Za-z0-9_-"


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


def _looks_random(value: str) -> bool:
    """Generated keys mix digits and letters; words like "sk-learn-style-estimators" do not."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_PLACEHOLDER = re.compile(
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
_REFERENCE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://.*|(?:~|\.{1,2})?/[\w.@/-]*)$", re.IGNORECASE)
# Unquoted values that are code: a call or subscript, or an attribute chain without digits.
_CODE = re.compile(r"^(?:.*[(\[].*|[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][A-Za-z_$]*)+)$")
_SECRET_WORDS = (
    r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|secret[_-]?key|private[_-]?key|access[_-]?key"
    r"|account[_-]?key|secret[_-]?key[_-]?base"
)
_SECRET_WORD = re.compile(_SECRET_WORDS, re.IGNORECASE)
_PASSWORD_WORD = re.compile(r"pass|pwd", re.IGNORECASE)


def _generated(value: str) -> bool:
    """Letters with digits or punctuation: a password someone chose, not a word of a sentence."""
    return any(c.isalpha() for c in value) and any(c.isdigit() or not c.isalnum() for c in value)


def _is_placeholder(value: str) -> bool:
    value = value.strip()
    return not value or bool(_PLACEHOLDER.match(value))


def _real_secret(m: re.Match) -> bool:
    return not _is_placeholder(m.group("secret"))


# An assignment: a key that ends in a secret word, an operator, then a quoted or bare value.
# Quoted values are literals; bare values may also be code, which is told apart in _assignment_accept.
def _assignment(words: str) -> re.Pattern:
    return re.compile(
    rf"""
    (?<![\w.-])(?P<key>[\w.-]*?(?:{words}))(?![\w-])
    (?:["']\]?)?                                         # the closing quote of a JSON key or of env["KEY"]
    [ \t]*
    (?:
        (?::=|=>|=(?!=)|:[ \t]*[A-Za-z_][\w.\[\]|, ]*?[ \t]+=(?!=))    # = := => and `: str =`
        [ \t]*
        (?:
            "(?P<q1>[^"\\\n]*(?:\\.[^"\\\n]*)*)"
          | '(?P<q2>[^'\n]*)'
          | `(?P<q3>[^`\n]*)`
          | (?P<bare1>[^\s"'`,;&|>{{\[][^\s"'`,;&)}}\]]*)
        )
      |
        :[ \t]*                                          # YAML or JSON
        (?:
            "(?P<q4>[^"\\\n]*(?:\\.[^"\\\n]*)*)"
          | '(?P<q5>[^'\n]*)'
          | (?P<bare2>[^\s"'`,;&|>{{\[\]*!#][^\s,}}\]]*)(?=[ \t]*(?:$|[,}}\]"']|[ \t]\#))
        )
    )
    """,
    re.IGNORECASE | re.VERBOSE | re.MULTILINE,
    )


_ASSIGNMENT = _assignment(rf"{_SECRET_WORDS}|(?<=[\w])[_.-]pass")
# Names that hold a secret only sometimes (`STRIPE_KEY`, `cache_key`, `auth`): the value must look generated.
_KEYED = _assignment(r"key|keys|auth|credentials?|creds|cookie|session[_-]?(?:id|key)|sid")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")


def _entropy(value: str) -> float:
    import math

    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _keyed_accept(m: re.Match) -> bool:
    value = m.group(_value_group(m)).strip()
    return (len(value) >= 16 and _looks_random(value) and _entropy(value) >= 3.5 and not _UUID.match(value)
            and not _REFERENCE.match(value) and _assignment_accept(m))
# A command-line flag named like a secret: `--password hunter2`, `--api-key=...`.
_FLAG = re.compile(
    rf"""(?<!\S)--(?P<key>[\w-]*?(?:{_SECRET_WORDS}))(?:=|[ \t]+)"""
    r"""(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|(?P<bare1>[^\s"'<>|;&$-][^\s"'|;&]*))""",
    re.IGNORECASE,
)
_VALUE_GROUPS = ("q1", "q2", "q3", "q4", "q5", "bare1", "bare2")
_PROSE_EQUALS = re.compile(r"""["'\]]*=[ \t]+""")
_RUNS_ON = re.compile(r"[ \t]+[\w(]")


def _value_group(m: re.Match) -> str:
    return next(g for g in _VALUE_GROUPS if g in m.re.groupindex and m.group(g) is not None)


def _assignment_accept(m: re.Match) -> bool:
    group = _value_group(m)
    value = m.group(group).strip()
    if _is_placeholder(value) or _REFERENCE.match(value):
        return False
    if group.startswith("bare"):
        if _CODE.match(value):
            return False
        operator = m.string[m.end("key") : m.start(group)]
        # `?token= to reset`: a space after '=' with none before it is prose, not an assignment.
        if _PROSE_EQUALS.fullmatch(operator):
            return False
        # `token = await getToken()`: a spaced assignment whose value runs on is an expression.
        if operator[:1] in " \t" and _RUNS_ON.match(m.string, m.end(group)):
            return False
    # `password = password`, `token=auth_token`: one variable handed to another.
    return not (re.fullmatch(r"[A-Za-z_]\w*", value) and _SECRET_WORD.search(value))


_PASSWORD_KEY = r"[\w.-]*?(?:passphrase|password|passwd|pwd|(?<=\w)[_.-]pass)"
# A password-named key given a value of several words up to the end of the line (a passphrase):
# `password = correct horse battery staple`, or `Passphrase: ...` as the first thing on a line.
# Words that make `<word> password: ...` an instruction (`set password: x then restart`), not a name.
_VERBS = r"(?i:set|use|change|reset|enter|type|update|rotate|new|old|your|my|the|no|forgot)"
_PHRASE = re.compile(
    rf"""(?:^[ \t]*(?:-[ \t]+)?(?:(?!{_VERBS}\b)[A-Za-z][\w-]*[ \t]+){{0,2}}["']?(?P<ykey>{_PASSWORD_KEY})["']?[ \t]*:  # `vault password:`
          |(?<![\w.-])(?P<key>{_PASSWORD_KEY})["']?[ \t]*=(?!=))
         [ \t]*(?P<secret>[^\s"'`!|>&*#$<\[{{(][^\n]*)""",
    re.IGNORECASE | re.VERBOSE | re.MULTILINE,
)
_PHRASE_CODE = re.compile(r"[()\[\]{}<>;=`/\\]|(?<!\S)-|\w\.\w|\b(?:if|else|await|lambda|yield|return|new)\b")
# Words of a sentence about a password rather than the password (`password: must be 12 characters`).
_PHRASE_PROSE = re.compile(r"\b(?:must|should|is|are|was|were|be|will|can|cannot|see|stored|kept|lives|characters"
                           r"|required|needs?|same|from|in the)\b", re.IGNORECASE)
_COMMENT = re.compile(r"[ \t]+#")


def _phrase_value(m: re.Match) -> tuple[int, int]:
    """The phrase's span: up to a trailing ` # comment`, without trailing blanks."""
    start, end = m.span("secret")
    comment = _COMMENT.search(m.string, start, end)
    value = m.string[start : comment.start() if comment else end].rstrip()
    return start, start + len(value)


# A password-named key alone on its line (ini, .env, .pypirc, YAML) with one word: the value runs to the end
# of the line, whatever punctuation it holds (`password = Tr0ub4dor&3`, `DB_PASS=a;b,c}`).
_LINE_PASSWORD = re.compile(
    rf"""^[ \t]*(?:export[ \t]+)?["']?(?P<key>{_PASSWORD_KEY})["']?[ \t]*(?::|=(?!=))[ \t]*(?P<secret>[^\s"'`$<#][^\s]*)[ \t]*$""",
    re.IGNORECASE | re.MULTILINE,
)


def _line_password_accept(m: re.Match) -> bool:
    value = m.group("secret")
    return not (_is_placeholder(value) or _REFERENCE.match(value) or _CODE.match(value)
                or (re.fullmatch(r"[A-Za-z_]\w*", value) and _SECRET_WORD.search(value)))


# A secret-named variable given its value after a space: a Dockerfile's `ENV API_TOKEN value`, fish's
# `set -x DB_PASSWORD value`. The value is one word at the end of the line.
_SPACED = re.compile(
    rf"""^[ \t]*(?:ENV|set(?:[ \t]+-[A-Za-z]+)+)[ \t]+(?P<key>[\w.-]*?(?:{_SECRET_WORDS}|(?<=\w)[_.-]pass))[ \t]+"""
    r"""(?P<bare1>[^\s"'`$<#=][^\s]*)[ \t]*$""",
    re.IGNORECASE | re.MULTILINE,
)
# An XML element named like a secret (`<password>...</password>` in Maven's settings.xml).
_XML = re.compile(rf"""<(?P<key>[\w:.-]*?(?:{_SECRET_WORDS}))>(?P<bare1>[^<>\s][^<>\n]*?)</(?P=key)>""", re.IGNORECASE)
# A password said in a sentence: `the ssh password is Xk3-lamp`, `wifi passphrase was: ...`.
_SAID = re.compile(r"""\b(?:password|passphrase|passwd|pin)[ \t]+(?:is|was|=|is[ \t]+now|:)[ \t]+["'`]?"""
                   r"""(?P<secret>[^\s"'`]+?)["'`]?(?=[.,;!?)]*(?:\s|$))""", re.IGNORECASE)


def _said_accept(m: re.Match) -> bool:
    value = m.group("secret")
    return (len(value) >= 6 and any(c.isdigit() or not c.isalnum() for c in value) and any(c.isalpha() for c in value)
            and not _is_placeholder(value) and not _REFERENCE.match(value) and not _CODE.match(value))


def _xml_accept(m: re.Match) -> bool:
    value = m.group("bare1").strip()
    return not (_is_placeholder(value) or _REFERENCE.match(value))


def _mixed(value: str) -> bool:
    """Upper case, lower case and digits: a generated key, not a word or a hex hash."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


def _near_aws_key_id(m: re.Match) -> bool:
    window = m.string[max(0, m.start() - 200) : m.end() + 200]
    return bool(re.search(r"(?:AKIA|ASIA)[A-Z0-9]{16}|\[REDACTED:aws-access-key\]", window))


def _phrase_accept(m: re.Match) -> bool:
    start, end = _phrase_value(m)
    value = m.string[start:end]
    return (len(value.split()) >= 2 and not _is_placeholder(value) and not _PHRASE_CODE.search(value)
            and not _PHRASE_PROSE.search(value))


# A secret-named word and a colon inside a sentence, then one generated-looking word and more of the
# sentence: `set password: hunter2 then restart nginx`. (At the end of a line the YAML form of
# _ASSIGNMENT takes it; a value that is a plain word, `token: see the wiki`, is prose.) The pattern
# starts at the colon, which the regex engine finds fast; the name before it is checked after.
_PROSE = re.compile(r""":[ \t]+(?P<secret>[^\s"'`<>\[{(,;]+?)(?=[.,;:!?)]*[ \t]+\S)""")
_PROSE_KEY = re.compile(rf"(?<![\w-])[\w.-]*?(?P<key>{_SECRET_WORDS})[ \t]*\Z", re.IGNORECASE)


def _prose_key(m: re.Match) -> re.Match | None:
    return _PROSE_KEY.search(m.string, max(0, m.start() - 64), m.start())


def _prose_accept(m: re.Match) -> bool:
    value = m.group("secret")
    return (len(value) >= 6 and _looks_random(value) and not _is_placeholder(value) and not _REFERENCE.match(value)
            and not _CODE.match(value) and _prose_key(m) is not None)


class _ProseDetector(Detector):
    def kind_of(self, m: re.Match) -> str:
        return "password" if _PASSWORD_WORD.search(_prose_key(m).group("key")) else "secret"


class _PhraseDetector(Detector):
    def span(self, m: re.Match) -> tuple[int, int]:
        return _phrase_value(m)


class _AssignmentDetector(Detector):
    """The value sits in one of several alternative groups; `password`-like keys get their own kind."""

    def span(self, m: re.Match) -> tuple[int, int]:
        return m.span(_value_group(m))

    def kind_of(self, m: re.Match) -> str:
        return "password" if _PASSWORD_WORD.search(m.group("key")) else "secret"


def _b64_head(value: str) -> bytes:
    """The first bytes a base64 text stands for (enough to read a PEM header)."""
    import base64
    import binascii

    try:
        return base64.b64decode(value[:64])
    except (binascii.Error, ValueError):
        return b""


def _c(pattern: str, flags: int = 0) -> re.Pattern:
    return re.compile(pattern, flags)


def _vendor_detectors() -> tuple[Detector, ...]:
    """One detector per token shape of memcli/privacy/vendors.py, each standing alone (no token character
    glued before or after it)."""
    from memcli.privacy.vendors import VENDOR_TOKENS

    return tuple(Detector(kind, _c(rf"(?<![{_T}])(?:{token})(?![{_T}])"), keywords=keywords)
                 for kind, keywords, token in VENDOR_TOKENS)


BUILTIN: tuple[Detector, ...] = (
    Detector(  # PEM, OpenSSH and PGP blocks (5 dashes), and SSH2/SECSH blocks (`---- BEGIN SSH2 ... ----`)
        "private-key",
        _c(
            r"-{4,5} ?BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}(?:(?!-{4,5} ?BEGIN)[\s\S])*?"
            r"-{4,5} ?END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}",
            re.DOTALL,
        ),
    ),
    Detector(  # the same blocks with their dashes lost (a paste, a chat message): a base64 body between the lines
        "private-key",
        _c(r"(?<![\w-])BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s+[A-Za-z0-9+/=:,\s-]{40,20000}?END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?"),
    ),
    Detector(  # a PEM private key in base64 (a kubeconfig's `client-key-data`, a Kubernetes secret, an env var)
        "private-key",
        _c(r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}"),
        lambda m: b"PRIVATE KEY" in _b64_head(m.group()),
    ),
    Detector(  # a kubeconfig's client key, whatever it decodes to
        "private-key",
        _c(r"\bclient-key-data:[ \t]*[\"']?(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"),
    ),
    Detector(  # a PuTTY .ppk file, from its header to the MAC that closes it
        "private-key",
        _c(r"PuTTY-User-Key-File-\d+:(?:(?!PuTTY-User-Key-File-)[\s\S])*?Private-(?:MAC|Hash):[ \t]*[0-9A-Fa-f]+"),
    ),
    Detector(
        "aws-access-key",
        _c(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ),
    Detector(
        "aws-secret-key",
        _c(
            r"""(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?[ \t]*(?:=>|:=|[:=]|[ \t])[ \t]*["']?"""
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
    ),
    Detector("github-token", _c(rf"(?<![{_T}])(?:gh[pousr]_[A-Za-z0-9]{{36,255}}|github_pat_[A-Za-z0-9_]{{50,255}})(?![{_T}])")),
    Detector("gitlab-token", _c(rf"(?<![{_T}])glpat-[{_T}]{{20,}}"), lambda m: _looks_random(m.group())),
    Detector("npm-token", _c(rf"(?<![{_T}])npm_[A-Za-z0-9]{{36}}(?![{_T}])")),
    Detector("huggingface-token", _c(rf"(?<![{_T}])hf_[A-Za-z0-9]{{34}}(?![{_T}])")),
    Detector("anthropic-key", _c(rf"(?<![{_T}])sk-ant-[{_T}]{{20,}}"), lambda m: _looks_random(m.group())),
    Detector(
        "openai-key",
        _c(rf"(?<![{_T}])sk-(?:(?:proj|svcacct|admin)-[{_T}]{{20,}}|[A-Za-z0-9]{{32,}}(?![{_T}]))"),
        lambda m: _looks_random(m.group()),
    ),
    Detector("slack-token", _c(rf"(?<![{_T}])(?:xox[baprs]|xapp)-[A-Za-z0-9-]{{10,}}"), lambda m: _looks_random(m.group())),
    Detector(
        "slack-webhook",
        _c(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{20,})"),
    ),
    Detector("stripe-key", _c(rf"(?<![{_T}])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{20,}}(?![{_T}])")),
    Detector("google-api-key", _c(rf"(?<![{_T}])AIza[0-9A-Za-z_-]{{35}}(?![{_T}])")),
    *_vendor_detectors(),
    Detector(  # an AWS secret key without its label, beside its key id (a credentials CSV, a pasted pair)
        "aws-secret-key",
        _c(r"(?<![A-Za-z0-9/+=])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        lambda m: _mixed(m.group("secret")) and _near_aws_key_id(m),
        keywords=("AKIA", "ASIA", "REDACTED:aws-access-key"),
    ),
    Detector(  # a GCP service account's key id
        "gcp-private-key-id",
        _c(r"""private_key_id["']?[ \t]*[:=][ \t]*["']?(?P<secret>[0-9a-f]{40})\b"""),
    ),
    Detector(  # an Azure SAS signature in a URL or connection string
        "azure-sas",
        _c(r"(?<![\w-])sig=(?P<secret>[A-Za-z0-9%+/]{20,}={0,2}(?:%3D){0,2})"),
        keywords=("sig=",),
    ),
    Detector(  # an Azure DevOps personal access token of the 52-character form (base32, lower case)
        "azure-devops-pat",
        _c(r"(?<![\w-])[a-z2-7]{52}(?![\w-])"),
        lambda m: _looks_random(m.group()),
    ),
    Detector(  # a crypt(3) hash: /etc/shadow, htpasswd (MD5-crypt, bcrypt, SHA-crypt, yescrypt, argon2)
        "password-hash",
        _c(r"(?<![\w$])\$(?:1|2[abxy]?|5|6|y|7|apr1|argon2(?:id|i|d))\$[./A-Za-z0-9$=,+-]{16,}"),
    ),
    Detector("password-hash", _c(r"\{SSHA?\}[A-Za-z0-9+/]{27,}={0,2}")),  # htpasswd's SHA1
    Detector("jwt", _c(rf"(?<![{_T}])eyJ[{_T}]{{5,}}\.[{_T}]{{5,}}\.[{_T}]*(?![.{_T}])")),
    Detector(
        "bearer-token",
        _c(
            r"""(?i:authorization)["']?[ \t]*[:=][ \t]*["']?[ \t]*(?i:bearer|token)[ \t]+(?P<secret>[A-Za-z0-9_.~+/=-]{8,})"""
        ),
        _real_secret,
    ),
    Detector(  # a bearer token outside an Authorization header: `token: Bearer ...`, `-H "Bearer ..."` in prose
        "bearer-token",
        _c(r"(?<![\w-])(?i:bearer)[ \t]+(?P<secret>[A-Za-z0-9_.~+/=-]{16,})"),
        lambda m: _real_secret(m) and _looks_random(m.group("secret")),
    ),
    Detector(
        "basic-auth",
        _c(r"""(?i:authorization)["']?[ \t]*[:=][ \t]*["']?[ \t]*(?i:basic)[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})"""),
    ),
    Detector(
        "url-password",
        # The user part may itself be a token already redacted (`https://<AWS key id>:PASS@host`).
        _c(r"(?<![A-Za-z0-9+.-])(?i:[a-z][a-z0-9+.-]*)://(?:\[REDACTED:[\w.-]+\]|[^\s:/?#@\[\]]*)"
           r":(?P<secret>[^\s/?#]+)@(?=[A-Za-z0-9\[])"),
        _real_secret,
    ),
    Detector(
        "password",  # curl -u user:password
        _c(r"""(?<!\S)(?:-u|--user)(?:=|[ \t]+)["']?[^\s:"'@]+:(?P<secret>[^\s"']+)"""),
        _real_secret,
    ),
    Detector(
        "password",  # mysql -u root -phunter2
        _c(r"""\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,200}?[ \t]-p(?P<secret>[^\s"'-][^\s"']*)"""),
        _real_secret,
    ),
    Detector(  # ~/.netrc: a `machine` or `default` entry, its tokens in any order
        "password",
        _c(r"\b(?:machine\s+\S+|default)(?P<tokens>(?:\s+(?:login|account|port)\s+\S+)*)\s+password\s+(?P<secret>\S+)"
           r"(?P<login>\s+login\s)?"),
        lambda m: _real_secret(m) and bool(m.group("tokens") or m.group("login")),  # not "machine learning password"
    ),
    Detector(  # ~/.pgpass: hostname:port:database:username:password, one entry a line
        "password",
        _c(r"^[ \t]*(?P<host>[^\s:#]+):(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:(?P<secret>\S+?)[ \t]*$", re.MULTILINE),
        lambda m: (_real_secret(m) and not re.fullmatch(r"[0-9a-fA-F]{1,4}", m.group("secret"))  # not IPv6
                   and (_generated(m.group("secret")) or m.group("host") in ("*", "localhost") or "." in m.group("host"))),
    ),
    Detector(  # sshpass -p PASSWORD ssh host
        "password",
        _c(r"""\bsshpass\b[^\n|;&]{0,200}?[ \t]-p[ \t]*["']?(?P<secret>[^\s"']+)["']?(?P<then>[ \t]+\S+)?"""),
        lambda m: _real_secret(m) and (_generated(m.group("secret"))
                                       or re.match(r"[ \t]+(?:ssh|scp|sftp|rsync|git|-)", m.group("then") or "") is not None),
    ),
    Detector("password", _LINE_PASSWORD, _line_password_accept),
    Detector("password", _SAID, _said_accept),  # "the ssh password is ..."
    _AssignmentDetector("secret", _SPACED, _assignment_accept),  # Dockerfile ENV, fish set -x
    _AssignmentDetector("secret", _XML, _xml_accept),
    _PhraseDetector("password", _PHRASE, _phrase_accept),
    _AssignmentDetector("secret", _FLAG, _assignment_accept),
    _AssignmentDetector("secret", _ASSIGNMENT, _assignment_accept),
    _AssignmentDetector("secret", _KEYED, _keyed_accept),
    _ProseDetector("secret", _PROSE, _prose_accept),
)


_SECRET_KEY = re.compile(rf"^[\w.-]*?(?:{_SECRET_WORDS}|(?<=\w)[_.-]pass)$", re.IGNORECASE)


def held_secret(key: str, value: str) -> str | None:
    """The kind of secret `value` is because of the key it is held under (`password: two words`,
    `notes.api_token: ...`, a number under `pin_password`), or None: a field is an assignment whose
    value is the whole string, so it goes whole, whatever its shape. Placeholders, references and
    variable names stay, as they do in text."""
    if not _SECRET_KEY.match(key):
        return None
    value = value.strip()
    if _is_placeholder(value) or _REFERENCE.match(value) or (re.fullmatch(r"[A-Za-z_]\w*", value)
                                                             and _SECRET_WORD.search(value)):
        return None
    return "password" if _PASSWORD_WORD.search(key) else "secret"


# Kinds known by their shape alone (no label or context needed): what a key cut over two lines, or
# hidden in base64, is recognised by once it is whole again (memcli.privacy.redact).
_SHAPE_KINDS = {"aws-access-key", "github-token", "gitlab-token", "npm-token", "huggingface-token", "anthropic-key",
                "openai-key", "slack-token", "stripe-key", "google-api-key"}
SHAPES: tuple[Detector, ...] = tuple(d for d in BUILTIN if d.kind in _SHAPE_KINDS) + _vendor_detectors()
