"""Secrets written the way tools and configs write them: a value named apart from its name (Kubernetes,
ECS, .NET and Spring XML, Terraform), a password on a command line, a wallet's recovery phrase, webhook
URLs and vendor tokens; and the look-alikes beside them that must stay as written."""

from __future__ import annotations

import base64
import string
from importlib.resources import files

import fake_secrets as fs
import pytest
from helpers import add, ok

from memcli.privacy.redact import redact

HEX = "0123456789abcdef"
URLSAFE = fs.ALNUM + "_-"


def digits(n: int) -> str:
    return "".join(fs._rng.choice(string.digits) for _ in range(n))


def chosen() -> str:
    return fs.rand(7) + "-" + fs.rand(5)


def uuid() -> str:
    return "-".join(fs.rand(n, HEX) for n in (8, 4, 4, 4, 12))


def seed_phrase(words: int) -> str:
    wordlist = (files("mnemonic") / "wordlist" / "english.txt").read_text().split()
    return " ".join(fs._rng.choice(wordlist) for _ in range(words))


def _rows() -> list[tuple[str, str, str]]:
    """(shape, a line holding the secret, the secret)."""
    rows = [
        ("kubernetes env entry", "env:\n- name: SMTP_PASSWORD\n  value: {s}", chosen()),
        ("ecs environment entry", '[{{"name": "SIGNING_SECRET", "value": "{s}"}}]', fs.rand(30)),
        (".net app setting", '<add key="StorageAccountKey" value="{s}" />', fs.rand(40)),
        ("spring property", '<property name="jdbc.password" value="{s}"/>', chosen()),
        ("terraform default", 'variable "admin_password" {{\n  default = "{s}"\n}}', chosen()),
        ("pass key", "pass: {s}", chosen()), ("pw key", "db_pw={s}", chosen()),
        ("docker login -p", "docker login --password {s} ghcr.io", chosen()),
        ("redis-cli -a", "redis-cli -a {s} --no-auth-warning", chosen()),
        ("mongosh -p", "mongosh --host db -u root -p {s}", chosen()), ("sqlcmd -P", "sqlcmd -S . -U sa -P {s}", chosen()),
        ("ldapsearch -w", "ldapsearch -H ldap://dc -w {s} -b dc=corp", chosen()),
        ("openssl pass:", "openssl pkcs12 -in a.p12 -passin pass:{s}", chosen()),
        ("keytool -storepass", "keytool -list -keystore a.jks -storepass {s}", chosen()),
        ("zip -P", "zip -P {s} out.zip secrets.txt", chosen()), ("smbclient -U", "smbclient //nas/x -U bob%{s}", chosen()),
        ("net use", r"net use \\nas\share {s} /user:bob", chosen()),
        ("htpasswd -b", "htpasswd -cb /etc/nginx/.htpasswd bob {s}", chosen()),
        ("ssh-keygen -N", "ssh-keygen -q -N {s} -f id_deploy", chosen()),
        ("vault operator unseal", "vault operator unseal {s}", fs.rand(44, fs.B64)),
        ("recovery phrase", "seed words: {s}", seed_phrase(12)),
        ("okta SSWS", "Authorization: SSWS {s}", "00" + fs.rand(40, URLSAFE)),
        ("discord webhook", "https://discord.com/api/webhooks/{s}", digits(18) + "/" + fs.rand(68, URLSAFE)),
        ("teams webhook", "https://corp.webhook.office.com/webhookb2/{s}",
         f"{uuid()}@{uuid()}/IncomingWebhook/{fs.rand(32, HEX)}/{uuid()}"),
        ("azure function key", "https://f.azurewebsites.net/api/run?code={s}", fs.rand(54, URLSAFE) + "=="),
        ("groq", "{s}", "gsk_" + fs.rand(52)), ("replicate", "{s}", "r8_" + fs.rand(37)), ("xai", "{s}", "xai-" + fs.rand(80)),
        ("tailscale", "{s}", "tskey-api-k" + fs.rand(10) + "CNTRL-" + fs.rand(30)), ("docker hub", "{s}", "dckr_pat_" + fs.rand(27)),
        ("netlify", "{s}", "nfp_" + fs.rand(36)), ("openai legacy user key", "{s}", "sk-None-" + fs.rand(48)),
        ("slack client token", "{s}", f"xoxc-{digits(11)}-{digits(12)}-"
                                      f"{digits(13)}-{fs.rand(64, HEX)}"),
        ("slack cookie", "{s}", "xoxd-" + fs.rand(110, fs.ALNUM + "%")),
        ("atlassian api token", "{s}", "ATATT3xFfGF0" + fs.rand(171, URLSAFE) + "=" + fs.rand(8, HEX.upper())),
        ("bitbucket app password", "{s}", "ATBB" + fs.rand(32)), ("mapbox secret token", "{s}", "sk.eyJ1Ijoi" + fs.rand(50) + "." + fs.rand(22)),
        ("aws secret beside the word AWS", "the AWS key for ci is {s}", fs.aws_secret_key()),
        ("aws configure prompt", "AWS Secret Access Key [None]: {s}", fs.aws_secret_key()),
        (".pgpass line echoed", "echo 'pg:5432:app:bob:{s}' >> ~/.pgpass", chosen()),
        ("Dockerfile ENV quoted", 'ENV DB_PASSWORD "{s}"', chosen()), ("fish set --export", "set --export GH_TOKEN {s}", fs.rand(32)),
        ("a key in full-width forms", "token {s}", "".join(chr(ord(c) + 0xFEE0) for c in fs.github_token())),
        ("age key in lower case", "{s}", "age-secret-key-1" + fs.rand(58, "qpzry9x8gf2tvdw0s3jn54khce6mua7l")),
        ("base64 of a key pair, wrapped", "echo {s}", "\n".join(
            (lambda b: [b[i:i + 76] for i in range(0, len(b), 76)])(
                base64.b64encode(f"{fs.aws_access_key()}:{fs.aws_secret_key()}".encode()).decode()))),
        # found by a second hostile round on these detectors
        ("kubernetes entry, value first", "- value: {s}\n  name: DB_PASSWORD", chosen()),
        ("openssl enc -k", "openssl enc -aes-256-cbc -k {s} -in a -out b", chosen()),
        ("7z -p glued", "7z a -p{s} backup.7z docs/", chosen()), ("htpasswd -nb", "htpasswd -nbB alice {s}", chosen()),
        ("sqlcmd -P glued to a quote", 'sqlcmd -U sa -P"{s}"', chosen()), ("vault login", "vault login s.{s}", fs.rand(24)),
        ("recovery phrase, comma separated", "{s}", ", ".join(seed_phrase(12).split())),
        ("recovery phrase, numbered", "{s}", " ".join(f"{n}. {w}" for n, w in enumerate(seed_phrase(12).split(), 1))),
        ("recovery phrase, capitalised", "{s}", " ".join(w.capitalize() for w in seed_phrase(12).split())),
        ("discord webhook, versioned API", "https://discord.com/api/v10/webhooks/{s}", digits(19) + "/" + fs.rand(68, URLSAFE)),
        ("logic app sig, url-safe", "https://x.logic.azure.com/workflows/w/triggers/manual/paths/invoke?sv=1.0&sig={s}",
         fs.rand(43, URLSAFE)),
        ("terraform heredoc default", 'variable "api_token" {{\n  default = <<EOT\n{s}\nEOT\n}}', fs.rand(32)),
        ("key tail quoted in a mail", "{s}\n> " + "-" * 5 + "END RSA PRIVATE KEY" + "-" * 5,
         "\n".join("> " + line for line in fs.key_body(3))),
    ]
    return [(shape, line.format(s=secret), secret) for shape, line, secret in rows]


