"""As a user meets them: no secret reaches a file or the catalog through any field,
the shapes a held-out round found are caught, the user store is private, an invalid edit leaves nothing.

Each test is named for its item; the neighbours of each failure (other fields, other shapes, other ways
an edit can fail) sit beside it."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import fake_secrets as fs
import fakes as fakes_module
import mcp_client
import pytest
from helpers import add, jsonl, load_file, memory_files, ok, run, short_id, store_root

from memcli.privacy.redact import redact

AWS_SECRET_LINE = "aws_secret_access_key"


def assert_nowhere(secrets: list[str]) -> None:
    """No secret in any file of the store (memories, catalog and its journal, vectors, settings), nor in
    any text the catalog holds, in any case."""
    root = store_root()
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            for secret in secrets:
                assert secret.lower().encode() not in data, f"{secret} found in {path}"
    db = sqlite3.connect(root / ".index" / "catalog.sqlite")
    texts = [str(v) for row in db.execute("SELECT * FROM memories") for v in row]
    texts += [str(v) for row in db.execute("SELECT raw, tags FROM fts") for v in row]
    db.close()
    assert texts
    for secret in secrets:
        assert not any(secret.lower() in text.lower() for text in texts), secret


def write_editor(tmp_path, body: str) -> str:
    """An $EDITOR that runs `body` with `p` (the file) and `t` (its text) in scope."""
    script = tmp_path / "editor.py"
    script.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\nt = p.read_text()\n" + body + "\n")
    return f"{sys.executable} {script}"


# -- every string that reaches a file or the catalog is redacted ------------------------------

def test_tag_with_a_secret_is_redacted_in_the_file_and_the_catalog():
    password, key_id = fs.password(), fs.aws_access_key()
    result = ok("add", "the staging database", "-t", f"password={password}", "-t", key_id, "-t", "db", "--json")
    stored = json.loads(result.stdout)
    assert stored["tags"] == ["password=[REDACTED:password]", "[REDACTED:aws-access-key]", "db"]
    assert stored["redacted"] == {"password": 1, "aws-access-key": 1}
    assert "mem: redacted 2 secrets" in result.stderr
    assert_nowhere([password, key_id])
    listed = jsonl(ok("ls", "--jsonl", "-t", "db").stdout)
    assert listed[0]["tags"] == stored["tags"]


def test_mcp_tags_source_and_client_name_are_redacted():
    token, password = fs.github_token(), fs.password()

    async def scenario(client):
        return await mcp_client.call(client, "memory_write", content="notes on the release bot",
                                     tags=[f"token={token}", "release"], source=f"https://bot:{password}@ci.example.com/x")

    written = mcp_client.session(scenario, client=f"evil-client password={password}")
    assert written["tags"] == ["token=[REDACTED:github-token]", "release"]
    assert written["source"] == "https://bot:[REDACTED:url-password]@ci.example.com/x"
    assert written["written_by"] == "mcp:evil-client password=[REDACTED:password]"
    assert written["redacted"] == {"github-token": 1, "url-password": 1, "password": 1}
    assert_nowhere([token, password])


def test_import_redacts_unknown_keys_written_by_reason_and_nested_values():
    token, secret, password = fs.github_token(), fs.aws_secret_key(), fs.password()
    record = {
        "id": "01JDQ4R8ZK3M5N7P9Q1S3T5V7X", "raw": "a clean note about the deploy", "tags": ["Deploy"],
        "written_by": f"script api_key={token}",
        "compressed": "clean note about deploy",
        "compression": {"method": "prune", "status": "failed", "reason": f"HTTP 401 for key {token}"},
        "notes": f"api_key={token}",
        "password": "correct horse battery staple",
        "db": {"aws_secret_access_key": secret, "hosts": ["db-1", f"postgres://app:{password}@db-2/app"]},
        token: "a key that is itself a token",
    }
    result = ok("import", "--json", input=json.dumps(record) + "\n")
    summary = json.loads(result.stdout)
    assert summary["imported"] == 1
    exported = jsonl(ok("export").stdout)[0]
    assert exported["written_by"] == "script api_key=[REDACTED:github-token]"
    assert exported["compression"]["reason"] == "HTTP 401 for key [REDACTED:github-token]"
    assert exported["notes"] == "api_key=[REDACTED:github-token]"
    assert exported["password"] == "[REDACTED:password]"
    assert exported["db"] == {"aws_secret_access_key": "[REDACTED:aws-secret-key]",
                              "hosts": ["db-1", "postgres://app:[REDACTED:url-password]@db-2/app"]}
    assert exported["[REDACTED:github-token]"] == "a key that is itself a token"
    assert exported["compressed"] == "clean note about deploy" and exported["tags"] == ["deploy"]
    assert summary["redacted"] == {"github-token": 4, "password": 1, "aws-secret-key": 1, "url-password": 1}
    assert_nowhere([token, secret, password, "correct horse battery staple"])


def test_an_import_line_with_an_uppercase_key_in_a_tag_is_caught_before_tags_are_lowercased():
    key_id = fs.aws_access_key()
    ok("import", input=json.dumps({"raw": "billing account", "tags": [key_id]}) + "\n")
    assert jsonl(ok("export").stdout)[0]["tags"] == ["[REDACTED:aws-access-key]"]
    assert_nowhere([key_id])


def test_an_edit_that_adds_a_key_holding_an_aws_secret_saves_it_redacted(tmp_path):
    memory_id = add("the billing account")
    secret, token = fs.aws_secret_key(), fs.github_token()
    editor = write_editor(tmp_path, f"p.write_text(t + '{AWS_SECRET_LINE}: {secret}\\nci:\\n  bot: {token}\\n"
                                    f"tags: [x]\\n'.replace('tags: []\\n', ''))")
    result = ok("edit", memory_id, env={"EDITOR": editor})
    assert f"saved {short_id(memory_id)}" in result.stderr and "redacted 2 secrets" in result.stderr
    data = load_file(memory_files()[0])
    assert data[AWS_SECRET_LINE] == "[REDACTED:aws-secret-key]"
    assert data["ci"] == {"bot": "[REDACTED:github-token]"}
    assert_nowhere([secret, token])


def test_an_edit_that_puts_a_secret_in_tags_source_or_written_by_is_redacted(tmp_path):
    memory_id = add("the billing account")
    password, key_id = fs.password(), fs.aws_access_key()
    editor = write_editor(tmp_path, "import yaml\nd = yaml.safe_load(t)\n"
                                    f"d['tags'] = ['{key_id}']\nd['source'] = 'https://u:{password}@host/x'\n"
                                    f"d['written_by'] = 'cli password={password}'\np.write_text(yaml.safe_dump(d))")
    ok("edit", memory_id, env={"EDITOR": editor})
    data = load_file(memory_files()[0])
    assert data["tags"] == ["[REDACTED:aws-access-key]"]
    assert data["source"] == "https://u:[REDACTED:url-password]@host/x"
    assert data["written_by"] == "cli password=[REDACTED:password]"
    assert_nowhere([password, key_id])


def test_a_private_key_in_any_field_refuses_the_write():
    body = fs.key_body()
    result = run("import", input=json.dumps({"raw": "note", "notes": fs.truncated_pem(body)}) + "\n")
    assert result.exit_code == 7 and "still holds a private key" in result.stderr
    result = run("add", "note", "--source", fs.truncated_pem(body).replace("\n", " "))
    assert result.exit_code == 7
    assert memory_files() == []


def test_a_compression_failure_whose_reason_holds_a_secret_is_redacted(use_providers):
    token = fs.github_token()

    def failing(raw, **_):
        raise RuntimeError(f"provider said 401 for https://api.example.com/?key={token}")

    use_providers(compressor=failing)
    memory_id = add("x " * 300)
    reason = load_file(memory_files()[0])["compression"]["reason"]
    assert "[REDACTED:" in reason and token not in reason
    assert_nowhere([token])
    assert memory_id


# -- shapes the first detectors missed -------------------------------------------------------

def putty_key(version: int = 2) -> str:
    public = "\n".join(fs.key_body(2))
    private = "\n".join(fs.key_body(3))
    return (f"PuTTY-User-Key-File-{version}: ssh-rsa\nEncryption: none\nComment: rsa-key-20240101\n"
            f"Public-Lines: 2\n{public}\nPrivate-Lines: 3\n{private}\nPrivate-MAC: {fs.rand(40, '0123456789abcdef')}")


def ssh2_key() -> str:
    body = "\n".join(fs.key_body(4))
    return ("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20240101\"\n" + body
            + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----")


@pytest.mark.parametrize("text, gone", [
    (lambda: "my laptop key:\n" + putty_key(), lambda t: t.split("Private-Lines: 3\n")[1].split("\n")[0]),
    (lambda: "old key\n" + putty_key(3), lambda t: t.split("Private-Lines: 3\n")[1].split("\n")[0]),
    (lambda: "the appliance key:\n" + ssh2_key() + "\nrotate yearly", lambda t: t.split("\n")[3]),
    (lambda: "wifi password = correct horse battery staple", lambda t: "horse battery staple"),
    (lambda: "vpn:\n  passphrase: correct horse battery staple\n  host: vpn.example.com",
     lambda t: "horse battery staple"),
], ids=["putty-2", "putty-3", "ssh2", "password-phrase", "yaml-passphrase"])
def test_putty_ssh2_and_multi_word_passwords_are_redacted(text, gone):
    text = text()
    secret = gone(text)
    result = ok("add", text, "--json")
    assert json.loads(result.stdout)["redacted"] in ({"private-key": 1}, {"password": 1})
    assert_nowhere([secret])


def test_a_putty_key_cut_before_its_mac_is_refused():
    cut = putty_key().rsplit("\nPrivate-MAC", 1)[0]
    result = run("add", "half a key:\n" + cut)
    assert result.exit_code == 7 and "still holds a private key" in result.stderr
    result = run("add", "the private part alone:\n" + cut.split("Private-Lines")[1].join(["Private-Lines", ""]))
    assert result.exit_code == 7
    assert memory_files() == []


def test_an_ssh2_public_key_and_prose_about_passwords_stay():
    public = "---- BEGIN SSH2 PUBLIC KEY ----\n" + "\n".join(fs.key_body(2)) + "\n---- END SSH2 PUBLIC KEY ----"
    for text in (public, "password = x if admin else y", "password: must be 12 characters or more",
                 "Password: see the vault entry"):
        assert redact(text).text == text


# -- the user store is private ---------------------------------------------------------------

def modes(root) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]}


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_store_folder_is_0700_and_every_file_0600_under_umask_022(umask_022):
    add("the first memory", "-t", "a")
    add("y " * 300)
    ok("search", "memory")
    ok("reindex")
    root = store_root()
    found = modes(root)
    assert {".index/catalog.sqlite", ".index/vectors.hnsw", ".index/lock", "mem.yaml", ".gitignore"} <= set(found)
    assert any(name.startswith("memories/") and name.endswith(".yaml") for name in found)
    for name, mode in found.items():
        expected = 0o700 if (root / name).is_dir() else 0o600
        assert mode == expected, f"{name} is {oct(mode)}"


def test_a_store_made_before_is_tightened_on_the_next_write(umask_022):
    root = store_root()
    ok("init")
    os.chmod(root, 0o755)
    os.chmod(root / ".index", 0o755)
    add("one more")
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((root / ".index").stat().st_mode) == 0o700


def test_caches_rebuilt_by_a_read_are_private_too(umask_022):
    add("the first memory")
    root = store_root()
    for path in sorted((root / ".index").iterdir(), reverse=True):
        path.unlink()
    (root / ".index").rmdir()
    ok("ls")
    ok("search", "memory")
    for name, mode in modes(root).items():
        expected = 0o700 if (root / name).is_dir() else 0o600
        assert mode == expected, f"{name} is {oct(mode)}"


def test_a_project_store_inside_a_repository_follows_the_repository_modes(tmp_path, monkeypatch, umask_022):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.setenv("MEM_DIR", str(repo / ".mem"))
    add("a shared decision")
    for name, mode in modes(repo / ".mem").items():
        expected = 0o755 if (repo / ".mem" / name).is_dir() else 0o644
        assert mode == expected, f"{name} is {oct(mode)}"


# -- an invalid edit leaves no temp file -----------------------------------------------------

@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    """A fresh system temp folder, to see what an edit leaves in it."""
    folder = tmp_path / "systmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


def leftovers(temp_dir) -> list[str]:
    stray = [str(p) for p in temp_dir.rglob("*")]
    return stray + [str(p) for p in store_root().rglob("*") if p.name.endswith(".tmp") or "edit-" in p.name]


@pytest.mark.parametrize("script, message, code", [
    ("p.write_text('raw: [unclosed')", "not valid YAML", 5),
    ("p.write_text(t.replace('raw: |-', 'notraw: |-'))", "'raw' must be non-empty text", 5),
    ("import re\np.write_text(re.sub(r'^id: .*$', 'id: 01ARZ3NDEKTSV4RRFFQ69G5FAV', t, flags=re.M))",
     "id cannot be changed", 5),
    ("p.write_text('- a\\n- list\\n')", "expected a mapping", 5),
    ("p.write_text(t.replace('raw: |-', 'tags: [has space]\\nraw: |-'))", "may not contain spaces", 5),
    (f"p.write_text(t + 'notes: |\\n  ' + {fs.truncated_pem(fs.key_body())!r}.replace(chr(10), chr(10) + '  '))",
     "still holds a private key", 7),
    ("p.write_text(t.replace('precious', 'changed'))\nsys.exit(3)", "Editing failed", 2),
], ids=["yaml", "no-raw", "id", "not-a-mapping", "bad-tag", "private-key", "editor-fails"])
def test_an_invalid_edit_leaves_no_temp_file_anywhere(tmp_path, temp_dir, script, message, code):
    memory_id = add("precious text")
    before = memory_files()[0].read_bytes()
    result = run("edit", memory_id, env={"EDITOR": write_editor(tmp_path, script)})
    assert result.exit_code == code
    assert message in result.stderr
    assert "kept in" not in result.stderr
    assert leftovers(temp_dir) == []
    assert memory_files()[0].read_bytes() == before


def test_the_editor_works_on_a_private_file_inside_the_store(tmp_path, temp_dir):
    memory_id = add("precious text")
    seen = tmp_path / "seen.txt"
    editor = write_editor(tmp_path, f"import os, stat\npathlib.Path({str(seen)!r}).write_text(str(p) + ' ' + "
                                    "oct(stat.S_IMODE(os.stat(p).st_mode)))\np.write_text(t.replace('precious', 'new'))")
    ok("edit", memory_id, env={"EDITOR": editor})
    path, mode = seen.read_text().split()
    assert path.startswith(str(store_root() / ".index")) and mode == "0o600"
    assert leftovers(temp_dir) == [] and load_file(memory_files()[0])["raw"] == "new text"


# -- every path decided the same way, links and swaps included --------------------------

SECRET_ENV = "API_TOKEN=tok_{}\n"


class Tree(type(Path())):
    secret: str  # what .env holds, which must never be stored


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A folder of notes beside a .env holding a secret, outside the store (the user-store case), as cwd."""
    root = Tree(tmp_path / "work")
    secret = fs.rand(32)
    (root / "docs").mkdir(parents=True)
    (root / ".env").write_text(SECRET_ENV.format(secret))
    (root / "docs" / "guide.md").write_text("how we deploy the scraper")
    monkeypatch.chdir(root)
    root.secret = secret
    return root


