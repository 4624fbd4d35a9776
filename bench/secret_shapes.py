"""How many secrets redaction misses (FN) and how many look-alikes it wrongly redacts (FP), by group.

    PYTHONPATH=. .venv/bin/python bench/secret_shapes.py [-v]

The positives are shapes from gitleaks' published rule set (config/gitleaks.toml, read as data) for
vendors whose tokens carry their own prefix, plus the private-key containers and passphrases a hostile
round found (PuTTY, SSH2, `password = several words`), plus key-named assignments of generated values.
Each sits in a line of ordinary context. The look-alikes are text that resembles them and holds no
secret: public keys, hashes, ids, code, prose about passwords. Secrets are generated at run time from
a seeded generator, so no token-shaped literal sits in the repository.

A positive counts as found when none of its 8-character pieces is left in the output; a look-alike
counts as a false positive when the output differs from the input at all. Run it with PYTHONPATH
pointing at an older checkout to compare detector versions on the same tables (-v lists the misses).
"""

from __future__ import annotations

import argparse
import random
import re
import string
from collections import defaultdict

from memcli.privacy.redact import redact

rng = random.Random(20261130)
LOWER = string.ascii_lowercase + string.digits
ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def r(n: int, alphabet: str = ALNUM) -> str:
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if not (set(alphabet) & set(string.digits)) or any(c.isdigit() for c in value):
            if not (set(alphabet) & set(string.ascii_letters)) or any(c.isalpha() for c in value):
                return value


def block(begin: str, end: str, lines: int = 4, width: int = 64) -> str:
    return "\n".join([begin, *(r(width, B64) for _ in range(lines)), end])


def putty(version: int) -> str:
    return (f"PuTTY-User-Key-File-{version}: ssh-ed25519\nEncryption: none\nComment: ed25519-key\n"
            f"Public-Lines: 2\n{r(64, B64)}\n{r(20, B64)}\nPrivate-Lines: 1\n{r(44, B64)}\nPrivate-MAC: {r(64, HEX)}")


