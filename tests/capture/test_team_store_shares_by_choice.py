"""A team store shares only what the team meant to share: captured observations, summaries and session
threads stay on this machine (searchable here, left out by git) until a developer shares them with
`mem share`, or mem.yaml's `capture.share` says otherwise."""

from __future__ import annotations

import json
import subprocess

from helpers import jsonl, ok, open_mem, run
from payloads import claude, claude_bash
from work_helpers import drain

from memcli.capture.hook import run as hook


def a_git_project(project) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)


def captured_session(project) -> None:
    for payload in (claude("UserPromptSubmit", project, prompt="why does the nightly export crash"),
                    claude_bash(project, "python export.py", "UnicodeDecodeError: 'utf-8' codec", "b1"),
                    claude("Stop", project, last_assistant_message="The supplier file is Windows-1250.")):
        hook(json.dumps(payload))
    drain(open_mem())


def committable(project) -> list[str]:
    """What `git add -A` would take from the store."""
    subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
    listed = subprocess.run(["git", "-C", str(project), "diff", "--cached", "--name-only"], check=True,
                            capture_output=True, text=True).stdout.split()
    return [path for path in listed if path.startswith(".mem/")]


def test_captured_work_stays_out_of_git_and_is_found_by_search(project):
    a_git_project(project)
    captured_session(project)
    shared = committable(project)
    assert not any(path.startswith((".mem/memories/", ".mem/threads/")) for path in shared), shared
    assert not any(".queue/" in path or ".capture/" in path for path in shared)
    found = jsonl(ok("search", "nightly export crash", "--jsonl").stdout)
    assert found and any("session" in row["tags"] or "observation" in row["tags"] for row in found)
    assert len(json.loads(ok("thread", "ls", "--json").stdout)) == 1


def test_a_developer_shares_one_session_and_only_it_reaches_git(project):
    a_git_project(project)
    captured_session(project)
    hook(json.dumps(claude_bash(project, "make other", "done", "b9", session="c2")))
    drain(open_mem())
    preview = json.loads(ok("share", "--session", "c1", "--dry-run", "--json").stdout)
    assert len(preview["memories"]) == 2 and len(preview["threads"]) == 1
    assert committable(project) == [p for p in committable(project) if not p.startswith(".mem/memories/")]
    assert "shared 2 memories and 1 threads" in ok("share", "--session", "c1").stderr
    shared = committable(project)
    assert sum(path.startswith(".mem/memories/") for path in shared) == 2
    assert sum(path.startswith(".mem/threads/") and path.endswith("thread.json") for path in shared) == 1
    assert "make other" not in "".join((project / path).read_text() for path in shared)
    assert run("share", "--session", "c1").exit_code == 1  # nothing left here to share
    assert jsonl(ok("search", "nightly export crash", "--jsonl").stdout)


def test_one_memory_is_shared_with_every_version_kept_here(project):
    a_git_project(project)
    captured_session(project)
    hook(json.dumps(claude("SessionEnd", project, reason="exit")))
    hook(json.dumps(claude("UserPromptSubmit", project, prompt="and the weekly one?")))
    hook(json.dumps(claude("Stop", project, last_assistant_message="Same cause.")))
    drain(open_mem())
    (summary,) = jsonl(ok("ls", "--tag", "session", "--jsonl").stdout)
    done = json.loads(ok("share", summary["id"], "--json").stdout)
    assert summary["id"] in done["memories"] and len(done["memories"]) == 2 and done["threads"] == []


def test_capture_share_all_writes_captured_work_where_git_takes_it(project):
    a_git_project(project)
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("capture:\n  share: all\n")
    captured_session(project)
    shared = committable(project)
    assert sum(path.startswith(".mem/memories/") for path in shared) == 2
    assert any(path.startswith(".mem/threads/") for path in shared)


def test_an_edit_of_a_memory_kept_here_keeps_it_here(project, monkeypatch):
    a_git_project(project)
    captured_session(project)
    (observation,) = jsonl(ok("ls", "--tag", "observation", "--jsonl").stdout)
    monkeypatch.setenv("EDITOR", "sed -i s/export.py/export_nightly.py/")
    ok("edit", observation["id"])
    assert "export_nightly.py" in ok("show", observation["id"], "--raw").stdout
    assert not any(path.startswith(".mem/memories/") for path in committable(project))
