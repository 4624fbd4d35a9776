"""Passwords given to a command on its command line, where a shell history, a script or a tool's output
keeps them: each tool's own flag (`docker login -p`, `redis-cli -a`, `sqlcmd -P`, `ldapsearch -w`,
`keytool -storepass`, `zip -P`, `ssh-keygen -N`, `az login -p`), PowerShell's `ConvertTo-SecureString`, openssl's `pass:` argument, smbclient's `-U user%pass`,
the password of `net use` and `htpasswd -b`, and the key given to `vault operator unseal`.

The flags are each tool's documented ones (its manual page or `--help`). A value that is a variable
(`$REDIS_PASSWORD`), a placeholder, empty (`ssh-keygen -N ''`), or another flag (`--password-stdin`)
is not a password; nor is openssl's `env:VAR` or `file:path`.
"""

from __future__ import annotations

import re

from memcli.privacy.secret_values import Detector, REFERENCE, generated, real_secret

# What may stand between the tool and its flag: the rest of one command, not the next command.
_ARGS = r"[^\n|;&]{0,200}?"
_VALUE = r"""["']?(?P<secret>[^\s"'$`<>-][^\s"'`]*)"""


def _flag(tools: str, flags: str) -> re.Pattern:
    """`tool ... FLAG value`, `FLAG=value` and `FLAG"value"` (flags are case-sensitive: `-p` is not `-P`)."""
    return re.compile(rf"(?<![\w-])(?:{tools})(?![\w-]){_ARGS}[ \t](?:{flags})(?:=|[ \t]+|(?=[\"'])){_VALUE}")


def _accept(m: re.Match) -> bool:
    """A value, not a word of a sentence about the flag (`zip -P is weak`): chosen-looking, or 6+ characters."""
    value = m.group("secret")
    return (real_secret(m) and not REFERENCE.match(value) and not value.startswith("%")
            and (generated(value) or len(value) >= 6))


def _htpasswd_batch(m: re.Match) -> bool:
    """`htpasswd -b` takes the password from the command line (after the file and the user, or after the
    user alone with `-n`, which writes no file); without `b` it asks for it."""
    flags = (m.group("flags") or "").replace("-", "")
    return "b" in flags and ("n" in flags) == (m.group("file") is None) and _accept(m)


COMMANDS: tuple[Detector, ...] = (
    Detector("password", _flag(r"docker[ \t]+login|podman[ \t]+login|buildah[ \t]+login|skopeo[ \t]+login",
                               r"-p|--password"), _accept, keywords=("login",)),
    Detector("password", _flag(r"redis-cli|valkey-cli|keydb-cli", r"-a|--pass"), _accept, keywords=("-cli",)),
    Detector("password", _flag(r"mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport",
                               r"-p|--password"), _accept, keywords=("mongo",)),
    Detector("password", _flag(r"sqlcmd|bcp|osql", r"-P"), _accept, keywords=("sqlcmd", "bcp", "osql")),
    Detector("password", _flag(r"ldapsearch|ldapmodify|ldapadd|ldapdelete|ldapwhoami|ldappasswd|ldapcompare|ldapmodrdn",
                               r"-w"), _accept, keywords=("ldap",)),
    Detector("password", _flag(r"keytool|jarsigner",
                               r"-(?:src|dest)?(?:store|key)pass|-new|-keypasswd"), _accept, keywords=("pass", "-new")),
    Detector("password", _flag(r"zip|unzip|zipcloak", r"-P|--password"), _accept, keywords=("zip",)),
    Detector("password", _flag(r"ssh-keygen", r"-N|-P"), _accept, keywords=("ssh-keygen",)),
    Detector(  # openssl's pass phrase arguments: `-passin pass:...`, `-passout pass:...`, `-k pass:...`
        "password",
        re.compile(rf"(?<![\w-])openssl(?![\w-]){_ARGS}[ \t=]pass:(?P<secret>[^\s\"']+)"),
        _accept,
        keywords=("pass:",),
    ),
    Detector(  # smbclient and friends: `-U user%password`, `--user=domain\user%password`
        "password",
        re.compile(r"""(?<![\w-])(?:smbclient|rpcclient|smbcacls|smbget|smbmap|net[ \t]+rpc|mount\.cifs)(?![\w-])"""
                   rf"""{_ARGS}[ \t](?:-U|--user(?:name)?)(?:=|[ \t]+)["']?[^\s%"']+%(?P<secret>[^\s"']+)"""),
        _accept,
        keywords=("%",),
    ),
    Detector(  # Windows: `net use Z: \\host\share PASSWORD /user:domain\name` (the password before or after /user)
        "password",
        re.compile(r"""(?<![\w-])net[ \t]+use(?:[ \t]+[A-Za-z]:)?[ \t]+\\\\[^\s]+(?:[ \t]+/user:[^\s]+)?"""
                   r"""[ \t]+["']?(?P<secret>[^\s/*"'][^\s"']*)"""),
        _accept,
        keywords=("net use", "NET USE", "Net use"),
    ),
    Detector(  # `htpasswd -b[c...] FILE USER PASSWORD`, `htpasswd -nb USER PASSWORD`
        "password",
        re.compile(r"""(?<![\w-])htpasswd(?P<flags>(?:[ \t]+-[A-Za-z]+)+)(?P<file>[ \t]+[^\s-][^\s]*)?[ \t]+[^\s-][^\s]*"""
                   r"""[ \t]+["']?(?P<secret>[^\s"'$-][^\s"']*)"""),
        _htpasswd_batch,
        keywords=("htpasswd",),
    ),
    Detector("password", _flag(r"openssl", r"-k"), _accept, keywords=("openssl",)),  # `openssl enc -k PASSWORD`
    Detector(  # 7-Zip takes its password glued to the flag: `7z a -pPASSWORD`
        "password",
        re.compile(rf"""(?<![\w-])7z[az]?(?![\w-]){_ARGS}[ \t]-p["']?(?P<secret>[^\s"'$`-][^\s"'`]*)"""),
        _accept,
        keywords=("7z",),
    ),
    Detector(  # a token given to `vault login` (`vault login s.XXXX`, `vault login -method=token TOKEN`)
        "vault-token",
        re.compile(r"""(?<![\w-])vault[ \t]+login(?:[ \t]+-[\w=-]+)*[ \t]+["']?(?P<secret>[A-Za-z0-9._-]{20,})"""),
        lambda m: generated(m.group("secret")),
        keywords=("vault",),
    ),
    Detector("password", _flag(r"az[ \t]+login", r"-p|--password"), _accept, keywords=("az login",)),
    Detector(  # PowerShell: `ConvertTo-SecureString 'PASSWORD' -AsPlainText -Force`, the value before or after -String
        "password",
        re.compile(r"""(?i)(?<![\w-])ConvertTo-SecureString(?:[ \t]+-String)?[ \t]+["'](?P<secret>[^"'\s]+)["']"""),
        _accept,
        keywords=("convertto-securestring", "ConvertTo-SecureString"),
    ),
    Detector(  # an unseal key (base64) given to `vault operator unseal`
        "vault-unseal-key",
        re.compile(r"""(?<![\w-])vault[ \t]+operator[ \t]+unseal(?:[ \t]+-[\w=-]+)*[ \t]+["']?(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"""),
        keywords=("unseal",),
    ),
)