def positives() -> dict[str, list[tuple[str, str]]]:
    """group -> [(line with the secret, the secret)]"""
    d5 = "-" * 5
    d4 = "-" * 4
    vendor = {
        "age": "AGE-SECRET-KEY-1" + r(58, BECH32),
        "artifactory": "AKCp" + r(69),
        "azure client secret": r(3) + "8Q~" + r(34, URLSAFE),
        "databricks": "dapi" + r(32, HEX),
        "digitalocean": "dop_v1_" + r(64, HEX),
        "doppler": "dp.pt." + r(43),
        "dynatrace": "dt0c01." + r(24, UPPER) + "." + r(64),
        "easypost": "EZAK" + r(54),
        "fly.io": "fo1_" + r(43, URLSAFE),
        "gitlab deploy": "gldt-" + r(20, URLSAFE),
        "gitlab runner": "glrt-" + r(20, URLSAFE),
        "grafana": "glsa_" + r(32) + "_" + r(8, HEX),
        "vault": "hvs." + r(95, URLSAFE),
        "terraform cloud": r(14) + ".atlasv1." + r(67, URLSAFE),
        "heroku v2": "HRKU-AA" + r(58, URLSAFE),
        "infracost": "ico-" + r(32),
        "linear": "lin_api_" + r(40),
        "mailchimp": r(32, HEX) + "-us21",
        "mailgun": "key-" + r(32, HEX),
        "notion": "ntn_" + r(11, string.digits) + r(35),
        "openshift": "sha256~" + r(43, URLSAFE),
        "perplexity": "pplx-" + r(48),
        "planetscale": "pscale_tkn_" + r(43, URLSAFE),
        "postman": "PMAK-" + r(24, HEX) + "-" + r(34, HEX),
        "prefect": "pnu_" + r(36),
        "pypi": "pypi-AgEIcHlwaS5vcmc" + r(70, URLSAFE),
        "readme": "rdme_" + r(70, LOWER),
        "rubygems": "rubygems_" + r(48, HEX),
        "sendgrid": "SG." + r(22, URLSAFE) + "." + r(43, URLSAFE),
        "sendinblue": "xkeysib-" + r(64, HEX) + "-" + r(16),
        "sentry": "sntryu_" + r(64, HEX),
        "shippo": "shippo_live_" + r(40, HEX),
        "shopify": "shpat_" + r(32, HEX),
        "slack config": "xoxe-1-" + r(146, UPPER),
        "square": "sq0atp-" + r(22, URLSAFE),
        "stripe webhook": "whsec_" + r(32),
        "telegram bot": r(10, string.digits) + ":AA" + r(33, URLSAFE),
        "twilio": "SK" + r(32, HEX),
    }
    contexts = ["the token is {s}", "export X={s}", "curl -d 'k={s}' https://api.example.com", "- {s}",
                "set it to `{s}` in CI"]
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for n, (name, secret) in enumerate(vendor.items()):
        groups["vendor prefixes (gitleaks)"].append((contexts[n % len(contexts)].format(s=secret), secret))
    keys = [
        ("PuTTY v2", putty(2), None),
        ("PuTTY v3", putty(3), None),
        ("SSH2 encrypted", block(f"{d4} BEGIN SSH2 ENCRYPTED PRIVATE KEY {d4}", f"{d4} END SSH2 ENCRYPTED PRIVATE KEY {d4}"), None),
        ("OpenSSH", block(f"{d5}BEGIN OPENSSH PRIVATE KEY{d5}", f"{d5}END OPENSSH PRIVATE KEY{d5}"), None),
        ("encrypted PKCS8", block(f"{d5}BEGIN ENCRYPTED PRIVATE KEY{d5}", f"{d5}END ENCRYPTED PRIVATE KEY{d5}"), None),
    ]
    for name, text, _ in keys:
        body = [line for line in text.splitlines() if len(line) >= 40][-1]
        groups["private-key containers"].append((f"{name} key:\n{text}\nrotate yearly", body))
    for line in ("wifi password = {s}", "  passphrase: {s}", "DB_PASS={s}", "vault password: {s} # old one",
                 "password = {s}", "- Passphrase: {s}"):
        words = " ".join(rng.choice(["correct", "horse", "battery", "staple", "purple", "monkey", "dishwasher",
                                     "lantern", "orbit", "velvet"]) for _ in range(4))
        groups["passphrases (several words)"].append((line.format(s=words), words))
    for line in ("STRIPE_KEY={s}", "MAILGUN_KEY: {s}", 'auth = "{s}"', "session_id={s}", "DEPLOY_CREDENTIALS={s}",
                 "x-auth: {s}"):
        secret = r(32, URLSAFE)
        groups["key-named generated values"].append((line.format(s=secret), secret))
    groups["issue 42: values and credential files"] = issue42_values()
    groups["issue 42: families stored before"] = issue42_families()
    groups.update(issue53_shapes())
    groups.update(issue53_round4())
    return groups


def _uuid() -> str:
    return f"{r(8, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(12, HEX)}"


def _mnemonic(words: int) -> str:
    from importlib.resources import files

    wordlist = (files("mnemonic") / "wordlist" / "english.txt").read_text().split()
    return " ".join(rng.choice(wordlist) for _ in range(words))