def stored_text() -> str:
    return "\n".join(m["raw"] + " " + str(m.get("source")) for m in jsonl(ok("export").stdout))


def test_a_link_to_an_ignored_file_is_never_read_by_add_ingest_or_a_walk(tree):
    (tree / "docs" / "link.md").symlink_to("../.env")
    result = run("add", "--file", "docs/link.md")
    assert result.exit_code == 7
    assert "refusing file docs/link.md (it leads to" in result.stderr and ".env*" in result.stderr
    run("ingest", "docs/link.md")
    ok("ingest", "docs")
    ok("ingest", ".")
    assert tree.secret not in stored_text()
    assert "how we deploy" in stored_text()
    checked = run("ignore", "check", "-v", "docs/link.md")
    assert checked.exit_code == 0 and checked.stdout.startswith("built-in defaults:2:.env*\tdocs/link.md -> ")


def test_links_by_every_route_are_decided_on_their_target(tree):
    (tree / "keys").mkdir()
    (tree / "keys" / "prod.pem").write_text("-----BEGIN CERTIFICATE-----\nabc\n")
    (tree / "docs" / "hop1.md").symlink_to("hop2.md")  # a chain of links
    (tree / "docs" / "hop2.md").symlink_to(tree / ".env")  # absolute
    (tree / "docs" / "keys").symlink_to("../keys", target_is_directory=True)  # a linked folder
    (tree / "docs" / "cert.md").symlink_to("../keys/prod.pem")
    (tree / "docs" / ".env.md").symlink_to("guide.md")  # an ignored name leading to a fine file
    for name in ("hop1.md", "hop2.md", "cert.md", ".env.md", "keys/prod.pem"):
        assert run("add", "--file", f"docs/{name}").exit_code == 7, name
    report = json.loads(ok("ingest", ".", "--json").stdout)
    assert report["files"] == 1 and report["added"] == 1
    assert tree.secret not in stored_text() and "BEGIN CERTIFICATE" not in stored_text()


