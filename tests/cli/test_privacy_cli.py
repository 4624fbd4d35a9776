"""Privacy end to end: secrets redacted in every write path before anything sees them, the kill switch,
and the denylist (.memignore) as `mem add`, `--source` and `mem ignore check` honour it."""

from __future__ import annotations

import json
import sqlite3
import sys

import fake_secrets as fs
import mcp_client
import pytest
import yaml
from helpers import add, jsonl, load_file, memory_files, ok, run, short_id, store_root, write_tree

LONG = ("Rate limiting has been the hardest part of the scraper project. Amazon blocks IPs after about 30 "
        "requests per second, so we rotate through a pool of 12 residential proxies and back off "
        "exponentially starting at 250 ms. eBay is more lenient but returns HTTP 429 with a Retry-After "
        "header that we now honour. The crawler runs on a single Hetzner box with 4 cores.")


class Secrets:
    """One of each kind the tests look for, and a text that holds them all in ordinary prose."""

    def __init__(self):
        self.access_key = fs.aws_access_key()
        self.secret_key = fs.aws_secret_key()
        self.token = fs.github_token()
        self.password = fs.password()
        self.key_body = fs.key_body()
        self.text = (f"{LONG}\nDeploy notes for billing: the AWS key id is {self.access_key} and\n"
                     f"aws_secret_access_key = {self.secret_key}\n"
                     f"The release bot pushes tags with {self.token}. The staging DB has password={self.password}\n"
                     f"{fs.pem(self.key_body)}\n")
        self.counts = {"aws-access-key": 1, "aws-secret-key": 1, "github-token": 1, "password": 1, "private-key": 1}

    @property
    def all(self) -> list[str]:
        return [self.access_key, self.secret_key, self.token, self.password, *self.key_body]


def assert_nowhere(secrets: list[str], *spies) -> None:
    """No secret in any file of the store (memory YAML, catalog and its WAL, vectors), in the catalog's
    text and full-text index, or in what the models were given; redaction markers are there instead."""
    root = store_root()
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, f"{secret} found in {path}"
    db = sqlite3.connect(root / ".index" / "catalog.sqlite")
    texts = [row[0] for row in db.execute("SELECT raw FROM fts UNION ALL SELECT record FROM memories")]
    assert any("[REDACTED:" in text for text in texts)
    for secret in secrets:
        assert not any(secret in text for text in texts)
        assert not any(secret.lower() in text.lower() for text in texts)
    assert db.execute("SELECT count(*) FROM fts WHERE fts MATCH 'redacted'").fetchone()[0] >= 1
    for word in [s for s in secrets if s.isalnum()]:
        assert db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (f'"{word}"',)).fetchone()[0] == 0
    db.close()
    for spy in spies:
        assert spy.seen, "the model was never asked"
        assert any("[REDACTED:" in text for text in spy.seen)
        for secret in secrets:
            assert not any(secret in text for text in spy.seen), f"{secret} was handed to {spy}"


# -- redaction in every write path -------------------------------------------------------------------

def test_add_redacts_before_the_file_the_index_and_the_models_see_the_text(fakes):
    compressor, embedder = fakes
    secrets = Secrets()
    result = ok("add", "--json", "-t", "billing", input=secrets.text)
    payload = json.loads(result.stdout)
    assert payload["redacted"] == secrets.counts
    assert "mem: redacted 5 secrets: 1 aws-access-key, 1 aws-secret-key, 1 github-token, 1 password, " \
           "1 private-key" in result.stderr
    raw = load_file(memory_files()[0])["raw"]
    assert "the AWS key id is [REDACTED:aws-access-key] and" in raw
    assert "pushes tags with [REDACTED:github-token]." in raw and "password=[REDACTED:password]" in raw
    assert "[REDACTED:private-key]" in raw and "Amazon blocks IPs after about 30 requests" in raw
    assert payload["optimized"] and "[REDACTED:" in payload["content"]
    ok("search", "staging password")  # the search path embeds and indexes what is stored
    assert_nowhere(secrets.all, compressor, embedder)


