"""Fake but well-formed secrets, made at run time so no token-shaped literal sits in the repository."""

from __future__ import annotations

import random
import string

_rng = random.Random(61129)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"


def rand(n: int, alphabet: str = ALNUM) -> str:
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def aws_access_key() -> str:
    return "AKIA" + rand(16, string.ascii_uppercase + string.digits)


def aws_secret_key() -> str:
    return rand(40, B64)


def github_token() -> str:
    return "ghp_" + rand(36)


def password() -> str:
    return "Tr0ub4dor" + rand(8)


def key_body(lines: int = 4) -> list[str]:
    return [rand(64, B64) for _ in range(lines)]


def pem(body: list[str], label: str = "RSA PRIVATE KEY") -> str:
    dashes = "-" * 5
    return "\n".join([f"{dashes}BEGIN {label}{dashes}", *body, f"{dashes}END {label}{dashes}"])


def truncated_pem(body: list[str], label: str = "OPENSSH PRIVATE KEY") -> str:
    """A key pasted without its last line: redaction cannot see a block, the kill switch must."""
    dashes = "-" * 5
    return "\n".join([f"{dashes}BEGIN {label}{dashes}", *body])