def test_a_walk_never_follows_a_link_out_of_the_folder_unless_asked(tree, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "diary.md").write_text("a private diary entry")
    (elsewhere / ".env.local").write_text(SECRET_ENV.format(tree.secret))
    (tree / "docs" / "diary.md").symlink_to(elsewhere / "diary.md")
    (tree / "docs" / "more").symlink_to(elsewhere, target_is_directory=True)
    report = json.loads(ok("ingest", "docs", "--json").stdout)
    assert report["ignored"] == 2 and "diary" not in stored_text()
    report = json.loads(ok("ingest", "docs", "--follow-links", "--json").stdout)
    assert report["added"] == 2 and "a private diary entry" in stored_text()
    assert tree.secret not in stored_text()


def test_a_linked_folder_given_directly_is_walked_and_decided(tree, tmp_path):
    (tmp_path / "alias").symlink_to(tree, target_is_directory=True)
    report = json.loads(ok("ingest", str(tmp_path / "alias"), "--json").stdout)
    assert report["files"] == 1 and tree.secret not in stored_text()


def test_a_hard_link_to_an_ignored_file_is_refused(tree):
    os.link(tree / ".env", tree / "docs" / "notes.md")
    result = run("add", "--file", "docs/notes.md")
    assert result.exit_code == 7 and "it leads to" in result.stderr
    ok("ingest", "docs")
    run("ingest", "docs/notes.md")
    assert tree.secret not in stored_text()