def test_texts_that_differ_only_in_their_secret_are_one_memory():
    first = add(f"the deploy token is {fs.github_token()}")
    again = ok("add", f"the deploy token is {fs.github_token()}")
    assert again.stdout.strip() == first and "already stored" in again.stderr
    assert "redacted 1 secret: 1 github-token" in again.stderr
    assert len(memory_files()) == 1


def test_text_without_secrets_is_stored_as_given_and_says_nothing():
    text = "Set password_min_length = 12 in settings.py; the token bucket refills at 5/s."
    result = ok("add", "--json", text)
    assert json.loads(result.stdout)["redacted"] == {} and "redacted" not in result.stderr
    assert load_file(memory_files()[0])["raw"] == text


def test_a_private_key_that_survives_redaction_refuses_the_write_and_stores_nothing(fakes):
    compressor, embedder = fakes
    body = fs.key_body()
    result = run("add", input=f"{LONG}\nthe deploy key:\n{fs.truncated_pem(body)}\n")
    assert result.exit_code == 7
    assert "still holds a private key" in result.stderr and "line 3" in result.stderr
    assert not store_root().exists()
    assert compressor.seen == [] and embedder.seen == []
    add("an earlier memory")
    before = [p.read_bytes() for p in memory_files()]
    assert run("add", "--json", input=fs.truncated_pem(body)).exit_code == 7
    assert [p.read_bytes() for p in memory_files()] == before


def test_store_patterns_from_mem_yaml_redact_with_their_name():
    ok("init")
    settings = yaml.safe_load((store_root() / "mem.yaml").read_text())
    settings["redact"] = [{"name": "employee-id", "regex": r"EMP-\d{6}"}]
    (store_root() / "mem.yaml").write_text(yaml.safe_dump(settings))
    result = ok("add", "--json", "Ask EMP-123456 about the payroll export")
    assert json.loads(result.stdout)["redacted"] == {"employee-id": 1}
    assert load_file(memory_files()[0])["raw"] == "Ask [REDACTED:employee-id] about the payroll export"


def test_a_store_pattern_that_matches_mems_own_field_names_still_lets_notes_in():
    ok("init")
    settings = yaml.safe_load((store_root() / "mem.yaml").read_text())
    settings["redact"] = [{"name": "snake-ids", "regex": r"\b[a-z]+_[a-z]+\b"}]
    (store_root() / "mem.yaml").write_text(yaml.safe_dump(settings))
    result = ok("add", "--json", "the parser uses recursive descent, see parse_expr")
    assert json.loads(result.stdout)["redacted"] == {"snake-ids": 1}
    assert load_file(memory_files()[0])["raw"] == "the parser uses recursive descent, see [REDACTED:snake-ids]"


@pytest.mark.parametrize("regex", [".*", r"01[0-9A-Z]{24}", r"[0-9]{4}-[0-9]{2}-[0-9]{2}T"])
def test_a_store_pattern_that_matches_ids_or_times_still_lets_notes_in(regex):
    ok("init")
    settings = yaml.safe_load((store_root() / "mem.yaml").read_text())
    settings["redact"] = [{"name": "p", "regex": regex}]
    (store_root() / "mem.yaml").write_text(yaml.safe_dump(settings))
    ok("add", "the parser uses recursive descent")
    assert len(memory_files()) == 1


def test_a_broken_store_pattern_is_named_and_nothing_is_stored():
    ok("init")
    settings = yaml.safe_load((store_root() / "mem.yaml").read_text())
    settings["redact"] = [{"name": "ticket", "regex": "TICKET-([0-9"}]
    (store_root() / "mem.yaml").write_text(yaml.safe_dump(settings))
    result = run("add", "a harmless note")
    assert result.exit_code == 5
    assert "redact pattern 'ticket' has an invalid regex" in result.stderr
    assert memory_files() == []


