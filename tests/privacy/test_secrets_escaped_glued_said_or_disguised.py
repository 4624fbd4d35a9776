"""Secrets a hostile round still got stored (issue 53, items 30-33): inside escaped JSON strings (a request
body logged inside another JSON text), glued after an underscore or a word character (`_ghp_...`,
`x_sk-...`, `\\nghp_...` in an escaped string), a password said in prose, a key written in characters
whose NFKC form is ASCII (full-width letters, ligatures, mathematical letters). Beside them, the
look-alikes that must stay as written: hashes, UUIDs, test fixtures named "password", prose about
passwords, text written in full-width forms."""

from __future__ import annotations

import fake_secrets as fs
import pytest

from memcli.privacy.redact import redact

HEX = "0123456789abcdef"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def chosen() -> str:
    return fs.rand(7) + "-" + fs.rand(5)


def disguised(text: str, table: dict[str, str]) -> str:
    return "".join(table.get(c, c) for c in text)


FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"}
MATH_BOLD = {c: chr(0x1D41A + ord(c) - ord("a")) for c in "abcdefghijklmnopqrstuvwxyz"}


def _rows() -> list[tuple[str, str, str]]:
    """(what, the text holding the secret, the secret as written there)."""
    key, pw, gh, sk = fs.rand(32), chosen(), fs.github_token(), "sk-" + fs.rand(48)
    ligature_token = "ghp_" + fs.rand(10) + "fi" + fs.rand(26)
    rows = [
        ("escaped JSON", '{"body": "{\\"api_key\\": \\"%s\\"}"}' % key, key),
        ("escaped twice", '"{\\\\\\"password\\\\\\": \\\\\\"%s\\\\\\"}"' % pw, pw),
        ("escaped, no spaces", 'log={\\"client_secret\\":\\"%s\\",\\"n\\":1}' % key, key),
        ("a key after an escaped newline", '{"out": "line one\\n%s"}' % gh, gh),
        ("an AWS key id after an escaped newline", '{"out": "id:\\nAKIA%s"}' % fs.rand(16, UPPER), None),
        ("unicode-escaped quotes", '{\\u0022password\\u0022: \\u0022%s\\u0022}' % pw, pw),
        ("percent-encoded JSON in a URL", "q=%%7B%%22password%%22%%3A%%22%s%%22%%7D" % pw, pw),
        ("an encoded query inside a query", "next=%%2Flogin%%3Fpassword%%3D%s" % pw, pw),
        ("underscore before a GitHub token", f"_{gh}", gh),
        ("a name glued before an OpenAI key", f"x_{sk}", sk),
        ("a word character before a GitHub token", f"tok{gh}", gh),
        ("the password is ...", f"the password is {pw}!", pw + "!"),
        ("my pw is ...", f"my pw is {pw}", pw),
        ("pw: ...", f"pw: {pw}", pw),
        ("the password for prod is ...", f"The password for prod is {pw}. Rotate it.", pw),
        ("password for the db: ...", f"password for the db: {pw}", pw),
        ("was changed to ...", f"the db password was changed to {pw} yesterday", pw),
        ("use password ... to log in", f"use password {pw} to log in", pw),
        ("password -> ...", f"password -> {pw}", pw),
        ("my token is ...", f"my token is {key}", key),
        ("the API secret is ...", f"the API secret is {key}", key),
        ("a quoted passphrase", f'Password is "{fs.rand(6)} {fs.rand(6)}"', None),
        ("full-width token", disguised(gh, FULL_WIDTH), disguised(gh, FULL_WIDTH)),
        ("full-width name and value", disguised("password", FULL_WIDTH) + f" = {pw}", pw),
        ("a ligature inside a token", ligature_token.replace("fi", "\ufb01"), ligature_token.replace("fi", "\ufb01")),
        ("mathematical letters as a prefix", disguised("ghp", MATH_BOLD) + gh[3:], disguised("ghp", MATH_BOLD) + gh[3:]),
    ]
    return rows


ROWS = _rows()


@pytest.mark.parametrize("what, text, secret", ROWS, ids=[what for what, _, _ in ROWS])
def test_a_secret_escaped_glued_said_or_disguised_is_redacted(what, text, secret):
    out = redact(f"note:\n{text}\nend").text
    assert "[REDACTED:" in out, out
    if secret:
        assert secret[-10:] not in out, out
    assert out.endswith("end")


@pytest.mark.parametrize("line", [
    f"sha256 {fs.rand(64, HEX)} of the model", f"request {fs.rand(8, HEX)}-{fs.rand(4, HEX)}-4{fs.rand(3, HEX)}-"
    f"a{fs.rand(3, HEX)}-{fs.rand(12, HEX)} failed", 'def test_login(client):\n    client.login("alice", password="password")',
    "fixtures/password.txt holds the fixture", "the password is stored in the keychain", "pw is 12 chars",
    "use password authentication", "with password hashing enabled", "the pass is valid until 2024-12-01",
    "type the password in the box", "the password was reset to default", "password: must be 12 characters",
    '{\\"name\\": \\"alice\\", \\"role\\": \\"admin\\"}', 'printf "say \\"hi\\"\\n"', "C:\\new\\table\\x.txt",
    "ＡＢＣＤ１２３４５６７８９０ は全角です", "E=mc² and the oﬃce", "task_sk-learn-estimators", "the desk-ant-farm",
    f"commit {fs.rand(40, HEX)}", "the token is invalid", "the token is expired since 2024-01-01",
    "the secret is out", "the token -> next step", "progress [ 50%] done", "a%20b%22c",
])
def test_look_alikes_of_escaped_glued_said_or_disguised_secrets_stay(line):
    assert redact(line).text == line
