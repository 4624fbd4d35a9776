"""The drain turns queued events into observations, a thread per session and a session summary, and
skips with a counted reason what is not worth keeping."""

from __future__ import annotations

import json

from helpers import ok, open_mem
from payloads import claude, claude_bash, claude_edit, claude_read

from work_helpers import drain, waiting_events
from memcli.capture.hook import run


def send(*payloads) -> None:
    for payload in payloads:
        assert run(json.dumps(payload)) == "" or payload["hook_event_name"] == "SessionStart"


def written_by(memory_id: str) -> str:
    from memcli.core.reading import get

    return get(open_mem(), memory_id).written_by


def memories(*tags) -> list[dict]:
    args = [a for tag in tags for a in ("--tag", tag)]
    return [json.loads(line) for line in ok("ls", *args, "--jsonl", "--raw").stdout.splitlines()]


def test_a_tool_event_becomes_an_observation_tagged_with_its_tool_and_session(project):
    send(claude_bash(project, "pytest -q", "FAILED tests/test_a.py::test_b - AssertionError\n1 failed"))
    counts = drain(open_mem())
    assert counts["stored"] == 1
    (found,) = memories("observation", "bash")
    assert found["source"] == "session/c1#1"
    assert "`pytest -q` (failed)" in found["content"]
    assert written_by(found["id"]) == "claude-code"


def test_routine_tools_ignored_paths_and_unchanged_rereads_are_skipped_with_reasons(project):
    (project / ".memignore").write_text("secrets/\n")
    send(claude("PostToolUse", project, tool_name="TodoWrite", tool_use_id="t1", tool_input={"todos": []},
                tool_response={}),
         claude_read(project, "secrets/keys.txt", "a line", "t2"),
         claude_read(project, "src/app.py", "print(1)\n", "t3"),
         claude_read(project, "src/app.py", "print(1)\n", "t4"))
    counts = drain(open_mem())
    assert counts["skipped: routine tool"] == 1
    assert counts["skipped: ignored path"] == 1
    assert counts["skipped: unchanged read"] == 1
    assert counts["stored"] == 1
    assert "keys.txt" not in json.dumps(memories("observation"))
    assert "skipped: ignored path 1" in ok("status").stdout


def test_consecutive_edits_of_one_file_merge_into_one_observation(project):
    send(claude_edit(project, "src/dates.py", "x = 1\n", "x = 2\n", "e1"),
         claude_edit(project, "src/dates.py", "y = 1\n", "y = 3\n", "e2"))
    counts = drain(open_mem())
    assert (counts["stored"], counts["merged"]) == (1, 1)
    (found,) = memories("observation", "edit")
    assert "+x = 2" in found["content"] and "+y = 3" in found["content"]


def test_a_session_becomes_a_thread_and_a_summary_that_later_stops_update(project):
    send(claude("UserPromptSubmit", project, prompt="Make the parser accept empty input"),
         claude_edit(project, "src/parser.py", "if not s:\n", "if s is None:\n", "e1"),
         claude("Stop", project, last_assistant_message="We decided to return an empty list. The docs are not yet updated."))
    drain(open_mem())
    (summary,) = memories("session")
    assert summary["source"] == "session/c1"
    for fact in ("Make the parser accept empty input", "src/parser.py", "decided to return an empty list",
                 "not yet updated"):
        assert fact in summary["content"]
    threads = ok("thread", "ls", "--json").stdout
    assert "claude-code session c1" in threads
    send(claude("UserPromptSubmit", project, prompt="Now update the docs"), claude("SessionEnd", project, reason="exit"))
    drain(open_mem())
    (latest,) = memories("session")
    assert "Now update the docs" in latest["content"] and latest["id"] != summary["id"]


def test_a_second_drain_gives_way_while_another_runner_works_on_the_capture(project):
    from memcli.store.queue import WorkQueue

    send(claude_bash(project, "make", "done"))
    with WorkQueue(project / ".mem").scope("capture") as held:
        assert held
        assert drain(open_mem()) == {"busy": 1}
        assert len(waiting_events(project / ".mem")) == 1
    assert drain(open_mem())["stored"] == 1


def test_injected_context_stays_within_its_budget(project):
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("capture:\n  inject_tokens: 150\n")
    for n in range(30):
        send(claude("UserPromptSubmit", project, session=f"s{n}", prompt=f"task number {n} " + "word " * 10),
             claude_bash(project, f"make target{n}", "error: it broke", tool_use_id=f"b{n}", session=f"s{n}") | {"session_id": f"s{n}"},
             claude("Stop", project, session=f"s{n}", last_assistant_message="Done."))
    drain(open_mem())
    answer = json.loads(run(json.dumps(claude("SessionStart", project, session="new", source="startup"))))
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert 0 < len(context.split()) <= 150  # the fake token counter counts words
    assert "task number 29" in context and "task number 0 " not in context  # the newest sessions first
    assert context.startswith("mem, from earlier coding sessions")


def test_the_mcp_idle_worker_drains_waiting_events(project):
    from memcli.core.idle import IdleWorker
    from memcli.features.work import Work

    worker = IdleWorker(0)
    worker.add_source(Work(open_mem()).next_job)
    assert worker.run_one() is False
    send(claude_bash(project, "make", "done"))
    while worker.run_one():  # one job at a time: the event, then the observation it makes
        pass
    assert len(memories("observation")) == 1 and waiting_events(project / ".mem") == []


def test_keys_of_events_used_a_week_ago_are_forgotten(project):
    import os
    import time

    send(claude_bash(project, "ls", "old", tool_use_id="old"), claude_bash(project, "ls", "new", tool_use_id="new"))
    drain(open_mem())
    done = project / ".mem/.queue/done"
    first = sorted(done.iterdir())[0]
    week_ago = time.time() - 8 * 24 * 3600
    os.utime(first, (week_ago, week_ago))
    drain(open_mem())
    assert not first.exists() and len(list(done.iterdir())) == 1


def test_codex_and_gemini_events_become_observations_written_by_their_client(project):
    from payloads import codex, gemini

    patch = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a = 1\n+a = 2\n*** End Patch"
    send(codex("PostToolUse", project, turn_id="t1", tool_name="apply_patch", tool_use_id="call_1",
               tool_input={"input": patch}, tool_response="Success. Updated the following files:\nM src/app.py"),
         gemini("AfterTool", project, tool_name="run_shell_command", tool_input={"command": "npm test"},
                tool_response={"llmContent": "", "returnDisplay": "", "error": {"message": "exit code 1: 2 failing"}}))
    drain(open_mem())
    found = {m["source"].split("#")[0]: m for m in memories("observation")}
    patched, failed = found["session/x1"], found["session/g1"]
    assert "apply_patch" in patched["tags"] and "src/app.py" in patched["content"]
    assert "run_shell_command" in failed["tags"] and "(failed)" in failed["content"]
    assert [written_by(m["id"]) for m in (patched, failed)] == ["codex", "gemini"]