def test_an_ignore_file_that_is_a_link_is_followed_to_a_regular_file_and_never_hangs(tree, tmp_path):
    (tmp_path / "shared-rules").write_text("*.md\n")
    (tree / "docs" / ".memignore").symlink_to(tmp_path / "shared-rules")
    assert run("add", "--file", "docs/guide.md").exit_code == 7
    (tree / "docs" / ".memignore").unlink()
    os.mkfifo(tree / "docs" / ".memignore")
    result = run("add", "--file", "docs/guide.md")
    assert result.exit_code == 5 and "not a regular file" in result.stderr
    (tree / "docs" / ".memignore").unlink()
    (tree / "docs" / ".memignore").symlink_to(tmp_path / "missing")
    assert run("ingest", "docs").exit_code == 5
    assert memory_files() == []


def test_a_fifo_or_device_named_directly_is_refused_without_hanging(tree):
    os.mkfifo(tree / "docs" / "pipe.md")
    (tree / "docs" / "zero.md").symlink_to("/dev/zero")
    for name in ("pipe.md", "zero.md"):
        result = run("add", "--file", f"docs/{name}")
        assert result.exit_code == 2 and "not a regular file" in result.stderr
    report = json.loads(ok("ingest", "docs", "--json").stdout)
    assert report["files"] == 1