ROWS = _rows()


@pytest.mark.parametrize("shape, line, secret", ROWS, ids=[shape for shape, _, _ in ROWS])
def test_a_secret_of_each_shape_is_redacted(shape, line, secret):
    out = redact(f"note for later:\n{line}\n(end of note)").text
    pieces = [piece for piece in secret.replace(", ", "\n").split("\n") if len(piece) >= 8] or [secret]
    assert all(piece[-12:] not in out for piece in pieces), out
    assert "[REDACTED:" in out and out.endswith("(end of note)")


def test_a_secret_given_to_a_command_is_not_stored():
    password = chosen()
    add(f"reset the cache:\nredis-cli -h cache -a {password} FLUSHALL\nthen restart the workers")
    text = ok("export").stdout
    assert password not in text and "redis-cli -h cache -a [REDACTED:password] FLUSHALL" in text


def test_a_recovery_phrase_goes_whole_with_any_word_of_its_list_beside_it():
    phrase = seed_phrase(12)
    assert redact(f"wallet:\n{phrase}\nthat is all").text == "wallet:\n[REDACTED:seed-phrase] is all"


@pytest.mark.parametrize("line", [
    "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}",
    '{"name": "LOG_LEVEL", "value": "debug"}', '- name: PASSWORD_MIN_LENGTH\n  value: "12"',
    'variable "db_password" {\n  sensitive = true\n  default   = null\n}', "docker login -u ci --password-stdin",
    "redis-cli -a $REDIS_PASSWORD ping", "ssh-keygen -N '' -f id", "openssl rsa -passin env:PASS -in k.pem",
    "vault operator unseal", "htpasswd -B .htpasswd bob", "zip -P is weak encryption", "if x:\n    pass",
    "results: 12 pass, 0 fail", "pass: 12", "compass = north", "bypass: true",
    "please review the draft before friday and update the roadmap with the new dates",
    "https://discord.com/api/webhooks/<id>/<token>", "https://f.azurewebsites.net/api/run?code=<function-key>",
    "gsk_, r8_, xai-, tskey-, dckr_pat_ and nfp_ are prefixes", "pk.eyJ1IjoiZXhhbXBsZSJ9.public-token-ok",
    'client.login(username="alice", password="password")', "ＡＢＣＤ１２３４５６７８９０ は全角です",
    f"sha256 {fs.rand(64, HEX)}", f"request {uuid()} failed", "-----BEGIN PUBLIC KEY----- is not secret",
])
def test_look_alikes_of_the_new_shapes_are_left_as_written(line):
    assert redact(line).text == line