def issue53_shapes() -> dict[str, list[tuple[str, str]]]:
    """Issue 53 item 6: the 47 new shapes (names and values apart, passwords in commands, vendor shapes)
    and the previous round's 9 still stored, each written here from the tools' and vendors' documented
    forms. The `held out` groups were written before the detectors and never looked at while tuning."""
    pw = lambda: r(6) + "-" + r(5)  # noqa: E731 - a chosen-looking password
    named = [
        ("env:\n  - name: DB_PASSWORD\n    value: {s}\n  - name: LOG_LEVEL\n    value: debug", pw()),
        ('        - name: API_TOKEN\n          value: "{s}"', r(32)),
        ('"environment": [{{"name": "DB_PASSWORD", "value": "{s}"}}]', pw()),
        ('{{\n  "name": "STRIPE_SECRET_KEY",\n  "value": "{s}"\n}}', r(32)),
        ('variable "db_password" {{\n  type    = string\n  default = "{s}"\n}}', pw()),
        ("pass: {s}", pw()), ("PW={s}", pw()), ('db_pw = "{s}"', pw()),
    ]
    commands = [
        ("docker login -u ci -p {s} registry.example.com", pw()), ("redis-cli -h cache -a {s} ping", pw()),
        ('mongosh "mongodb://db:27017/app" -u admin -p {s}', pw()), ('sqlcmd -S db -U sa -P {s} -Q "select 1"', pw()),
        ('ldapsearch -x -D "cn=admin,dc=example,dc=com" -w {s} -b dc=example', pw()),
        ("openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{s}", pw()),
        ("openssl rsa -in k.pem -passin pass:{s}", pw()), ("keytool -importcert -keystore ks.jks -storepass {s}", pw()),
        ("zip -P {s} backup.zip notes.txt", pw()), ("smbclient //fs/share -U alice%{s}", pw()),
        (r"net use Z: \\fs\share {s} /user:corp\alice", pw()), ("htpasswd -b -c .htpasswd alice {s}", pw()),
        ("ssh-keygen -t ed25519 -N {s} -f deploy_key", pw()), ("vault operator unseal {s}", r(44, B64)),
    ]
    vendor = [
        ("my wallet seed: {s}", _mnemonic(12)), ("{s}", _mnemonic(24)),
        ("Authorization: SSWS {s}", "00" + r(40, URLSAFE)),
        ("post to https://discord.com/api/webhooks/{s}", r(19, string.digits) + "/" + r(68, URLSAFE)),
        ("https://contoso.webhook.office.com/webhookb2/{s}", f"{_uuid()}@{_uuid()}/IncomingWebhook/{r(32, HEX)}/{_uuid()}"),
        ("curl https://app.azurewebsites.net/api/Ingest?code={s}", r(54, URLSAFE) + "=="),
        ("GROQ_API_KEY {s}", "gsk_" + r(52)), ("the token {s}", "r8_" + r(37)), ("- {s}", "xai-" + r(80)),
        ("tailscale up --authkey {s}", "tskey-auth-k" + r(10) + "CNTRL-" + r(33)), ("use {s}", "dckr_pat_" + r(27, URLSAFE)),
        ("netlify {s}", "nfp_" + r(36)), ("OPENAI {s}", "sk-None-" + r(48)),
        ("slack {s}", f"xoxc-{r(12, string.digits)}-{r(12, string.digits)}-{r(13, string.digits)}-{r(64, HEX)}"),
        ("cookie d={s}", "xoxd-" + r(120, ALNUM + "%")),
        ("jira {s}", "ATATT3xFfGF0" + r(174, URLSAFE) + "=" + r(8, HEX.upper())), ("bitbucket {s}", "ATBB" + r(32)),
        ("mapbox {s}", "sk.eyJ1Ijoi" + r(40) + "In0." + r(22)),
    ]
    older = [
        ("the AWS secret for the ci user is {s}", r(40, B64)), ("the ADO token is https://{s}@dev.azure.com/org/_git/repo", r(52, "abcdefghijklmnopqrstuvwxyz234567")),
        ("echo 'db-primary:5432:app:alice:{s}' >> ~/.pgpass", pw()), ('ENV MYSQL_ROOT_PASSWORD "{s}"', pw()),
        ("set --export API_TOKEN {s}", r(32)), ("key {s}", "".join(chr(ord(c) + 0xFEE0) for c in "ghp_" + r(36))),
        ('<property name="password" value="{s}"/>', pw()), ("{s}", "age-secret-key-1" + r(58, BECH32.lower())),
        ("echo {s}", _wrapped_b64("AKIA" + r(16, UPPER) + ":" + r(40, B64))),
    ]
    held_out = [
        ("containers:\n- env:\n  - name: REDIS_PASSWORD\n    value: '{s}'", pw()),
        ('{{"name":"GITHUB_TOKEN","value":"{s}"}}', r(40)), ('  default     = "{s}" # admin_password', pw()),
        ('pass = "{s}"', pw()), ("docker login --username ci --password {s}", pw()), ("redis-cli -a '{s}' info", pw()),
        ("sqlcmd -U sa -P '{s}'", pw()), ("openssl enc -aes-256-cbc -k pass:{s}", pw()), ("zip -r -P {s} a.zip dir", pw()),
        ("smbclient -L fs -U 'corp\\bob%{s}'", pw()), ("ssh-keygen -p -N '{s}' -f id", pw()),
        ("recovery phrase:\n{s}", _mnemonic(12).replace(" ", "\n", 3)), ("xoxd={s}", "xoxd-" + r(100, ALNUM + "%")),
        ("GROQ {s}", "gsk_" + r(52)), ("export TS_AUTHKEY={s}", "tskey-client-k" + r(10) + "CNTRL-" + r(33)),
        ("https://discordapp.com/api/webhooks/{s}", r(18, string.digits) + "/" + r(68, URLSAFE)),
        ("set -Ux DB_PASSWORD '{s}'", pw()), ('<add key="DbPassword" value="{s}" />', pw()),
    ]
    rows = {"issue 53: names and values apart": named, "issue 53: passwords in commands": commands,
            "issue 53: vendor shapes": vendor, "issue 53: the previous round's still stored": older,
            "issue 53: held out (never tuned on)": held_out}
    return {group: [(line.format(s=secret), secret) for line, secret in lines] for group, lines in rows.items()}


FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits + "_-"}
MATH_BOLD = {c: chr(0x1D41A + ord(c) - ord("a")) for c in string.ascii_lowercase}


def _disguised(text: str, table: dict[str, str]) -> str:
    return "".join(table.get(c, c) for c in text)


def issue53_round4() -> dict[str, list[tuple[str, str]]]:
    """Issue 53 items 30-33, the shapes a hostile round still got stored after item 6: secrets in escaped
    JSON strings, tokens glued after `_` or a word character, passwords said in prose, keys in characters
    whose NFKC form is ASCII. The held-out group was written after the detectors changed but before they were
    first run on it, and never tuned on."""
    pw = lambda: r(6) + "-" + r(5)  # noqa: E731
    escaped = [
        ('{{"body": "{{\\"api_key\\": \\"{s}\\"}}"}}', r(32)),
        ('log={{\\"client_secret\\":\\"{s}\\",\\"n\\":1}}', r(40, URLSAFE)),
        ('"{{\\\\\\"password\\\\\\": \\\\\\"{s}\\\\\\"}}"', pw()),
        ('{{"out": "ok\\n{s}"}}', "ghp_" + r(36)),
        ('{{"err": "bad key\\t{s}"}}', "AKIA" + r(16, UPPER)),
        ('{{\\u0022password\\u0022: \\u0022{s}\\u0022}}', pw()),
        ("q=%7B%22password%22%3A%22{s}%22%7D", pw()),
    ]
    glued = [("_{s}", "ghp_" + r(36)), ("x_{s}", "sk-" + r(48)), ("MY_{s}", "glpat-" + r(20, URLSAFE)),
             ("tok{s}", "ghp_" + r(36)), ("key_{s}", "xoxb-" + r(12, string.digits) + "-" + r(24)),
             ("_{s}", "npm_" + r(36)), ("x{s}", "sk-ant-api03-" + r(80, URLSAFE))]
    prose = [("the password is {s}", pw() + "!"), ("my pw is {s}", pw()), ("The password for prod is {s}. Rotate it.", pw()),
             ("password for the db: {s}", pw()), ("the db password was changed to {s} yesterday", pw()),
             ("use password {s} to log in", pw()), ("pwd is {s}", pw()), ("password -> {s}", pw()),
             ("my token is {s}", r(32)), ("the API secret is {s}", r(40))]
    nfkc = [("{s}", _disguised("ghp_" + r(36), FULL_WIDTH)), ("token {s}", "ghp_" + r(10) + "\ufb01" + r(24)),
            ("{s}", _disguised("ghp", MATH_BOLD) + "_" + r(36)),
            (_disguised("password", FULL_WIDTH) + " = {s}", pw()),
            ("{s}", _disguised("AKIA", FULL_WIDTH) + r(16, UPPER))]
    held_out = [
        ('{{"msg": "{{\\"token\\": \\"{s}\\"}}"}}', r(40, URLSAFE)),
        ("{{\\\"DB_PASSWORD\\\": \\\"{s}\\\"}}", pw()),
        ("GH_{s}", "ghp_" + r(36)), ("val_{s}", "hf_" + r(34)), ("the wifi passphrase is {s}", pw()),
        ("pw for the router: {s}", pw()), ("Password was set to {s} by ops", pw()),
        ("{s}", _disguised("sk-ant-", FULL_WIDTH) + r(40)), ("key ｇｌｐａｔ-{s}", r(20, URLSAFE)),
        ("enter the password {s} when asked", pw()),
    ]
    rows = {"issue 53 r4: escaped JSON strings": escaped, "issue 53 r4: tokens glued after _ or a word char": glued,
            "issue 53 r4: passwords said in prose": prose, "issue 53 r4: NFKC-equivalent characters": nfkc,
            "issue 53 r4: held out (never tuned on)": held_out}
    return {group: [(line.format(s=secret), secret) for line, secret in lines] for group, lines in rows.items()}


