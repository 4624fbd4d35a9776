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
auth, credentials; and a name and its value given apart: Kubernetes, ECS, XML, Terraform), password-hash
(crypt(3), htpasswd), gcp-private-key-id, azure-sas, azure-devops-pat, discord-webhook, teams-webhook,
function-key, the passwords given to commands (memcli/privacy/command_secrets.py), seed-phrase
(memcli/privacy/seed_phrases.py), and the vendor kinds of memcli/privacy/vendors.py. Private keys are PEM, OpenSSH,
PGP and SSH2 blocks and PuTTY files.

memcli.privacy.redact runs these detectors over a text and replaces what they accept.
"""

from __future__ import annotations

import re

from memcli.privacy.command_secrets import COMMANDS
from memcli.privacy.seed_phrases import SEED_PHRASE
from memcli.privacy.named_secrets import (
    ASSIGNMENT,
    AssignmentDetector,
    FLAG,
    KEYED,
    LINE_PASSWORD,
    NAME_VALUE,
    PHRASE,
    PROSE,
    PhraseDetector,
    ProseDetector,
    SAID,
    SaidDetector,
    SPACED,
    SPACED_INLINE,
    TERRAFORM,
    VALUE_NAME,
    XML,
    assignment_accept,
    inline_accept,
    keyed_accept,
    line_password_accept,
    mixed,
    near_aws_key_id,
    phrase_accept,
    prose_accept,
    said_accept,
    xml_accept,
)
from memcli.privacy.secret_values import Detector, PASSWORD_WORD, REFERENCE, SECRET_WORD, SECRET_WORDS, TOKEN_CHARS, LEAD, generated, is_placeholder, looks_random, real_secret


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

    return tuple(Detector(kind, _c(rf"{LEAD}(?:{token})(?![{TOKEN_CHARS}])"), keywords=keywords)
                 for kind, keywords, token in VENDOR_TOKENS)


# A line of a key block's body (base64), of its headers (`Proc-Type: 4,ENCRYPTED`, `Comment: ...`), or blank.
_BODY_LINE = re.compile(r"[ \t>]*(?:[A-Za-z0-9+/=]+|[A-Za-z][\w-]*:[^\n]*|)[ \t]*\r?")  # `>`: quoted in a mail
_KEY_LINE = re.compile(r"^[ \t>]*[A-Za-z0-9+/]{16,}", re.MULTILINE)


class KeyTailDetector(Detector):
    """An END line and the body lines above it, found from the END line up, one line at a time (a pattern
    that tried every line start for a body would be quadratic in a long run of base64 lines)."""

    @staticmethod
    def body_start(m: re.Match) -> int:
        text, start = m.string, m.start()
        while start > 0:
            above = text.rfind("\n", 0, start - 1) + 1
            if not _BODY_LINE.fullmatch(text, above, start - 1):
                break
            start = above
        return start

    def span(self, m: re.Match) -> tuple[int, int]:
        return self.body_start(m), m.end()


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
    KeyTailDetector(  # the tail of a block whose BEGIN line was cut off (a paste or an output that starts mid-key)
        "private-key",
        _c(r"^[ \t>]*(?:-{4,5} ?)?END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?(?: ?-{4,5})?", re.MULTILINE),
        lambda m: _KEY_LINE.search(m.string, KeyTailDetector.body_start(m), m.start()) is not None,
        keywords=("PRIVATE KEY",),
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
    Detector(  # `aws_secret_access_key = ...`, `Secret access key: ...`, aws configure's `AWS Secret Access Key [None]: ...`
        "aws-secret-key",
        _c(
            r"""(?i:aws[ _.-]?secret[ _.-]?(?:access[ _.-]?)?key|secret[ _.-]?access[ _.-]?key)["']?(?:[ \t]*\[[^\]\n]*\])?"""
            r"""[ \t]*(?:=>|:=|[:=]|[ \t])[ \t]*["']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"""
        ),
    ),
    Detector("github-token", _c(rf"(?:gh[pousr]_[A-Za-z0-9]{{36,255}}|github_pat_[A-Za-z0-9_]{{50,255}})(?![{TOKEN_CHARS}])")),
    Detector("gitlab-token", _c(rf"glpat-[{TOKEN_CHARS}]{{20,}}"), lambda m: looks_random(m.group())),
    Detector("npm-token", _c(rf"{LEAD}npm_[A-Za-z0-9]{{36}}(?![{TOKEN_CHARS}])")),
    Detector("huggingface-token", _c(rf"{LEAD}hf_[A-Za-z0-9]{{34}}(?![{TOKEN_CHARS}])")),
    Detector("anthropic-key", _c(rf"sk-ant-[{TOKEN_CHARS}]{{20,}}"), lambda m: looks_random(m.group())),
    Detector(
        "openai-key",
        _c(rf"(?:sk-(?:proj|svcacct|admin|None)-[{TOKEN_CHARS}]{{20,}}|{LEAD}sk-[A-Za-z0-9]{{32,}}(?![{TOKEN_CHARS}]))"),
        lambda m: looks_random(m.group()),
    ),
    Detector("slack-token", _c(rf"(?:xox[baprs]|xapp)-[A-Za-z0-9-]{{10,}}"), lambda m: looks_random(m.group())),
    Detector(
        "slack-webhook",
        _c(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{20,})"),
    ),
    Detector(  # Discord and Microsoft Teams incoming webhooks: whoever has the URL posts as the channel
        "discord-webhook",
        _c(r"discord(?:app)?\.com/api/(?:v\d+/)?webhooks/(?P<secret>\d{17,20}/[A-Za-z0-9_-]{60,80})"),
        keywords=("webhooks/",),
    ),
    Detector(
        "teams-webhook",
        _c(r"(?i)\.webhook\.office\.com/webhookb2/(?P<secret>[0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/[0-9a-f]{32}"
           r"/[0-9a-f-]{36}(?:/[A-Za-z0-9_-]+)?)"),
        keywords=("webhookb2",),
    ),
    Detector(  # an Azure Function's key in its URL (`?code=`), or any long generated `code=` parameter
        "function-key",
        _c(r"[?&]code=(?P<secret>[A-Za-z0-9_%-]{30,}(?:={1,2}|(?:%3D){1,2})?)(?![A-Za-z0-9_%=-])"),
        lambda m: looks_random(m.group("secret")),
        keywords=("code=",),
    ),
    Detector("stripe-key", _c(rf"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{20,}}(?![{TOKEN_CHARS}])")),
    Detector("google-api-key", _c(rf"{LEAD}AIza[0-9A-Za-z_-]{{35}}(?![{TOKEN_CHARS}])")),
    *_vendor_detectors(),
    SEED_PHRASE,
    Detector(  # an AWS secret key without its label, beside its key id (a credentials CSV, a pasted pair) or
        # after the word AWS on its line (`the AWS secret for ci is ...`)
        "aws-secret-key",
        _c(r"(?<![A-Za-z0-9/+=])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        lambda m: mixed(m.group("secret")) and near_aws_key_id(m),
        keywords=("AKIA", "ASIA", "REDACTED:aws-access-key", "AWS", "aws", "Aws"),
    ),
    Detector(  # a GCP service account's key id
        "gcp-private-key-id",
        _c(r"""private_key_id["']?[ \t]*[:=][ \t]*["']?(?P<secret>[0-9a-f]{40})\b"""),
    ),
    Detector(  # an Azure SAS signature in a URL or connection string
        "azure-sas",
        _c(r"(?<![\w-])sig=(?P<secret>[A-Za-z0-9%+/_-]{20,}={0,2}(?:%3D){0,2})"),
        keywords=("sig=",),
    ),
    Detector(  # an Azure DevOps personal access token of the 52-character form (base32, lower case)
        "azure-devops-pat",
        _c(r"(?<![\w-])[a-z2-7]{52}(?![\w-])"),
        lambda m: looks_random(m.group()),
    ),
    Detector(  # a crypt(3) hash: /etc/shadow, htpasswd (MD5-crypt, bcrypt, SHA-crypt, yescrypt, argon2)
        "password-hash",
        _c(r"(?<![\w$])\$(?:1|2[abxy]?|5|6|y|7|apr1|argon2(?:id|i|d))\$[./A-Za-z0-9$=,+-]{16,}"),
    ),
    Detector("password-hash", _c(r"\{SSHA?\}[A-Za-z0-9+/]{27,}={0,2}")),  # htpasswd's SHA1
    Detector("jwt", _c(rf"{LEAD}eyJ[{TOKEN_CHARS}]{{5,}}\.[{TOKEN_CHARS}]{{5,}}\.[{TOKEN_CHARS}]*(?![.{TOKEN_CHARS}])")),
    Detector(
        "bearer-token",
        _c(
            r"""(?i:authorization)["']?[ \t]*[:=][ \t]*["']?[ \t]*(?i:bearer|token|ssws)[ \t]+(?P<secret>[A-Za-z0-9_.~+/=-]{8,})"""
        ),
        real_secret,
    ),
    Detector(  # a bearer token outside an Authorization header: `token: Bearer ...`, `-H "Bearer ..."` in prose;
        # Okta's API tokens go as `SSWS <token>`
        "bearer-token",
        _c(r"(?<![\w-])(?i:bearer|ssws)[ \t]+(?P<secret>[A-Za-z0-9_.~+/=-]{16,})"),
        lambda m: real_secret(m) and looks_random(m.group("secret")),
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
        real_secret,
    ),
    Detector(
        "password",  # curl -u user:password
        _c(r"""(?<!\S)(?:-u|--user)(?:=|[ \t]+)["']?[^\s:"'@]+:(?P<secret>[^\s"']+)"""),
        real_secret,
    ),
    Detector(
        "password",  # mysql -u root -phunter2
        _c(r"""\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,200}?[ \t]-p(?P<secret>[^\s"'-][^\s"']*)"""),
        real_secret,
    ),
    Detector(  # ~/.netrc: a `machine` or `default` entry, its tokens in any order
        "password",
        _c(r"\b(?:machine\s+\S+|default)(?P<tokens>(?:\s+(?:login|account|port)\s+\S+)*)\s+password\s+(?P<secret>\S+)"
           r"(?P<login>\s+login\s)?"),
        lambda m: real_secret(m) and bool(m.group("tokens") or m.group("login")),  # not "machine learning password"
    ),
    Detector(  # ~/.pgpass: hostname:port:database:username:password, one entry a line (or quoted: `echo '...' >> ~/.pgpass`)
        "password",
        _c(r"""(?:^[ \t]*|["']|(?P<inline>(?<=[ \t])))(?P<host>[^\s:#"']+):(?:\d{1,5}|\*):[^\s:"']+:[^\s:"']+:"""
           r"""(?P<secret>[^\s"']+?)[ \t]*(?:$|["']|(?=[ \t]))""", re.MULTILINE),
        lambda m: (real_secret(m) and not re.fullmatch(r"[0-9a-fA-F]{1,4}", m.group("secret"))  # not IPv6
                   and (generated(m.group("secret")) or m.group("inline") is None  # said in a sentence: generated only
                        and (m.group("host") in ("*", "localhost") or "." in m.group("host")))),
    ),
    Detector(  # sshpass -p PASSWORD ssh host
        "password",
        _c(r"""\bsshpass\b[^\n|;&]{0,200}?[ \t]-p[ \t]*["']?(?P<secret>[^\s"']+)["']?(?P<then>[ \t]+\S+)?"""),
        lambda m: real_secret(m) and (generated(m.group("secret"))
                                       or re.match(r"[ \t]+(?:ssh|scp|sftp|rsync|git|-)", m.group("then") or "") is not None),
    ),
    *COMMANDS,
    Detector("password", LINE_PASSWORD, line_password_accept),
    SaidDetector("password", SAID, said_accept),  # "the ssh password is ...", "my token is ..."
    AssignmentDetector("secret", SPACED, assignment_accept),  # Dockerfile ENV, fish set -x
    AssignmentDetector("secret", SPACED_INLINE, inline_accept),  # the same in a sentence
    AssignmentDetector("secret", NAME_VALUE, assignment_accept),  # Kubernetes, ECS, .NET and Spring XML
    AssignmentDetector("secret", VALUE_NAME, assignment_accept),
    AssignmentDetector("secret", TERRAFORM, assignment_accept),
    AssignmentDetector("secret", XML, xml_accept),
    PhraseDetector("password", PHRASE, phrase_accept),
    AssignmentDetector("secret", FLAG, assignment_accept),
    AssignmentDetector("secret", ASSIGNMENT, assignment_accept),
    AssignmentDetector("secret", KEYED, keyed_accept),
    ProseDetector("secret", PROSE, prose_accept),
)