def swapping(swap):
    """A compressor that does `swap()` (what another process does to the files) on its first call."""
    inner = fakes_module.FakeCompressor()

    def compress(raw, **options):
        if not inner.seen:
            swap()
        return inner(raw, **options)

    return compress


LONG_NOTE = "We rotate the proxies every hour and back off exponentially on HTTP 429 responses. " * 8


def test_a_file_swapped_for_a_link_to_env_while_ingest_compresses_never_stores_the_secret(tree, use_providers):
    (tree / "docs" / "a.md").write_text(LONG_NOTE)
    (tree / "docs" / "b.md").write_text("the second note")
    victim = tree / "docs" / "b.md"
    use_providers(compressor=swapping(lambda: (victim.unlink(), victim.symlink_to(tree / ".env"))))
    result = run("ingest", "docs", "--json", "--compress-now")
    # ingest reads every file it decided on before it stores (and compresses) any chunk, so progress can
    # count chunks: a swap while it compresses comes too late to change what is read.
    assert result.exit_code == 0
    assert "the second note" in stored_text() and tree.secret not in stored_text()


def test_a_folder_swapped_for_a_link_while_ingest_compresses_never_stores_the_secret(tree, tmp_path, use_providers):
    (tree / "docs" / "a.md").write_text(LONG_NOTE)
    (tree / "docs" / "z").mkdir()
    (tree / "docs" / "z" / "b.md").write_text("the second note")
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "b.md").write_text(SECRET_ENV.format(tree.secret))

    def swap_folder():
        os.rename(tree / "docs" / "z", tmp_path / "z-old")
        (tree / "docs" / "z").symlink_to(decoy, target_is_directory=True)

    use_providers(compressor=swapping(swap_folder))
    result = run("ingest", "docs", "--compress-now")
    assert result.exit_code == 0  # read before the swap, as above
    assert "the second note" in stored_text() and tree.secret not in stored_text()