def _wrapped_b64(text: str) -> str:
    """`base64` of a text as the command prints it: 76 characters a line."""
    import base64

    data = base64.b64encode(text.encode()).decode()
    return "\n".join(data[i:i + 76] for i in range(0, len(data), 76))


def issue42_values() -> list[tuple[str, str]]:
    """Bearer values, passwords holding punctuation, a kubeconfig's key, credential-file lines, sshpass."""
    import base64

    kube = base64.b64encode(block("-----BEGIN EC PRIVATE KEY-----", "-----END EC PRIVATE KEY-----").encode()).decode()
    rows = [("token: Bearer {s}", r(40, URLSAFE + ".")), ('curl -H "X-Auth: Bearer {s}" $URL', r(48, URLSAFE)),
            ("password = {s}", r(8) + "&" + r(3)), ("DB_PASS={s}", r(6) + ",;" + r(6)), ("password: {s}", r(10) + ")}]"),
            ("    client-key-data: {s}", kube), ("db.internal:5432:app:alice:{s}", r(12)),
            ("default login anonymous password {s}", r(12)), ("machine ci.example.com password {s} login bob", r(12)),
            ("sshpass -p '{s}' ssh deploy@web1", r(12)), ("sshpass -p{s} rsync -a . web1:/srv", r(12))]
    return [(line.format(s=secret), secret) for line, secret in rows]


def issue42_families() -> list[tuple[str, str]]:
    """One example of each family issue 42 item 9 names, written from the vendors' documented formats."""
    import base64

    b32 = "abcdefghijklmnopqrstuvwxyz234567"
    github = "ghp_" + r(36)
    hidden = "ghp_" + r(36)
    wide = "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in hidden)
    zw = "ghp_" + r(36)
    rows = [
        ("AKIA" + r(16, UPPER) + ",{s}", r(40, B64)),
        ('"private_key_id": "{s}",', r(40, HEX)), ("X-Goog: ya29.{s}", r(80, URLSAFE)),
        ("client_secret GOCSPX-{s}", r(28, URLSAFE)), ("https://a.blob.core.windows.net/b?sv=2022-11-02&sig={s}", r(43, B64)),
        ("the ADO pat {s} expires", r(52, b32)), ("PAT={s}", r(76) + "AZDO" + r(4)),
        ("BEGIN RSA PRIVATE KEY\n{s}\nEND RSA PRIVATE KEY", r(64, B64)), ("ENV API_TOKEN {s}", r(32)),
        ("set -gx DB_PASSWORD {s}", r(12)), ("token: {s}", github[:18] + "\n" + github[18:]),
        ("use {s} for the bot", zw[:12] + "\u200b" + zw[12:]), ("key {s}", wide),
        ("DISCORD={s}", "MT" + r(24) + "." + r(6) + "." + r(38, URLSAFE)),
        ("alice:$apr1${s}", r(8) + "$" + r(22, ALNUM + "./")), ("root:$6${s}:19000:0:99999:7:::", r(16) + "$" + r(86, ALNUM + "./")),
        ("<password>{s}</password>", r(14)), ("the ssh password is {s}, keep it safe", "Xk3-" + r(6)),
        ("export GH={s}", base64.b64encode(("ghp_" + r(36)).encode()).decode()),
    ]
    return [(line.format(s=secret), secret.replace("\u200b", "")) for line, secret in rows]