_SECRET_KEY = re.compile(rf"^[\w.-]*?(?:{SECRET_WORDS}|(?<=\w)[_.-]pass)$", re.IGNORECASE)


def held_secret(key: str, value: str) -> str | None:
    """The kind of secret `value` is because of the key it is held under (`password: two words`,
    `notes.api_token: ...`, a number under `pin_password`), or None: a field is an assignment whose
    value is the whole string, so it goes whole, whatever its shape. Placeholders, references and
    variable names stay, as they do in text."""
    if not _SECRET_KEY.match(key):
        return None
    value = value.strip()
    if is_placeholder(value) or REFERENCE.match(value) or (re.fullmatch(r"[A-Za-z_]\w*", value)
                                                             and SECRET_WORD.search(value)):
        return None
    return "password" if PASSWORD_WORD.search(key) else "secret"


# Kinds known by their shape alone (no label or context needed): what a key cut over two lines, or
# hidden in base64, is recognised by once it is whole again (memcli.privacy.redact).
_SHAPE_KINDS = {"aws-access-key", "github-token", "gitlab-token", "npm-token", "huggingface-token", "anthropic-key",
                "openai-key", "slack-token", "stripe-key", "google-api-key"}
SHAPES: tuple[Detector, ...] = tuple(d for d in BUILTIN if d.kind in _SHAPE_KINDS) + _vendor_detectors()