@pytest.mark.parametrize("line, secret", [
    ("ConvertTo-SecureString 'Iu7yTr5eWq3aSd1f' -AsPlainText -Force", "Iu7yTr5eWq3aSd1f"),
    ("$cred = New-Object PSCredential('u', (ConvertTo-SecureString 'Iu7yTr5eWq3aSd1f' -AsPlainText -Force))",
     "Iu7yTr5eWq3aSd1f"),
    ("az login --service-principal -u 1234 -p Kq9~wEr8tYu7iOp6aS --tenant t", "Kq9~wEr8tYu7iOp6aS"),
    ("then I ran: set -x DB_PASSWORD Pq8sLm3nXz7v; and it worked", "Pq8sLm3nXz7v"),
    ("ENV API_TOKEN Pq8sLm3nXz7vWq after the FROM line", "Pq8sLm3nXz7vWq"),
    ("the entry db.internal:5432:*:deploy:Zr4tYu8iOp2w goes in the pgpass file", "Zr4tYu8iOp2w"),
])
def test_a_secret_said_mid_sentence_or_to_powershell_and_az_is_redacted(line, secret):
    assert secret not in redact(line).text


@pytest.mark.parametrize("line", [
    "we set -x DB_PASSWORD later in the script", "use ENV API_TOKEN from the vault",
    "ConvertTo-SecureString $env:PW -AsPlainText", "az login --use-device-code",
    "see host.example:5432:db:user:pass in the docs", "at 12:30:45:10:99 the job ran",
])
def test_look_alikes_of_secrets_said_mid_sentence_are_left_as_written(line):
    assert redact(line).text == line