def look_alikes() -> dict[str, list[str]]:
    d4 = "-" * 4
    return {
        "keys and hashes that are public": [
            f"{d4} BEGIN SSH2 PUBLIC KEY {d4}\n{r(64, B64)}\n{d4} END SSH2 PUBLIC KEY {d4}",
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r(43, B64)} dana@laptop",
            f"sha256 {r(64, HEX)} is the model file",
            f"commit {r(40, HEX)} fixed it",
            f"request id {r(8, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(12, HEX)} failed",
            "the build artefact is dist/mem-0.3.0-py3-none-any.whl",
            "PuTTY-User-Key-File formats are described in the PuTTY manual",
            "Use `ssh-keygen -t ed25519` to make a new key; never paste the private part.",
        ],
        "key-named values that are not secrets": [
            'cache_key = "user:42:profile"', "primary_key: id", "sort_key=created_at_desc_2024",
            f"idempotency_key: {r(8, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(12, HEX)}",
            "auth: required", "keys: [a, b, c]", "session_id = request.cookies.get('sid')",
            "api_key = os.environ['API_KEY']", "key = f'{prefix}:{user_id}'", "credentials: ~/.aws/credentials",
        ],
        "prose and code about passwords": [
            "password: must be 12 characters or more", "Password: see the vault entry",
            "password = x if admin else y", "the password is stored in the keychain",
            "password = await ask_password()", "if password == confirm: save()",
            "password: Joi.string().min(12).required()", "Reset your password from the login page.",
            "password = input('Password: ')", "DB_PASSWORD=${DB_PASSWORD}",
        ],
        "issue 42 look-alikes": [
            "the password is stored in the keychain", "ENV PATH /usr/local/bin", "set -x EDITOR vim",
            "awk '{print $1$2}' access.log", "<password>${env.DEPLOY_PASSWORD}</password>", f"commit {r(40, HEX)}",
            "ＡＢＣＤ１２３４５６７８９０ は全角です", "deployment\nconfiguration", "echo aGVsbG8gd29ybGQgZnJvbSBtZW0=",
            "machine learning password manager", "the sig= parameter signs the URL", "sshpass -p is unsafe; use -f",
            "build:2:deps:cache:ok", "fe80:0:0:0:1", "Bearer authentication is described in RFC 6750",
            "client-key-data: see the kubeconfig docs",
        ],
        "issue 53 look-alikes": [
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef: {name: db, key: password}",
            '{"name": "LOG_LEVEL", "value": "debug"}', "- name: PASSWORD_MIN_LENGTH\n  value: \"12\"",
            'variable "db_password" {\n  type      = string\n  sensitive = true\n  default   = null\n}',
            "docker login -u ci --password-stdin < token.txt", "redis-cli -a $REDIS_PASSWORD ping",
            "ssh-keygen -t ed25519 -N '' -f deploy_key", "openssl rsa -in k.pem -passin env:KEY_PASS",
            "openssl req -passout file:pw.txt", "vault operator unseal -reset", "htpasswd -B .htpasswd alice",
            "if ok:\n    pass\nelse:\n    raise", "tests: 12 pass, 0 fail", "bypass: true", "compass = north",
            "please review the draft before friday and update the roadmap with the new dates",
            "webhooks go to https://discord.com/api/webhooks/<id>/<token>",
            "https://app.azurewebsites.net/api/Ingest?code=<your-function-key>", "gsk_ and r8_ are key prefixes",
            "xoxc- and xoxd- are Slack client tokens", "the public token pk.eyJ1IjoiZXhhbXBsZSJ9 is fine to ship",
            f"integrity: sha512-{r(86, B64)}==", f"trace {_uuid()} in span {r(16, HEX)}",
            'def test_login(client):\n    client.login(username="alice", password="password")',
            "fixtures/password.txt holds the fixture", "login(user, password)", "zip -P is weak encryption",
        ],
        "issue 53 r4 look-alikes": [
            '{\\"name\\": \\"alice\\", \\"role\\": \\"admin\\"}', 'printf "say \\"hi\\"\\n"', "C:\\new\\table\\x.txt",
            '{"msg": "line\\nnext", "id": "' + _uuid() + '"}', "task_sk-learn-estimators", "the desk-ant-farm is closed",
            "the password is stored in the keychain", "pw is 12 chars", "use password authentication",
            "with password hashing enabled", "the pass is valid until 2024-12-01", "type the password in the box",
            "the password was reset to default", "E=mc² and the oﬃce", f"sha256:{r(64, HEX)}",
            'assert login("bob", password="password")', "tests/fixtures/password_reset.json",
            "ＡＢＣ－１２３ ｶﾀｶﾅ", f"cache_{r(40, HEX)}", "the token is invalid", "the secret is out",
            "progress [ 50%] done", "https://example.com/search?q=password%20reset",
        ],
        "prefix-like words": [
            "the key-value store is Redis", "dapi is the Databricks CLI prefix", "SKU SK-1234 ships Monday",
            "ico-files live in assets/", "sha256~ is how OpenShift marks tokens", "pnu_ and pplx- are prefixes",
            "keyboard shortcuts: key-bindings.json", "AGE-SECRET-KEY-1 starts every age identity",
        ],
    }