def test_import_redacts_records_and_remakes_a_short_form_made_from_a_secret(tmp_path, fakes):
    compressor, embedder = fakes
    secrets = Secrets()
    leaky = {"id": "01JDQ4R8ZK3M5N7P9Q1S3T5V7X", "created_at": "2026-01-02T03:04:05Z", "raw": secrets.text,
             "compressed": f"billing AWS key {secrets.access_key} token {secrets.token}",
             "compression": {"method": "prune", "status": "done"}}
    records = [json.dumps(leaky),
               json.dumps({"raw": f"deploy key\n{fs.truncated_pem(fs.key_body())}"}),
               json.dumps({"raw": "env notes", "source": "config/.env.production"}),
               json.dumps({"raw": "a clean note"})]
    result = run("import", "--json", input="\n".join(records) + "\n")
    assert result.exit_code == 7
    summary = json.loads(result.stdout)
    assert summary == {"imported": 2, "duplicates": 0, "invalid": 0, "refused": 2, "forms_dropped": 0,
                       "redacted": secrets.counts}
    assert "line 2: refusing to store this text" in result.stderr
    assert "line 3: refusing source config/.env.production: it is ignored by built-in defaults:2:.env*" \
        in result.stderr
    stored = {m["id"]: m for m in jsonl(ok("export").stdout)}
    assert set(m["raw"] for m in stored.values()) >= {"a clean note"}
    imported = stored[leaky["id"]]
    assert imported["created_at"] == leaky["created_at"] and "[REDACTED:github-token]" in imported["raw"]
    assert imported["compressed"] is not None and "[REDACTED:" in imported["compressed"]
    assert_nowhere(secrets.all, compressor, embedder)


def test_edit_redacts_what_the_editor_typed(tmp_path):
    memory_id = add("the staging database lives on db-3")
    secret = fs.password()
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                      f"p.write_text(p.read_text().replace('db-3', 'db-3, password={secret}'))\n")
    result = ok("edit", memory_id, env={"EDITOR": f"{sys.executable} {editor}"})
    assert "mem: redacted 1 secret: 1 password" in result.stderr and f"saved {short_id(memory_id)}" in result.stderr
    assert load_file(memory_files()[0])["raw"] == "the staging database lives on db-3, password=[REDACTED:password]"
    assert secret not in memory_files()[0].read_text()


def test_an_edit_that_adds_a_private_key_is_neither_saved_nor_kept(tmp_path):
    memory_id = add("the deploy key is in the vault")
    before = memory_files()[0].read_bytes()
    body = fs.key_body()
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib, yaml\np = pathlib.Path(sys.argv[1])\nd = yaml.safe_load(p.read_text())\n"
                      f"d['raw'] += ':\\n' + {fs.truncated_pem(body)!r}\np.write_text(yaml.safe_dump(d))\n")
    result = run("edit", memory_id, env={"EDITOR": f"{sys.executable} {editor}"})
    assert result.exit_code == 7
    assert "still holds a private key" in result.stderr and "not saved, nor kept" in result.stderr
    assert "kept in" not in result.stderr
    assert memory_files()[0].read_bytes() == before


def test_mcp_memory_write_returns_the_counts_and_refuses_a_private_key():
    secret = fs.password()

    async def scenario(client):
        written = await mcp_client.call(client, "memory_write", content=f"the VPN password={secret}")
        refused = await mcp_client.error(client, "memory_write", content=fs.truncated_pem(fs.key_body()))
        ignored = await mcp_client.error(client, "memory_write", content="a key file", source="keys/prod.pem")
        return written, refused, ignored

    written, refused, ignored = mcp_client.session(scenario)
    assert written["redacted"] == {"password": 1}
    assert ok("show", written["id"], "--json").stdout.count("the VPN password=[REDACTED:password]") == 1
    assert "still holds a private key" in refused
    assert "refusing source keys/prod.pem: it is ignored by built-in defaults:3:*.pem" in ignored
    assert len(memory_files()) == 1 and secret not in memory_files()[0].read_text()


# -- the denylist ----------------------------------------------------------------------------------

