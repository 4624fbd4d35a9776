"""Secrets found by the name they are given: assignments (`password = "..."`, `"api_key": "..."`,
`SECRET=...`), command-line flags, a Dockerfile's ENV, XML elements, a password said in a sentence or
as a passphrase. Their values pass the tests of memcli.privacy.secret_values."""

from __future__ import annotations

import re
from collections import Counter

from memcli.privacy.secret_values import Detector, CODE, PASSWORD_WORD, REFERENCE, SECRET_WORD, SECRET_WORDS, generated, is_placeholder, looks_random


# An assignment: a key that ends in a secret word, an operator, then a quoted or bare value.
# Quoted values are literals; bare values may also be code, which is told apart in assignment_accept.
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


# `pass` and `pw` only as a whole name or after a separator (`db_pw`), never inside a word (`compass`).
_SHORT_PASS = r"(?<=[\w])[_.-](?:pass|pw)|(?<![\w.-])(?:pass|pw)"
ASSIGNMENT = _assignment(rf"{SECRET_WORDS}|{_SHORT_PASS}")
# Names that hold a secret only sometimes (`STRIPE_KEY`, `cache_key`, `auth`): the value must look generated.
KEYED = _assignment(r"key|keys|auth|credentials?|creds|cookie|session[_-]?(?:id|key)|sid")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")


def _entropy(value: str) -> float:
    import math

    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def keyed_accept(m: re.Match) -> bool:
    value = m.group(_value_group(m)).strip()
    return (len(value) >= 16 and looks_random(value) and _entropy(value) >= 3.5 and not _UUID.match(value)
            and not REFERENCE.match(value) and assignment_accept(m))
# A command-line flag named like a secret: `--password hunter2`, `--api-key=...`.
FLAG = re.compile(
    rf"""(?<!\S)--(?P<key>[\w-]*?(?:{SECRET_WORDS}))(?:=|[ \t]+)"""
    r"""(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|(?P<bare1>[^\s"'<>|;&$-][^\s"'|;&]*))""",
    re.IGNORECASE,
)
_VALUE_GROUPS = ("q1", "q2", "q3", "q4", "q5", "bare1", "bare2")
_PROSE_EQUALS = re.compile(r"""["'\]]*=[ \t]+""")
_RUNS_ON = re.compile(r"[ \t]+[\w(]")


def _value_group(m: re.Match) -> str:
    return next(g for g in _VALUE_GROUPS if g in m.re.groupindex and m.group(g) is not None)


def inline_accept(m: re.Match) -> bool:
    """A spaced assignment said in a sentence: only a value that looks generated (prose has words there,
    and the sentence runs on after it)."""
    value = m.group(_value_group(m)).strip()
    return not (is_placeholder(value) or REFERENCE.match(value) or CODE.match(value)) and generated(value)


def assignment_accept(m: re.Match) -> bool:
    group = _value_group(m)
    value = m.group(group).strip()
    if is_placeholder(value) or REFERENCE.match(value):
        return False
    if m.group("key").lower() in ("pass", "pw") and (value.isdigit() or len(value) < 4):
        return False  # `pass: 12` counts tests that passed
    if group.startswith("bare"):
        if CODE.match(value):
            return False
        operator = m.string[m.end("key") : m.start(group)]
        # `?token= to reset`: a space after '=' with none before it is prose, not an assignment.
        if _PROSE_EQUALS.fullmatch(operator):
            return False
        # `token = await getToken()`: a spaced assignment whose value runs on is an expression.
        if operator[:1] in " \t" and _RUNS_ON.match(m.string, m.end(group)):
            return False
    # `password = password`, `token=auth_token`: one variable handed to another.
    return not (re.fullmatch(r"[A-Za-z_]\w*", value) and SECRET_WORD.search(value))