def found(line: str, secret: str) -> bool:
    out = re.sub(r"\[REDACTED:[^\]]*\]", "", redact(line).text)
    pieces = {secret[i : i + 8] for i in range(len(secret) - 7)} - {line.replace(secret, "")[i : i + 8]
                                                                      for i in range(len(line) - 7)}
    return not any(piece in out for piece in pieces)


def tables(verbose: bool = False, tuning: bool = False) -> dict:
    """Misses per group of positives and false positives per group of look-alikes, with this process's memcli."""
    out: dict = {"positives": {}, "look-alikes": {}, "misses": [], "wrong": []}
    for group, rows in positives().items():
        if tuning and "held out" in group:
            continue
        missed = [line for line, secret in rows if not found(line, secret)]
        out["positives"][group] = [len(rows), len(missed)]
        if verbose and "held out" not in group:
            out["misses"] += [f"{group}: {line.splitlines()[0][:100]}" for line in missed]
    for group, rows in look_alikes().items():
        wrong = [line for line in rows if redact(line).text != line]
        out["look-alikes"][group] = [len(rows), len(wrong)]
        if verbose:
            out["wrong"] += [f"{group}: {line.splitlines()[0][:100]} -> {redact(line).text.splitlines()[0][:100]}"
                             for line in wrong]
    return out


OUTPUTS = {"plain": ("user", "u{n}"), "escaped secret names, no secret": ("token", "none"),
           "a secret behind escapes on every line": ("token", "u{n}")}


def tool_output(size: int, kind: str = "plain") -> str:
    """A large tool output of the kinds a hook redacts: a test run, a log of JSON request bodies (escaped
    strings), grep lines, source code. Plain, it holds no secret (the common case). The other kinds log
    bodies with a `\\"token\\":` key, which makes redaction look closer at those lines: with a placeholder
    value (nothing to find), or with a value redaction takes for a secret (the text is then read twice)."""
    name, value = OUTPUTS[kind]
    parts, n = [], 0
    while sum(map(len, parts)) < size:
        n += 1
        parts += [f"tests/test_api.py::test_case_{n} PASSED [{n % 100:3d}%]",
                  '{"level": "info", "msg": "request", "body": "{\\"%s\\": \\"%s\\", \\"items\\": [1, 2]}"}'
                  % (name, value.format(n=n)),
                  f"src/app/handlers.py:{n}:    return render(request, 'page_{n}.html', {{'count': {n}}})",
                  f"    def handler_{n}(self, request):\n        value = self.cache.get('key:{n}')\n        return value or {n}",
                  f"2026-12-06T03:{n % 60:02d}:00Z GET /api/items/{n}?page=2 200 {n % 997}ms ua=Mozilla/5.0"]
    return "\n".join(parts)[:size]


