"""`mem ingest` as a user meets it: a tree of notes into memories, kept in step on every re-run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import fake_secrets as fs
import pytest
from helpers import add, jsonl, load_file, memory_files, ok, run, store_root, write_tree

from memcli.store.sources import written

WORDS = ("proxy", "queue", "retry", "backoff", "invoice", "tenant", "cluster", "deploy", "budget", "schema")


def section(n: int, sentences: int = 16) -> str:
    body = " ".join(f"Part {n} note {i}: the {WORDS[(n + i) % 10]} settings changed in week {n * 10 + i}."
                    for i in range(sentences))
    return f"## Part {n}\n\n{body}"


def guide(parts=range(1, 7), edit: dict[int, str] | None = None) -> str:
    return "# Operations guide\n\n" + "\n\n".join((edit or {}).get(n, section(n)) for n in parts) + "\n"


@pytest.fixture
def project(project) -> Path:
    """The project of conftest, with a small tree of notes under docs/."""
    root = project
    write_tree(root, {
        ".memignore": "*.log\n",
        "docs/guide.md": guide(),
        "docs/short.md": "Billing moved from Heroku to Fly.io in March.\n",
        "docs/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
        "docs/.env": "STRIPE_KEY=whatever\n",
        "docs/build.log": "compiled ok\n",
        "docs/.memignore": "drafts/\n",
        "docs/drafts/wip.md": "half an idea\n",
        "docs/team/.memignore": "/local.md\n",
        "docs/team/local.md": "only on my machine\n",
        "docs/team/people.md": "Dana owns the billing service; Lee owns search.\n",
        "docs/team/empty.md": "\n\n",
    })
    return root


def ingest(*args) -> tuple[dict, str]:
    result = ok("ingest", *args, "--json")
    return json.loads(result.stdout), result.stderr


def chunks() -> dict[str, dict]:
    """Every ingested memory by its source, with every stored field (`mem export`)."""
    found = {}
    for memory in jsonl(ok("export").stdout):
        assert memory["source"] not in found, f"two memories for {memory['source']}"
        found[memory["source"]] = memory
    return found


def counts(summary: dict) -> tuple[int, int, int, int]:
    return summary["added"], summary["updated"], summary["unchanged"], summary["removed"]


def test_ingest_a_tree_skips_ignored_and_binary_files_and_chunks_long_ones(project):
    summary, stderr = ingest("docs", "-t", "docs")
    stored = chunks()
    guide_sources = sorted((s for s in stored if s.startswith("docs/guide.md#")), key=lambda s: int(s.split("#")[1]))
    assert len(guide_sources) >= 3 and guide_sources == [f"docs/guide.md#{n}" for n in range(1, len(guide_sources) + 1)]
    assert set(stored) == set(guide_sources) | {"docs/short.md#1", "docs/team/people.md#1"}
    assert summary == {"seen": 9, "files": 4, "ignored": 4, "binary": 1, "skipped": 0, "refused": [],
                       "added": len(stored), "updated": 0, "unchanged": 0, "removed": 0, "orphaned": 0,
                       "pending": summary["pending"], "redacted": {}, "dry_run": False}
    assert (f"mem: 9 paths: 4 files read, 4 ignored, 1 binary; chunks: {len(stored)} added, 0 updated, "
            "0 unchanged, 0 removed") in stderr
    for memory in stored.values():
        assert memory["written_by"] == "ingest" and memory["tags"] == ["docs"]
    texts = [stored[s]["raw"] for s in guide_sources]
    assert all(len(text) <= 1500 for text in texts)
    assert "\n".join(texts).split() == guide().split()  # nothing lost, nothing reordered
    assert texts[0].startswith("# Operations guide") and all(t.startswith("## Part") for t in texts[1:])
    # long chunks wait for compression, and the summary says how many
    assert summary["pending"] == len(guide_sources) and not any(stored[s]["compressed"] for s in guide_sources)
    assert f"{len(guide_sources)} chunks wait for compression: run `mem compress --pending`" in stderr
    assert ok("compress", "--pending").exit_code == 0
    assert all(chunks()[s]["compressed"] for s in guide_sources)
    assert stored["docs/short.md#1"]["raw"] == "Billing moved from Heroku to Fly.io in March."


def test_re_ingest_keeps_unchanged_chunks_replaces_changed_ones_and_prunes_only_when_asked(project):
    ingest("docs")
    first = chunks()
    files_before = {p.name for p in memory_files()}

    again, _ = ingest("docs")
    assert counts(again) == (0, 0, len(first), 0) and chunks() == first
    assert {p.name for p in memory_files()} == files_before

    (project / "docs" / "guide.md").write_text(guide(edit={3: section(3).replace("week 31", "week 99")}))
    edited, _ = ingest("docs")
    assert counts(edited) == (1, 0, len(first) - 1, 1)
    after = chunks()
    changed = [s for s in first if first[s]["id"] != after[s]["id"]]
    assert len(changed) == 1 and "week 99" in after[changed[0]]["raw"]
    assert all(after[s] == first[s] for s in first if s not in changed)

    (project / "docs" / "short.md").unlink()
    kept, stderr = ingest("docs")
    assert counts(kept) == (0, 0, len(first) - 1, 0) and kept["orphaned"] == 1
    assert "kept 1 chunk of files no longer there (--prune deletes them)" in stderr
    assert "docs/short.md#1" in chunks()

    elsewhere, _ = ingest("docs/team", "--prune")  # prunes only under the paths it walks
    assert counts(elsewhere) == (0, 0, 1, 0) and "docs/short.md#1" in chunks()

    pruned, _ = ingest("docs", "--prune")
    assert counts(pruned) == (0, 0, len(first) - 1, 1) and pruned["orphaned"] == 0
    assert "docs/short.md#1" not in chunks() and len(chunks()) == len(first) - 1


def test_ingest_manages_only_the_memories_it_wrote(project):
    mine = add("My own summary of the billing move", "--source", "docs/short.md#1")
    ingest("docs")
    (project / "docs" / "short.md").unlink()
    ingest("docs", "--prune")
    assert ok("show", mine, "--json").exit_code == 0


def test_a_chunk_that_moves_keeps_its_id_under_its_new_number(project):
    ingest("docs")
    first = chunks()
    (project / "docs" / "guide.md").write_text(guide(parts=range(0, 7)).replace("# Operations guide\n\n", "", 1))
    moved, _ = ingest("docs")
    after = chunks()
    by_text = {m["raw"]: m for m in after.values()}
    kept = [m for m in first.values() if m["raw"] in by_text]
    assert kept and all(by_text[m["raw"]]["id"] == m["id"] for m in kept)
    assert moved["updated"] >= 1 and any(by_text[m["raw"]]["source"] != m["source"] for m in kept)
    numbers = sorted(int(s.split("#")[1]) for s in after if s.startswith("docs/guide.md#"))
    assert numbers == list(range(1, len(numbers) + 1))


def test_re_ingest_with_a_new_tag_adds_it_to_unchanged_chunks(project):
    ingest("docs/short.md", "-t", "billing")
    summary, _ = ingest("docs/short.md", "-t", "history")
    assert counts(summary) == (0, 1, 0, 0)
    assert chunks()["docs/short.md#1"]["tags"] == ["billing", "history"]


def test_the_same_text_in_two_files_is_stored_for_each(project):
    write_tree(project, {"docs/a/faq.md": "Restart the worker after a deploy.\n",
                    "docs/b/faq.md": "Restart the worker after a deploy.\n"})
    ingest("docs/a", "docs/b")
    stored = chunks()
    assert stored["docs/a/faq.md#1"]["raw"] == stored["docs/b/faq.md#1"]["raw"]
    assert stored["docs/a/faq.md#1"]["id"] != stored["docs/b/faq.md#1"]["id"]
    again, _ = ingest("docs/a", "docs/b")
    assert counts(again) == (0, 0, 2, 0)


def test_dry_run_says_what_would_change_and_stores_nothing(project):
    summary, stderr = ingest("docs", "--dry-run")
    assert summary["dry_run"] and summary["added"] >= 5 and summary["files"] == 4
    assert "mem: dry run, nothing stored: 9 paths: 4 files read" in stderr
    assert not store_root().exists()
    ingest("docs")
    first = chunks()
    (project / "docs" / "short.md").write_text("Billing moved to Fly.io in April.\n")
    (project / "docs" / "team" / "people.md").unlink()
    preview, _ = ingest("docs", "--dry-run", "--prune")
    assert counts(preview) == (1, 0, len(first) - 2, 2)
    assert chunks() == first


def test_sources_do_not_depend_on_the_working_directory(project, monkeypatch):
    ingest("docs/team")
    monkeypatch.chdir(project / "docs")
    summary, _ = ingest(".")
    assert summary["added"] >= 1 and summary["unchanged"] == 1  # team/people.md was there already
    assert all(s.startswith("docs/") for s in chunks())


def test_paths_outside_the_project_are_written_from_home_or_in_full(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = Path(os.environ["MEM_DIR"])
    assert written(home, home / "notes" / "a.md") == "notes/a.md"
    assert written(home, tmp_path / "home" / "wiki" / "b.md") == "~/wiki/b.md"
    assert written(home, Path("/srv/wiki/c.md")) == "/srv/wiki/c.md"
    write_tree(tmp_path / "home", {"wiki/b.md": "Rotate the on-call every Monday.\n"})
    ingest(tmp_path / "home" / "wiki")
    assert list(chunks()) == ["~/wiki/b.md#1"]


def test_secrets_are_redacted_before_chunking_and_a_surviving_key_refuses_only_its_file(project, fakes):
    compressor, embedder = fakes
    body = fs.key_body(lines=40)  # a key block longer than a chunk is still redacted whole
    password, token = fs.password(), fs.github_token()
    write_tree(project, {
        "docs/ops/runbook.md": f"{section(1)}\n\nThe DB password={password} and the bot uses {token}.\n\n"
                               f"{fs.pem(body)}\n\n{section(2)}\n",
        "docs/ops/leak.md": f"{section(3)}\n\n{fs.truncated_pem(fs.key_body())}\n",
    })
    result = run("ingest", "docs/ops", "--json")
    assert result.exit_code == 7
    summary = json.loads(result.stdout)
    assert summary["redacted"] == {"github-token": 1, "password": 1, "private-key": 1}
    assert summary["refused"] == ["docs/ops/leak.md: refusing to store this text: it still holds a private key "
                                  "('-----BEGIN OPENSSH PRIVATE KEY-----' on line 5) after redaction; remove the "
                                  "key and try again"]
    assert "mem: redacted 3 secrets: 1 github-token, 1 password, 1 private-key" in result.stderr
    stored = chunks()
    assert not any(s.startswith("docs/ops/leak.md") for s in stored)
    runbook = " ".join(m["raw"] for s, m in stored.items() if s.startswith("docs/ops/runbook.md"))
    assert "password=[REDACTED:password]" in runbook and "[REDACTED:private-key]" in runbook
    for secret in [password, token, *body]:
        assert not any(secret in text for text in compressor.seen + embedder.seen)
        for path in store_root().rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path


def test_compression_is_queued_by_default_and_compress_now_waits_for_it(project, fakes):
    compressor, _ = fakes
    ingest("docs/guide.md")
    statuses = {load_file(p)["compression"]["status"] for p in memory_files()}
    assert "pending" in statuses and compressor.seen == []
    assert ok("compress", "--pending").exit_code == 0 and compressor.seen
    write_tree(project, {"docs/later.md": guide().replace("Operations", "Maintenance")})
    seen = len(compressor.seen)
    summary, stderr = ingest("docs/later.md", "--compress-now")
    assert summary["added"] and summary["pending"] == 0 and "wait for compression" not in stderr
    assert len(compressor.seen) > seen


def test_an_explicitly_named_ignored_file_is_refused_like_add_file(project):
    result = run("ingest", "docs/.env", "docs/build.log")
    assert result.exit_code == 7 and "refusing file docs/.env: it is ignored by built-in defaults" in result.stderr
    assert not store_root().exists() or chunks() == {}


def test_a_store_in_the_walked_folder_never_ingests_its_own_files(tmp_path, monkeypatch):
    notes = tmp_path / "notes"
    monkeypatch.setenv("MEM_DIR", str(notes))
    ok("init")
    add("a memory typed by hand")
    write_tree(notes, {"ideas.md": "Try SQLite FTS5 for the search box.\n"})
    summary, _ = ingest(notes)
    sources = {m.get("source") for m in jsonl(ok("ls", "--jsonl").stdout)}
    assert "ideas.md#1" in sources and None in sources
    assert not any(s and s.startswith(("memories/", "mem.yaml", ".index/")) for s in sources)
    assert summary["ignored"] >= 3  # mem.yaml, the memory file, .index/
    assert ingest(notes)[0]["added"] == 0


def test_ingested_chunks_are_found_by_search_with_their_source(project):
    ingest("docs")
    hits = jsonl(ok("search", "Heroku Fly.io billing", "--jsonl", "-k", "1").stdout)
    assert hits[0]["source"] == "docs/short.md#1"
    assert [m["source"] for m in jsonl(ok("ls", "--jsonl", "--source", "docs/team/*").stdout)] == \
        ["docs/team/people.md#1"]


@pytest.mark.models
def test_ingested_chunks_are_found_by_meaning_with_the_real_embedder(project, real_models):
    write_tree(project, {"docs/ops/scraping.md": "## Scraping\n\nAmazon blocks IPs after about 30 requests per second, "
                                            "so the crawler rotates through residential proxies.\n\n"
                                            "## Billing\n\nInvoices go out on the first of the month; customers on "
                                            "the annual plan are billed once a year in January.\n"})
    ok("init")
    settings = store_root() / "mem.yaml"
    settings.write_text(settings.read_text().replace("ingest_chunk_chars: 1500", "ingest_chunk_chars: 200"))
    ingest("docs/ops")
    assert set(chunks()) == {"docs/ops/scraping.md#1", "docs/ops/scraping.md#2"}
    for query, source in (("how do we avoid getting blocked", "#1"), ("when do customers get their bill", "#2")):
        hits = jsonl(ok("search", query, "--mode", "vector", "--jsonl", "-k", "1").stdout)
        assert hits[0]["source"] == "docs/ops/scraping.md" + source