_PASSWORD_KEY = r"[\w.-]*?(?:passphrase|password|passwd|pwd|(?<=\w)[_.-]pass)"
# A password-named key given a value of several words up to the end of the line (a passphrase):
# `password = correct horse battery staple`, or `Passphrase: ...` as the first thing on a line.
# Words that make `<word> password: ...` an instruction (`set password: x then restart`), not a name.
_VERBS = r"(?i:set|use|change|reset|enter|type|update|rotate|new|old|your|my|the|no|forgot)"
PHRASE = re.compile(
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
LINE_PASSWORD = re.compile(
    rf"""^[ \t]*(?:export[ \t]+)?["']?(?P<key>{_PASSWORD_KEY})["']?[ \t]*(?::|=(?!=))[ \t]*(?P<secret>[^\s"'`$<#][^\s]*)[ \t]*$""",
    re.IGNORECASE | re.MULTILINE,
)


def line_password_accept(m: re.Match) -> bool:
    value = m.group("secret")
    return not (is_placeholder(value) or REFERENCE.match(value) or CODE.match(value)
                or (re.fullmatch(r"[A-Za-z_]\w*", value) and SECRET_WORD.search(value)))


# A secret-named variable given its value after a space: a Dockerfile's `ENV API_TOKEN value`, fish's
# `set -x DB_PASSWORD value` (`set -Ux`, `set --export`). The value is one word or one quoted string at
# the end of the line.
SPACED = re.compile(
    rf"""^[ \t]*(?:ENV|set(?:[ \t]+--?[A-Za-z]+)+)[ \t]+(?P<key>[\w.-]*?(?:{SECRET_WORDS}|(?<=\w)[_.-]pass))[ \t]+"""
    r"""(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|(?P<bare1>[^\s"'`$<#=][^\s]*))[ \t]*$""",
    re.IGNORECASE | re.MULTILINE,
)
# The same said in a sentence ("then I ran: set -x DB_PASSWORD Pq8s...; and it worked", "ENV API_TOKEN ...
# after the FROM line"): taken only when the value looks generated (memcli.privacy.detectors).
SPACED_INLINE = re.compile(
    rf"""(?:^|(?<=[\s:;(`]))(?:ENV|set(?:[ \t]+--?[A-Za-z]+)+)[ \t]+(?P<key>[\w.-]*?(?:{SECRET_WORDS}|(?<=\w)[_.-]pass))[ \t]+"""
    r"""(?:"(?P<q1>[^"\n]*)"|'(?P<q2>[^'\n]*)'|(?P<bare1>[^\s"'`$<#=;,][^\s;,)]*))""",
    re.IGNORECASE | re.MULTILINE,
)
_NAMED = rf"[\w.-]*?(?:{SECRET_WORDS}|(?<=\w)[_.-](?:pass|pw))"
# A secret-named name and its value given apart, in one object: Kubernetes and ECS environment entries
# (`- name: DB_PASSWORD` then `value: ...`, `{"name": "DB_PASSWORD", "value": "..."}`), .NET and Spring
# XML (`<add key="DbPassword" value="..."/>`, `<property name="password" value="..."/>`). Between the
# two: no other name, no bracket (`valueFrom: {secretKeyRef: ...}` is a reference, not a value).
NAME_VALUE = re.compile(
    rf"""(?<![\w-])["']?(?:name|key)["']?[ \t]*[:=][ \t]*["']?(?P<key>{_NAMED})["']?(?![\w.-])
    (?:(?!["']?(?:name|key)["']?[ \t]*[:=])[^{{}}\[\]<>]){{0,160}}?
    (?<![\w-])["']?value["']?[ \t]*[:=][ \t]*
    (?:"(?P<q1>[^"\\\n]*(?:\\.[^"\\\n]*)*)"|'(?P<q2>[^'\n]*)'|(?P<bare1>[^\s"'`,;&|>{{\[\]}}]+))""",
    re.IGNORECASE | re.VERBOSE,
)
# The same entry with its value first (`- value: ...` then `name: DB_PASSWORD`).
VALUE_NAME = re.compile(
    rf"""(?<![\w-])["']?value["']?[ \t]*[:=][ \t]*
    (?:"(?P<q1>[^"\\\n]*(?:\\.[^"\\\n]*)*)"|'(?P<q2>[^'\n]*)'|(?P<bare1>[^\s"'`,;&|>{{\[\]}}]+))
    (?:(?!["']?(?:name|key|value)["']?[ \t]*[:=])[^{{}}\[\]<>]){{0,160}}?
    (?<![\w-])["']?(?:name|key)["']?[ \t]*[:=][ \t]*["']?(?P<key>{_NAMED})["']?(?![\w.-])""",
    re.IGNORECASE | re.VERBOSE,
)
# A Terraform variable named like a secret, with a default: `variable "db_password" { default = "..." }`.
TERRAFORM = re.compile(
    rf"""\bvariable[ \t]+"(?P<key>{_NAMED})"[ \t]*\{{(?:(?!\bvariable\b)[^{{}}]){{0,400}}?\bdefault[ \t]*=[ \t]*"""
    r"""(?:"(?P<q1>[^"\\\n]*(?:\\.[^"\\\n]*)*)"|<<-?(?P<tag>[A-Za-z_]+)[ \t]*\r?\n(?P<q2>[\s\S]{0,4000}?)\r?\n[ \t]*(?P=tag)\b"""
    r"""|(?P<bare1>[^\s"<{}\[\]][^\s"{}\[\]]*))""",
    re.IGNORECASE,
)
# An XML element named like a secret (`<password>...</password>` in Maven's settings.xml).
XML = re.compile(rf"""<(?P<key>[\w:.-]*?(?:{SECRET_WORDS}))>(?P<bare1>[^<>\s][^<>\n]*?)</(?P=key)>""", re.IGNORECASE)
# A password said in a sentence: `the ssh password is Xk3-lamp`, `wifi passphrase was: ...`, `my pw is ...`,
# `the password for prod is ...`, `the db password was changed to ...`, `use password ... to log in`,
# `Password is "two words"`. A closing `!` belongs to the value (`hunter2-Blue!`): losing an exclamation
# mark costs less than keeping the last character of a password.
_SAID_NAME = r"(?:password|passphrase|passwd|passcode|pwd|pw|pass|pin)"
_SAID_VALUE = r"""["'`]?(?P<secret>(?<=["'`])[^"'`\n]{4,64}(?=["'`])|[^\s"'`]+?)["'`]?(?=[.,;?)]*(?:\s|$))"""
_SAID_FOR = r"[ \t]+(?:for|of|on|to)[ \t]+(?:the[ \t]+)?[\w.@/-]+(?:[ \t]+(?:account|user|server|box|db|database))?"
_SAID_VERB = (r"[ \t]+(?:(?:is|was|has[ \t]+been)[ \t]+)?(?:changed|set|reset)[ \t]+to|[ \t]+is[ \t]+now|[ \t]+is|[ \t]+was"
              r"|[ \t]+[:=]|[ \t]*(?:->|=>)")


def _said(names: str) -> re.Pattern:
    return re.compile(
        rf"""(?:(?<![\w-]){names}(?:(?:{_SAID_FOR})?(?:{_SAID_VERB})|{_SAID_FOR}[:=])[ \t]+"""
        rf"""|(?<![\w-])(?:use|using|with|enter|type)[ \t]+(?:the[ \t]+)?{names}[ \t]+){_SAID_VALUE}""",
        re.IGNORECASE)


# The same sentences say a token or key (`my token is ...`, `the API secret is ...`); what is said of one
# must look generated (12+ characters, letters and digits), since `the token is invalid` is prose. One
# pattern for both: each scan of a long text costs.
SAID = _said(rf"(?:{_SAID_NAME}|(?:api|access|secret|auth|private|client)[ \t_-]?(?:key|token|secret)|secret|token)")
_SAID_PASSWORD = re.compile(rf"(?<![\w-]){_SAID_NAME}(?![\w-])", re.IGNORECASE)


def _said_password(m: re.Match) -> bool:
    return _SAID_PASSWORD.search(m.string, m.start(), m.start("secret")) is not None


def said_accept(m: re.Match) -> bool:
    value = m.group("secret")
    if not _said_password(m) and (len(value) < 12 or not looks_random(value)):
        return False
    return (len(value) >= 6 and any(c.isdigit() or not c.isalnum() for c in value) and any(c.isalpha() for c in value)
            and not is_placeholder(value) and not REFERENCE.match(value) and not CODE.match(value))


class SaidDetector(Detector):
    def kind_of(self, m: re.Match) -> str:
        return "password" if _said_password(m) else "secret"


def xml_accept(m: re.Match) -> bool:
    value = m.group("bare1").strip()
    return not (is_placeholder(value) or REFERENCE.match(value))


def mixed(value: str) -> bool:
    """Upper case, lower case and digits: a generated key, not a word or a hex hash."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


def near_aws_key_id(m: re.Match) -> bool:
    """An AWS key id within 200 characters, or the word AWS earlier on the value's line."""
    window = m.string[max(0, m.start() - 200) : m.end() + 200]
    line = m.string[m.string.rfind("\n", 0, m.start()) + 1 : m.start()]
    return bool(re.search(r"(?:AKIA|ASIA)[A-Z0-9]{16}|\[REDACTED:aws-access-key\]", window)
                or re.search(r"(?<![A-Za-z])(?i:aws)(?![a-z])", line))


def phrase_accept(m: re.Match) -> bool:
    start, end = _phrase_value(m)
    value = m.string[start:end]
    return (len(value.split()) >= 2 and not is_placeholder(value) and not _PHRASE_CODE.search(value)
            and not _PHRASE_PROSE.search(value))


# A secret-named word and a colon inside a sentence, then one generated-looking word and more of the
# sentence: `set password: hunter2 then restart nginx`. (At the end of a line the YAML form of
# ASSIGNMENT takes it; a value that is a plain word, `token: see the wiki`, is prose.) The pattern
# starts at the colon, which the regex engine finds fast; the name before it is checked after.
PROSE = re.compile(r""":[ \t]+(?P<secret>[^\s"'`<>\[{(,;]+?)(?=[.,;:!?)]*[ \t]+\S)""")
_PROSE_KEY = re.compile(rf"(?<![\w-])[\w.-]*?(?P<key>{SECRET_WORDS})[ \t]*\Z", re.IGNORECASE)


def _prose_key(m: re.Match) -> re.Match | None:
    return _PROSE_KEY.search(m.string, max(0, m.start() - 64), m.start())


def prose_accept(m: re.Match) -> bool:
    value = m.group("secret")
    return (len(value) >= 6 and looks_random(value) and not is_placeholder(value) and not REFERENCE.match(value)
            and not CODE.match(value) and _prose_key(m) is not None)


class ProseDetector(Detector):
    def kind_of(self, m: re.Match) -> str:
        return "password" if PASSWORD_WORD.search(_prose_key(m).group("key")) else "secret"


class PhraseDetector(Detector):
    def span(self, m: re.Match) -> tuple[int, int]:
        return _phrase_value(m)


class AssignmentDetector(Detector):
    """The value sits in one of several alternative groups; `password`-like keys get their own kind."""

    def span(self, m: re.Match) -> tuple[int, int]:
        return m.span(_value_group(m))

    def kind_of(self, m: re.Match) -> str:
        return "password" if PASSWORD_WORD.search(m.group("key")) else "secret"
