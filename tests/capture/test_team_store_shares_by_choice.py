"""A team store shares only what the team meant to share: captured observations, summaries and session
threads stay on this machine (searchable here, left out by git) until a developer shares them with
`mem share`, or mem.yaml's `capture.share` says otherwise."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

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


def kinds_waiting(project) -> set[str]:
    from memcli.store.queue import WorkQueue

    return {job.kind for job in WorkQueue(project / ".mem").waiting()}


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


def test_sharing_one_memory_does_not_share_another_that_a_committed_file_names_beside_it(project):
    from memcli.store import ids

    a_git_project(project)
    captured_session(project)
    mine = [m["id"] for m in jsonl(ok("ls", "--all-versions", "--jsonl").stdout)]
    assert len(mine) >= 2 and committable(project) == [".mem/.gitignore", ".mem/mem.yaml"]
    hostile = ids.new_id()  # a teammate's file naming two memories kept on this machine as its versions
    path = project / ".mem" / "memories" / "2026" / "01" / f"{hostile}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"id: {hostile}\ncreated_at: '2026-01-02T03:04:05Z'\nsupersedes: [{mine[0]}, {mine[1]}]\n"
                    "raw: nothing to see here\n")
    done = json.loads(ok("share", mine[0], "--json").stdout)
    assert mine[1] not in done["memories"] and mine[0] in done["memories"]


def agree(project, setting: str) -> None:
    """What the developer adds to their own config (never committed) to agree to a committed setting."""
    import os
    from pathlib import Path

    config = Path(os.environ["MEM_CONFIG_DIR"]) / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"{setting}: [{(project / '.mem').resolve()}]\n")
    config.chmod(0o600)


def test_capture_share_all_writes_captured_work_where_git_takes_it_once_agreed(project):
    a_git_project(project)
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("capture:\n  share: all\n")
    agree(project, "trusted_capture_share")
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


def test_an_update_of_a_memory_kept_here_keeps_the_new_version_here(project, monkeypatch):
    from mcp_client import call, session

    monkeypatch.setenv("MEM_DIR", str(project / ".mem"))  # for the MCP server this test starts
    a_git_project(project)
    captured_session(project)
    (observation,) = jsonl(ok("ls", "--tag", "observation", "--jsonl").stdout)
    newer = ok("update", observation["id"], "python export.py fails: the supplier file is Windows-1250").stdout.strip()

    async def scenario(client):
        await call(client, "memory_update", id=newer, content="export.py reads the supplier file as cp1250 now")

    session(scenario)
    assert "cp1250" in ok("search", "supplier file", "--mode", "text", "--raw").stdout
    assert not any(path.startswith(".mem/memories/") for path in committable(project))


def test_a_committed_negation_of_the_local_folders_keeps_captured_work_in_the_queue(project):
    a_git_project(project)
    with open(project / ".mem" / ".gitignore", "a") as ignore:
        ignore.write("!memories/local/\n!threads/local/\n")
    captured_session(project)
    assert not any(path.startswith((".mem/memories/", ".mem/threads/")) for path in committable(project))
    assert kinds_waiting(project) >= {"observe", "turn"}  # nothing lost: it waits in this machine's queue
    doctor = run("doctor")
    assert doctor.exit_code != 0 and "git would commit" in doctor.stdout + doctor.stderr
    assert "local data would reach git" in ok("status").stdout


def test_a_committed_link_as_a_local_folder_keeps_captured_work_in_the_queue(project):
    a_git_project(project)
    for local, shared in (("memories/local", "memories/team"), ("threads/local", "threads/team")):
        (project / ".mem" / shared).mkdir(parents=True)
        (project / ".mem" / local).symlink_to(project / ".mem" / shared, target_is_directory=True)
    captured_session(project)
    assert list((project / ".mem" / "memories" / "team").iterdir()) == []
    assert list((project / ".mem" / "threads" / "team").iterdir()) == []
    assert kinds_waiting(project) >= {"observe", "turn"}


def test_capture_share_in_a_committed_mem_yaml_waits_for_the_developers_word(project, tmp_path):
    a_git_project(project)
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("capture:\n  share: all\n")
    captured_session(project)
    assert not any(path.startswith((".mem/memories/", ".mem/threads/")) for path in committable(project))
    assert "trusted_capture_share" in ok("status").stdout
    assert "trusted_capture_share" in run("doctor").stdout


def test_a_session_is_shared_by_a_unique_beginning_of_its_id(project):
    a_git_project(project)
    for session in ("4f2c-aaaa", "4f2c-bbbb", "9e1d-cccc"):
        hook(json.dumps(claude("UserPromptSubmit", project, session=session, prompt=f"question {session}")))
        hook(json.dumps(claude_bash(project, f"make {session}", "ok", tool_use_id=f"t-{session}", session=session)))
    drain(open_mem())
    ambiguous = run("share", "--session", "4f2c")
    assert ambiguous.exit_code == 4 and "4f2c-aaaa" in ambiguous.stderr and "4f2c-bbbb" in ambiguous.stderr
    assert run("share", "--session", "").exit_code == 2
    assert "shared 1 memories" in ok("share", "--session", "9e1").stderr
    assert any(path.startswith(".mem/memories/") for path in committable(project))


def test_what_a_session_makes_after_it_was_shared_is_shared_too(project):
    a_git_project(project)
    captured_session(project)
    ok("share", "--session", "c1")
    subprocess.run(["git", "-C", str(project), "reset", "-q"], check=True)
    hook(json.dumps(claude("UserPromptSubmit", project, prompt="and the weekly export?")))
    hook(json.dumps(claude_bash(project, "python weekly.py", "ok", "b2")))
    hook(json.dumps(claude("Stop", project, last_assistant_message="The weekly one reads UTF-8.")))
    drain(open_mem())
    assert not list((project / ".mem" / "memories" / "local").rglob("*.yaml"))
    assert not (project / ".mem" / "threads" / "local").exists() or not any(
        (project / ".mem" / "threads" / "local").iterdir())
    shared = committable(project)
    assert any("weekly" in (project / path).read_text() for path in shared if path.startswith(".mem/threads/"))


def test_a_committed_link_as_the_threads_folder_keeps_captured_turns_in_the_queue(project, tmp_path):
    a_git_project(project)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "local").mkdir(parents=True)
    (project / ".mem" / "threads").symlink_to(elsewhere, target_is_directory=True)
    captured_session(project)
    assert list((elsewhere / "local").iterdir()) == []
    assert "turn" in kinds_waiting(project)


def test_a_link_deeper_inside_a_local_folder_keeps_captured_work_out_of_git(project):
    a_git_project(project)
    (project / ".mem" / "memories" / "2026").mkdir(parents=True)
    (project / ".mem" / "memories" / "local").mkdir(parents=True)
    for year in ("2025", "2026", "2027"):
        (project / ".mem" / "memories" / "local" / year).symlink_to(Path("..") / "2026", target_is_directory=True)
    captured_session(project)
    assert not any(path.startswith(".mem/memories/") for path in committable(project))
    assert "observe" in kinds_waiting(project)