def timing(size: int, runs: int) -> dict[str, list[float]]:
    """Seconds per redact() of each kind of tool output, `runs` times each."""
    import time

    redact(tool_output(1000))  # compile the detectors outside the timed runs
    times: dict[str, list[float]] = {}
    for kind in OUTPUTS:
        text = tool_output(size, kind)
        times[kind] = []
        for _ in range(runs):
            start = time.perf_counter()
            redact(text)
            times[kind].append(time.perf_counter() - start)
    return times


def _other(path: str, args: list[str]) -> dict:
    """This script's tables (or times) with the memcli of another checkout, in a fresh process run from a
    neutral folder so that checkout's package is the one imported."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    env = {**os.environ, "PYTHONPATH": os.path.abspath(path)}
    with tempfile.TemporaryDirectory() as neutral:
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--json", *args], env=env, cwd=neutral,
                              capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    import json
    import os
    import statistics

    parser = argparse.ArgumentParser()
    parser.add_argument("-v", "--verbose", action="store_true", help="List every miss and false positive.")
    parser.add_argument("--tuning", action="store_true", help="Leave the held-out group out (while tuning).")
    parser.add_argument("--against", metavar="CHECKOUT", help="Also run the tables with another checkout's memcli "
                        "(e.g. main's worktree) in the same run, and print both.")
    parser.add_argument("--timing", type=int, default=0, metavar="BYTES",
                        help="Also time redact() on a tool output of this many bytes (median of --runs).")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one side of --against
    args = parser.parse_args()
    if args.json:
        result = tables(args.verbose, args.tuning)
        if args.timing:
            result["times"] = timing(args.timing, args.runs)
        print(json.dumps(result))
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    flags = (["-v"] if args.verbose else []) + (["--tuning"] if args.tuning else [])
    sides = {"this": None}
    if args.against:
        sides = {"before": args.against, "after": here}
    results: dict[str, dict] = {name: {} for name in sides}
    rounds = 2 if args.timing and args.against else 1
    for n in range(rounds):  # with --timing, the two sides alternate, so a load change hits both
        for name, path in sides.items():
            timed = ["--timing", str(args.timing), "--runs", str(args.runs)] if args.timing else []
            got = _other(path, flags + timed) if path else json.loads(json.dumps(
                {**tables(args.verbose, args.tuning), **({"times": timing(args.timing, args.runs)} if args.timing else {})}))
            if n == 0:
                results[name] = got
            else:
                for kind, times in got["times"].items():
                    results[name]["times"][kind] += times
    names = list(sides)
    for section, what in (("positives", "missed"), ("look-alikes", "redacted")):
        print(f"{section:48} {'n':>4} " + " ".join(f"{what + ' ' + name:>16}" for name in names))
        total = {name: 0 for name in names}
        count = 0
        for group, (n, _) in results[names[-1]][section].items():
            cells = []
            for name in names:
                row = results[name][section].get(group)
                cells.append(f"{row[1]:16d}" if row else f"{'-':>16}")
                total[name] += row[1] if row else 0
            count += n
            print(f"{group[:48]:48} {n:4d} " + " ".join(cells))
        print(f"{'all':48} {count:4d} " + " ".join(f"{total[name]:16d}" for name in names) + "\n")
    for name in names:
        for line in results[name]["misses"]:
            print(f"  {name} missed: {line}")
        for line in results[name]["wrong"]:
            print(f"  {name} redacted: {line}")
    for kind in results[names[0]].get("times", {}) if args.timing else ():
        medians = {name: statistics.median(results[name]["times"][kind]) for name in names}
        runs = len(results[names[0]]["times"][kind])
        print(f"redact() on a {args.timing}-byte tool output ({kind}), median of {runs} runs: "
              + ", ".join(f"{name} {medians[name]:.3f} s" for name in names)
              + (f", ratio after/before {medians['after'] / medians['before']:.2f}" if args.against else ""))


if __name__ == "__main__":
    main()