def test_add_file_refuses_an_ignored_file_before_reading_it_and_names_the_rule(project, fakes):
    compressor, _ = fakes
    write_tree(project, {".env.example": "API_URL=https://api.example.com\n", "notes/debug.log": "boot ok\n",
                   "id_rsa": b"\x00\x01 not text", ".memignore": "# noise\n*.log\n"})
    result = run("add", "--file", ".env.example")
    assert result.exit_code == 7
    assert ("refusing file .env.example: it is ignored by built-in defaults:2:.env* "
            "(`mem ignore check -v .env.example` explains)") in result.stderr
    logged = run("add", "--file", "notes/debug.log")
    assert logged.exit_code == 7 and "it is ignored by .memignore:2:*.log" in logged.stderr
    key = run("add", "--file", "id_rsa")
    assert key.exit_code == 7 and "built-in defaults:7:id_rsa*" in key.stderr and "binary" not in key.stderr
    assert memory_files() == [] and compressor.seen == []


def test_add_file_is_accepted_after_a_re_include(project):
    write_tree(project, {".env.example": "API_URL=https://api.example.com\n", ".memignore": "!.env.example\n"})
    memory_id = ok("add", "--file", ".env.example").stdout.strip()
    assert json.loads(ok("show", memory_id, "--json").stdout)["source"] == ".env.example"
    explained = run("ignore", "check", "-v", ".env.example")
    assert explained.exit_code == 1  # matched, but by a re-include: not ignored
    assert explained.stdout == ".memignore:1:!.env.example\t.env.example\n"


@pytest.mark.parametrize("source, rule", [
    ("secrets/prod.pem", "built-in defaults:3:*.pem"),
    (".env#2", "built-in defaults:2:.env*"),
    ("file:///srv/app/.env.local", "built-in defaults:2:.env*"),
    ("~/.ssh/id_ed25519", "built-in defaults:10:id_ed25519*"),
    ("build/out.md", ".memignore:1:build/"),
])
def test_a_local_source_that_is_ignored_refuses_the_write(project, source, rule):
    write_tree(project, {".memignore": "build/\n", "build/out.md": "x"})
    result = run("add", "a note about the build", "--source", source)
    assert result.exit_code == 7
    assert f"refusing source {source}: it is ignored by {rule}" in result.stderr
    assert memory_files() == []


@pytest.mark.parametrize("source", ["https://vault.example.com/keys/prod.pem", "mailto:ops@example.com",
                                    "notes/rotation.md", "docs/setup.md#3"])
def test_uris_and_ordinary_paths_are_accepted_as_sources(project, source):
    memory_id = add("where the keys are rotated", "--source", source)
    assert json.loads(ok("show", memory_id, "--json").stdout)["source"] == source


def test_a_url_password_in_a_source_is_redacted(project):
    secret = fs.password()
    result = ok("add", "--json", "mirror of the wiki", "--source", f"https://bot:{secret}@wiki.example.com/page")
    payload = json.loads(result.stdout)
    assert payload["source"] == "https://bot:[REDACTED:url-password]@wiki.example.com/page"
    assert payload["redacted"] == {"url-password": 1}


IGNORE_FILE = """\
# every kind of pattern, as in .memignore.example
*.log
!release-notes.log
build/
/TODO.private.md
docs/internal/
secrets-?.md
backup-[0-9][0-9][0-9][0-9].md
notes/**/draft-*.md
**/tmp/
logs/**
!logs/summary.md
private/*
!private/README.md
\\#hash.md
!build/keep.md
"""

TREE = ["a/b/debug.log", "release-notes.log", "build/out.md", "build/keep.md", "src/build/x.md", "docs/build",
        "TODO.private.md", "sub/TODO.private.md", "docs/internal/plan.md", "x/docs/internal/plan.md",
        "secrets-a.md", "secrets-ab.md", "backup-2024.md", "backup-24.md", "notes/a/b/draft-1.md",
        "notes/final.md", "x/y/tmp/z.md", "logs/a.md", "logs/summary.md", "private/key.md", "private/README.md",
        "#hash.md", ".env.local", "readme.md", "report.draft", "sub/local.md", "local.md"]