def git_repo(path):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_the_memignore_of_the_files_folder_counts_in_every_path(tree):
    (tree / "docs" / ".memignore").write_text("secret.md\n")
    (tree / "docs" / "secret.md").write_text(SECRET_ENV.format(tree.secret))
    result = run("add", "--file", "docs/secret.md")
    assert result.exit_code == 7 and "docs/.memignore:1:secret.md" in result.stderr
    assert ok("ignore", "check", "-v", "docs/secret.md").stdout == "docs/.memignore:1:secret.md\tdocs/secret.md\n"
    run("ingest", "docs/secret.md")
    ok("ingest", "docs")
    run("ingest", str(tree / "docs" / "secret.md"))
    assert tree.secret not in stored_text()


def test_memignore_files_count_up_to_the_top_of_the_git_work_tree_only(tmp_path, monkeypatch):
    (tmp_path / ".memignore").write_text("*.md\n")  # above the work tree: not the repository's business
    repo = git_repo(tmp_path / "repo")
    write_tree_files = {".memignore": "drafts/\n", "notes/a.md": "a note", "notes/drafts/b.md": "a draft"}
    for name, text in write_tree_files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    monkeypatch.chdir(repo / "notes")
    assert run("ignore", "check", "a.md").exit_code == 1
    assert ok("ignore", "check", "-v", "drafts/b.md").stdout == f"{repo / '.memignore'}:1:drafts/\tdrafts/b.md\n"
    ok("add", "--file", "a.md")
    assert run("add", "--file", "drafts/b.md").exit_code == 7


def test_gitignore_counts_inside_a_work_tree_and_no_gitignore_turns_it_off(tmp_path, monkeypatch):
    repo = git_repo(tmp_path / "repo")
    files = {".gitignore": "build/\n*.log\n!.env.example\n", ".memignore": "!keep.log\n", "build/out.md": "built",
             "debug.log": "a log", "keep.log": "kept log", ".env.example": "API_TOKEN=", "notes.md": "a note",
             "extra.md": "excluded"}
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("extra.md\n")
    monkeypatch.chdir(repo)
    result = run("add", "--file", "build/out.md")
    assert result.exit_code == 7 and ".gitignore:1:build/" in result.stderr
    checked = ok("ignore", "check", "-v", "build/out.md", "debug.log", "keep.log", ".env.example", "extra.md")
    assert checked.stdout.splitlines() == [
        ".gitignore:1:build/\tbuild/out.md", ".gitignore:2:*.log\tdebug.log", ".memignore:1:!keep.log\tkeep.log",
        "built-in defaults:2:.env*\t.env.example", ".git/info/exclude:1:extra.md\textra.md"]
    report = json.loads(ok("ingest", ".", "--json").stdout)
    assert sorted(m["source"] for m in jsonl(ok("export").stdout)) == sorted(
        str(repo / name) + "#1" for name in ("keep.log", "notes.md"))
    assert report["files"] == 2
    ok("add", "--file", "build/out.md", "--no-gitignore")
    assert run("ignore", "check", "--no-gitignore", "debug.log").exit_code == 1
    report = json.loads(ok("ingest", ".", "--no-gitignore", "--json").stdout)
    assert report["files"] == 5  # + build/out.md, debug.log, extra.md; .env.example stays out
