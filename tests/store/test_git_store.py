"""A store shared through git: clone, pull, merge, and `mem doctor` on what git can do to a store."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import jsonl, memory_files, ok, run, store_root

from memcli.errors import ModelError
from memcli.store import ids


def git_run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """git as in a fresh account: no system or user configuration leaks into the test."""
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=os.environ | {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull})


def git(repo: Path, *args: str) -> str:
    done = git_run(repo, *args)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def clone(bare: Path, target: Path, name: str) -> Path:
    git(bare.parent, "clone", "-q", str(bare), str(target))
    git(target, "config", "user.name", name)
    git(target, "config", "user.email", f"{name}@example.com")
    return target


def mem(store: Path, *args):
    return ok("--dir", store, *args)


def added(store: Path, text: str, *args) -> str:
    return mem(store, "add", text, *args).stdout.strip()


def found(store: Path, query: str, *args) -> list[str]:
    result = run("--dir", store, "search", query, "--jsonl", *args)
    assert result.exit_code == (0 if result.stdout else 1), result.stderr
    return [row["id"] for row in jsonl(result.stdout)]


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def team(tmp_path):
    """A bare repository on disk holding a store, and two clones of it (alice's and bob's)."""
    bare = tmp_path / "team.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    alice = clone(bare, tmp_path / "alice", "alice")
    ok("init", alice, "--git")
    commit_all(alice, "Start a shared mem store")
    git(alice, "push", "-q", "origin", "main")
    bob = clone(bare, tmp_path / "bob", "bob")
    return alice, bob


def test_two_clones_share_memories_through_push_and_pull(team):
    alice, bob = team
    rate = added(alice, "Amazon blocks IPs after about 30 requests per second", "-t", "scraper")
    commit_all(alice, "Remember the Amazon rate limit")
    git(alice, "push", "-q")

    git(bob, "pull", "-q", "--no-rebase")
    assert not (bob / ".index").exists() or not any((bob / ".index").iterdir())
    assert found(bob, "amazon requests") == [rate]  # the index builds itself after a clone or pull

    # Both add at the same time; the second to push merges, and nothing conflicts.
    deploy = added(alice, "Billing deploys need a migration check first", "-t", "billing")
    commit_all(alice, "Remember the deploy check")
    git(alice, "push", "-q")
    proxies = added(bob, "We rotate through 12 residential proxies", "-t", "scraper")
    commit_all(bob, "Remember the proxy pool")
    git(bob, "pull", "-q", "--no-rebase", "--no-edit")
    git(bob, "push", "-q")
    git(alice, "pull", "-q", "--no-rebase")
    for store in (alice, bob):
        assert found(store, "residential proxies")[0] == proxies
        assert found(store, "billing deploy migration")[0] == deploy
        assert len(jsonl(mem(store, "ls", "--jsonl").stdout)) == 3

    # A change and a delete travel too, into an index that already knew the old state.
    changed = next(p for p in memory_files(alice) if p.stem == rate)
    changed.write_text(changed.read_text().replace("about 30 requests", "about 20 requests"))
    mem(alice, "rm", "-y", deploy)
    commit_all(alice, "Correct the rate limit; drop the deploy note")
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-rebase")
    assert "about 20 requests" in json.loads(mem(bob, "show", rate, "--json").stdout)["content"]
    assert deploy not in found(bob, "billing deploy migration")
    assert run("--dir", bob, "show", deploy).exit_code == 4
    assert found(bob, "20 requests", "--mode", "text") == [rate]

    leftover = changed.with_name(f".{changed.name}.4242.tmp")  # what a write interrupted by a crash leaves
    leftover.write_text("half a memory")
    for store in (alice, bob):
        # Caches and temp files never show up as changes; only the vector cache, which is committed (bob's
        # search embedded the text alice edited outside mem, and added it there).
        changed = {line[3:].split("/")[0] for line in git(store, "status", "--porcelain").splitlines()}
        assert changed == ({"vectors"} if store == bob else set())
    assert "temp files left by interrupted writes" in run("--dir", alice, "doctor").stdout
    mem(alice, "doctor", "--fix")
    assert not leftover.exists()
    for store in (alice, bob):
        assert mem(store, "doctor").exit_code == 0


def test_two_branches_that_both_added_memories_merge_cleanly(team):
    alice, _ = team
    git(alice, "switch", "-q", "-c", "feature")
    on_feature = [added(alice, f"feature branch note {n} about the parser") for n in range(3)]
    commit_all(alice, "Notes from the feature branch")
    git(alice, "switch", "-q", "main")
    assert found(alice, "parser feature") == []
    on_main = [added(alice, f"main branch note {n} about the release") for n in range(2)]
    commit_all(alice, "Notes from main")
    git(alice, "merge", "-q", "--no-edit", "feature")
    assert git(alice, "diff", "--name-only", "--diff-filter=U") == ""
    listed = {row["id"] for row in jsonl(mem(alice, "ls", "--jsonl").stdout)}
    assert listed == set(on_feature + on_main)
    assert set(found(alice, "parser feature", "--mode", "text")) == set(on_feature)


def test_a_conflicting_edit_is_named_by_doctor_and_the_rest_still_works(team):
    alice, bob = team
    shared = added(alice, "The staging cluster is called kestrel")
    other = added(alice, "Grafana lives at ops-2")
    commit_all(alice, "Two notes")
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-rebase")
    for store, name in ((alice, "falcon"), (bob, "osprey")):
        path = next(p for p in memory_files(store) if p.stem == shared)
        path.write_text(path.read_text().replace("kestrel", name))
        commit_all(store, f"Rename staging to {name}")
    git(alice, "push", "-q")
    assert git_run(bob, "pull", "-q", "--no-rebase", "--no-edit").returncode != 0
    conflicted = git(bob, "diff", "--name-only", "--diff-filter=U").strip()
    assert conflicted.endswith(f"{shared}.yaml")

    assert found(bob, "grafana ops") == [other]
    report = run("--dir", bob, "doctor", "--json")
    assert report.exit_code == 1
    problems = [f for f in json.loads(report.stdout)["findings"] if not f["ok"]]
    assert [(p["check"], p["message"]) for p in problems] == [("files", f"{bob / conflicted}: unresolved git merge conflict")]
    assert f"git -C {bob} add {conflicted}" in problems[0]["fix"]  # typed outside the repository
    git(bob, "checkout", "--theirs", "--", conflicted)
    commit_all(bob, "Take alice's name")
    assert mem(bob, "doctor").exit_code == 0
    assert "falcon" in json.loads(mem(bob, "show", shared, "--json").stdout)["content"]


def test_doctor_finds_duplicate_ids_and_committed_caches(tmp_path):
    repo = tmp_path / "repo"
    store = repo / ".mem"
    ok("init", store)
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    first = added(store, "a note that will be copied")
    original = memory_files(store)[0]
    copy = store / "memories" / "2020" / "01" / original.name  # as a move in one branch and an edit in another
    copy.parent.mkdir(parents=True)
    copy.write_text(original.read_text())
    (store / ".gitignore").write_text("")
    git(repo, "config", "user.name", "carol")
    git(repo, "config", "user.email", "carol@example.com")
    commit_all(repo, "Commit everything, caches included")

    report = json.loads(run("--dir", store, "doctor", "--json").stdout)
    assert not report["healthy"]
    problems = [(f["check"], f["message"]) for f in report["findings"] if not f["ok"]]
    assert [check for check, _ in problems] == ["ids", "git", "git"]
    assert problems[0][1].startswith(f"{copy}: duplicate id {first}, also in memories/")
    assert problems[1][1].startswith("git does not ignore .index/")
    assert problems[2][1].startswith(".index/ is committed (")
    assert json.loads(mem(store, "show", first, "--json").stdout)["id"] == first  # one copy still works

    copy.unlink()
    ok("init", store)
    git(repo, "rm", "-r", "-q", "--cached", ".mem/.index")
    commit_all(repo, "Stop tracking the mem index")
    assert mem(store, "doctor").exit_code == 0


def test_doctor_on_a_store_without_a_git_repository(tmp_path):
    store = tmp_path / "plain"
    missing = run("--dir", store, "doctor")
    assert missing.exit_code == 1 and f"fix: mem init {store}" in missing.stdout + missing.stderr
    ok("init", store)
    assert mem(store, "doctor").exit_code == 0
    (store / ".gitignore").write_text("*.log\n")
    result = run("--dir", store, "doctor")
    assert result.exit_code == 1
    assert ".gitignore does not leave out .index/" in result.stdout and f"mem init {store}" in result.stdout
    ok("init", store)
    assert mem(store, "doctor").exit_code == 0
    settings = (store / "mem.yaml").read_text()
    (store / "mem.yaml").write_text(settings + "compress_target: 7\n")  # as a bad merge might leave it
    broken = json.loads(run("--dir", store, "doctor", "--json").stdout)["findings"]
    assert [(f["check"], f["ok"]) for f in broken] == [("store", False)] and "compress_target" in broken[0]["message"]


def test_doctor_reports_missing_models_pending_compression_and_a_stale_index(use_providers, fakes):
    _, embedder = fakes
    ok("add", "a short note")
    ok("add", "x " * 300, "--defer")

    def not_here(ref, role="embed"):
        raise ModelError(f"model {ref} is not installed; run `mem models pull {ref}`")

    use_providers(locate_model=not_here, embedder=not_here)
    pulled = store_root() / "memories" / "2026" / "01" / f"{ids.new_id()}.yaml"
    pulled.parent.mkdir(parents=True, exist_ok=True)
    pulled.write_text(f"id: {pulled.stem}\nraw: arrived with a git pull\n")
    report = json.loads(run("doctor", "--json").stdout)
    problems = [f for f in report["findings"] if not f["ok"]]
    assert [f["check"] for f in problems] == ["index", "models", "models"]
    assert problems[0]["message"].startswith("1 memories have no vector, so meaning search misses them")
    assert [f["fix"] for f in problems[1:]] == ["mem models pull all-minilm-l6-v2",
                                                "mem models pull smollm2-135m-instruct-q4_1"]
    waiting = [f for f in report["findings"] if f["level"] == "info"]
    assert [(f["check"], f["ok"], f["fix"]) for f in waiting] == [("compression", True, "mem compress --pending")]

    use_providers(locate_model=lambda ref, role: Path(f"/models/{role}.gguf"), embedder=lambda ref: embedder)
    ok("compress", "--pending")
    healthy = ok("doctor")
    assert "up to date (caught up: embedded 1 memories)" in healthy.stdout
    assert healthy.stderr.strip() == "mem: the store is healthy"


def test_two_people_update_the_same_memory_then_merge_a_fork_and_resolve_it(team):
    alice, bob = team
    shared = added(alice, "The staging cluster is called kestrel", "-t", "infra")
    commit_all(alice, "Name the staging cluster")
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-rebase")

    mine = mem(alice, "update", shared[:10], "The staging cluster is called falcon").stdout.strip()
    commit_all(alice, "Rename staging to falcon")
    git(alice, "push", "-q")
    theirs = mem(bob, "update", shared[:10], "The staging cluster is called osprey").stdout.strip()
    commit_all(bob, "Rename staging to osprey")
    git(bob, "pull", "-q", "--no-rebase", "--no-edit")  # two added files: no conflict
    assert git(bob, "diff", "--name-only", "--diff-filter=U") == ""

    assert set(found(bob, "staging cluster", "--mode", "text")) == {mine, theirs}  # both current
    report = run("--dir", bob, "doctor", "--json")
    assert report.exit_code == 1
    problems = [f for f in json.loads(report.stdout)["findings"] if not f["ok"]]
    assert [p["check"] for p in problems] == ["versions"]
    assert shared in problems[0]["message"] and {mine, theirs} <= set(problems[0]["message"].split())

    resolved = mem(bob, "update", mine, "The staging cluster is called osprey (falcon is the old name)")
    final = resolved.stdout.strip()
    assert found(bob, "staging cluster", "--mode", "text") == [final]
    assert mem(bob, "doctor").exit_code == 0
    commit_all(bob, "Settle on osprey")
    git(bob, "push", "-q")
    git(alice, "pull", "-q", "--no-rebase")
    assert found(alice, "staging cluster", "--mode", "text") == [final]
    history = jsonl(mem(alice, "show", shared, "--history", "--jsonl").stdout)
    assert [row["id"] for row in history][0] == final and {row["id"] for row in history} == {shared, mine, theirs, final}
    assert json.loads(mem(alice, "show", shared, "--json").stdout)["replaced"] == 3


def test_two_clones_adding_memories_the_same_day_merge_their_vector_caches_without_conflict(team, use_providers):
    from fakes import FakeEmbedder

    alice, bob = team
    ours = [added(alice, f"alice notes the parser bug number {n}") for n in range(3)]
    commit_all(alice, "Alice's notes")
    git(alice, "push", "-q")
    theirs = [added(bob, f"bob notes the release step number {n}") for n in range(3)]
    commit_all(bob, "Bob's notes")
    git(bob, "pull", "-q", "--no-rebase", "--no-edit")  # a merge: both sides added to vectors/ today
    assert git(bob, "diff", "--name-only", "--diff-filter=U") == ""
    git(bob, "push", "-q")
    git(alice, "pull", "-q", "--no-rebase")
    more = added(alice, "alice notes one more thing after the merge")  # to her own file again: nobody else touched it
    commit_all(alice, "One more")
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-rebase")

    carol = clone(alice.parent / "team.git", alice.parent / "carol", "carol")
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    for store in (bob, carol):
        assert set(ours) <= set(found(store, "alice parser bug", "-k", "10"))
        assert set(theirs) <= set(found(store, "bob release step", "-k", "10"))
        assert more in found(store, "one more thing after the merge")
    assert [text for text in counting.seen if "notes" in text] == []  # every memory's vector came from the cache


def test_a_compressed_form_a_merge_reversed_is_served_raw_and_named_by_doctor(team):
    alice, bob = team
    raw = "We chose SQLite over DuckDB for the catalog because it ships with Python."
    chosen = added(alice, raw)
    commit_all(alice, "Remember the catalog choice")
    git(alice, "push", "-q")
    git(bob, "pull", "-q", "--no-rebase")
    git(bob, "switch", "-q", "-c", "tidy")
    path = next(p for p in memory_files(bob) if p.stem == chosen)
    lines = path.read_text().split("\n")
    lines = [line.replace("SQLite over DuckDB", "DuckDB over SQLite") if line.startswith("compressed:") else line
             for line in lines]
    path.write_text("\n".join(lines))
    commit_all(bob, "A reversed compressed form")
    git(bob, "switch", "-q", "main")
    assert "SQLite over DuckDB for catalog" in json.loads(mem(bob, "show", chosen, "--json").stdout)["content"]
    git(bob, "merge", "-q", "--no-edit", "tidy")

    shown = json.loads(mem(bob, "show", chosen, "--json").stdout)
    assert shown["content"] == raw and "optimized" not in shown  # the raw, not the reversed form
    assert jsonl(mem(bob, "search", "catalog choice", "--jsonl").stdout)[0]["content"] == raw
    report = run("--dir", bob, "doctor", "--json")
    assert report.exit_code == 1
    [problem] = [f for f in json.loads(report.stdout)["findings"] if not f["ok"]]
    assert problem["message"].startswith(f"{chosen}: its compressed form does not say what the raw text says")
    assert "'duckdb'" in problem["message"]
    assert problem["fix"].startswith(f"mem compress {chosen}")
    mem(bob, "compress", chosen)
    assert json.loads(mem(bob, "show", chosen, "--json").stdout)["content"].startswith("We chose SQLite over DuckDB")
    assert mem(bob, "doctor").exit_code == 0