def test_ignore_check_explains_every_kind_of_pattern_like_git(project, tmp_path):
    write_tree(project, {name: "x" for name in TREE})
    write_tree(project, {".memignore": IGNORE_FILE, "sub/.memignore": "/local.md\n"})
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "ignore").write_text("# mine\n*.draft\n")
    result = run("ignore", "check", "-v", "-n", *TREE)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        ".memignore:2:*.log\ta/b/debug.log",
        ".memignore:3:!release-notes.log\trelease-notes.log",
        ".memignore:4:build/\tbuild/out.md",
        ".memignore:4:build/\tbuild/keep.md",  # inside an ignored folder: the `!` cannot bring it back
        ".memignore:4:build/\tsrc/build/x.md",
        "::\tdocs/build",  # a file, and build/ names folders only
        ".memignore:5:/TODO.private.md\tTODO.private.md",
        "::\tsub/TODO.private.md",
        ".memignore:6:docs/internal/\tdocs/internal/plan.md",
        "::\tx/docs/internal/plan.md",
        ".memignore:7:secrets-?.md\tsecrets-a.md",
        "::\tsecrets-ab.md",
        ".memignore:8:backup-[0-9][0-9][0-9][0-9].md\tbackup-2024.md",
        "::\tbackup-24.md",
        ".memignore:9:notes/**/draft-*.md\tnotes/a/b/draft-1.md",
        "::\tnotes/final.md",
        ".memignore:10:**/tmp/\tx/y/tmp/z.md",
        ".memignore:11:logs/**\tlogs/a.md",
        ".memignore:12:!logs/summary.md\tlogs/summary.md",
        ".memignore:13:private/*\tprivate/key.md",
        ".memignore:14:!private/README.md\tprivate/README.md",
        ".memignore:15:\\#hash.md\t#hash.md",
        "built-in defaults:2:.env*\t.env.local",
        "::\treadme.md",
        f"{tmp_path / 'config' / 'ignore'}:2:*.draft\treport.draft",  # not below the current folder: whole
        "sub/.memignore:1:/local.md\tsub/local.md",
        "::\tlocal.md",
    ]
    plain = ok("ignore", "check", *TREE).stdout.splitlines()
    assert plain == ["a/b/debug.log", "build/out.md", "build/keep.md", "src/build/x.md", "TODO.private.md",
                     "docs/internal/plan.md", "secrets-a.md", "backup-2024.md", "notes/a/b/draft-1.md",
                     "x/y/tmp/z.md", "logs/a.md", "private/key.md", "#hash.md", ".env.local", "report.draft",
                     "sub/local.md"]


def test_ignore_check_exits_1_when_nothing_is_ignored_and_speaks_json(project):
    write_tree(project, {".memignore": "*.log\n!keep.log\n", "keep.log": "", "notes.md": "", "a.log": ""})
    none = run("ignore", "check", "notes.md", "keep.log")
    assert none.exit_code == 1 and none.stdout == ""
    rows = json.loads(ok("ignore", "check", "--json", "a.log", "keep.log", "notes.md").stdout)
    assert rows == [
        {"path": "a.log", "ignored": True, "source": ".memignore", "line": 1, "pattern": "*.log", "via": None},
        {"path": "keep.log", "ignored": False, "source": ".memignore", "line": 2, "pattern": "!keep.log", "via": None},
        {"path": "notes.md", "ignored": False, "source": None, "line": None, "pattern": None, "via": None},
    ]
    assert [r["path"] for r in jsonl(run("ignore", "check", "--jsonl", "notes.md").stdout)] == ["notes.md"]


def test_ignore_check_applies_the_memignore_files_above_a_path_with_or_without_root(project, tmp_path):
    outside = tmp_path / "wiki"
    write_tree(outside, {".memignore": "drafts/\n", "drafts/idea.md": "", "page.md": ""})
    draft = str(outside / "drafts" / "idea.md")
    for extra in ((), ("--root", outside)):
        result = ok("ignore", "check", "-v", *extra, draft)
        assert result.stdout == f"{outside / '.memignore'}:1:drafts/\t{draft}\n"
    assert run("ignore", "check", str(outside / "page.md")).exit_code == 1
    store_ignore = str(project / ".mem" / "memories" / "x.yaml")
    assert run("ignore", "check", store_ignore).stdout.strip() == store_ignore
