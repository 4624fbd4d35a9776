"""Capture goes on whatever one event does: an event whose work fails is tried again and then parked with
its reason (`mem status`, `mem doctor`, `mem queue`), the others are stored; a run killed between any two
of its steps, run again, stores each observation, thread turn and summary exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ok, open_mem, run
from locations import FAKE_MEM, ROOT
from payloads import claude, claude_bash, claude_edit
from work_helpers import drain

from memcli.capture.hook import run as hook
from memcli.store.queue import MAX_TRIES, WorkQueue


def send(*payloads) -> None:
    for payload in payloads:
        hook(json.dumps(payload))


def observations() -> list[dict]:
    return [json.loads(line) for line in ok("ls", "--tag", "observation", "--jsonl", "--raw").stdout.splitlines()]


def summaries() -> list[dict]:
    return [json.loads(line) for line in ok("ls", "--tag", "session", "--jsonl", "--raw").stdout.splitlines()]


def thread_messages() -> list[dict]:
    """The session's turns in order, {role, content}: those folded into the thread's memories (a line each,
    "role: content", as written) and those still in the thread."""
    (thread,) = json.loads(ok("thread", "ls", "--json").stdout)
    turns = []
    for row in map(json.loads, ok("thread", "show", thread["id"], "--jsonl").stdout.splitlines()):
        if "summary" in row:
            turns += [dict(zip(("role", "content"), line.split(": ", 1))) for line in row["summary"].splitlines()]
        else:
            turns.append({"role": row["role"], "content": row["content"]})
    return turns


def a_session(project) -> list[dict]:
    return [claude("UserPromptSubmit", project, prompt="Make the parser accept empty input"),
            claude_bash(project, "pytest -q", "FAILED tests/test_parser.py::test_empty\n1 failed", "b1"),
            claude_edit(project, "src/parser.py", "if not s:\n", "if s is None:\n", "e1"),
            claude_bash(project, "pytest -q", "3 passed", "b2"),
            claude("Stop", project, last_assistant_message="The parser now returns an empty list. Docs not done.")]


def test_an_observation_that_can_never_be_stored_is_parked_and_the_others_are_stored(project):
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("max_input_bytes: 1000\n")
    send(claude_bash(project, "make build", "x" * 1200 + "\nbuild failed", "b0"), *a_session(project))
    done = drain(open_mem())
    assert done["parked"] == 1 and done["stored"] == 3
    (parked,) = WorkQueue(project / ".mem").parked()
    assert parked.kind == "observe" and "larger than the limit" in parked.error
    status = ok("status").stdout
    assert f"parked:     {parked.name}" in status and "larger than the limit" in status
    doctor = run("doctor")
    assert doctor.exit_code == 1 and f"mem queue retry {parked.name}" in doctor.stdout
    assert len(summaries()) == 1 and len(thread_messages()) == 2  # the session went on
    assert "1 parked job dropped" in ok("queue", "drop", parked.name).stderr
    assert WorkQueue(project / ".mem").parked() == []


def test_a_job_that_raises_is_tried_again_later_then_parked_without_holding_up_the_rest(project, monkeypatch):
    from memcli.capture import event_jobs

    clock = [1000.0]
    queue = WorkQueue(project / ".mem", lambda: clock[0])
    broken_turns = []

    def broken(self, job):
        broken_turns.append(job.key)
        raise OSError("the disk said no")

    working = event_jobs.CaptureJobs._turn
    monkeypatch.setattr(event_jobs.CaptureJobs, "_turn", broken)
    send(*a_session(project))
    from memcli.features.work import Work

    first = Work(open_mem(), clock=lambda: clock[0]).run()
    assert first["retried later"] == 2 and first["observe"] == 3 and first["summary"] == 1
    for _ in range(MAX_TRIES - 1):
        clock[0] += 3600
        Work(open_mem(), clock=lambda: clock[0]).run()
    assert {job.kind for job in queue.parked()} == {"turn"} and len(queue.parked()) == 2
    assert queue.waiting() == [] and len(broken_turns) == 2 * MAX_TRIES
    monkeypatch.setattr(event_jobs.CaptureJobs, "_turn", working)
    assert "2 parked jobs queued again" in ok("queue", "retry", "--all").stderr
    drain(open_mem())
    assert [m["role"] for m in thread_messages()] == ["user", "assistant"]


def test_a_link_that_names_itself_in_the_project_does_not_stop_capture(project):
    (project / "build").mkdir()
    (project / "build" / "current").symlink_to(project / "build" / "current")  # a broken deploy script's leftover
    (project / ".env").write_text("TOKEN=Zq81-db-password-x7\n")
    send(claude_bash(project, "make test", "3 passed", "b1"))
    done = drain(open_mem())
    assert done["stored"] == 1 and "3 passed" in observations()[0]["content"]


def test_removing_a_captured_sessions_thread_does_not_stop_capture(project):
    send(claude("UserPromptSubmit", project, prompt="first prompt"))
    drain(open_mem())
    (thread,) = json.loads(ok("thread", "ls", "--json").stdout)
    ok("thread", "rm", thread["id"], "-y")
    send(claude("UserPromptSubmit", project, prompt="second prompt"), claude_bash(project, "make", "ok", "b9"))
    done = drain(open_mem())
    assert "parked" not in done and "retried later" not in done
    assert [m["content"] for m in thread_messages()] == ["second prompt"]
    assert len(observations()) == 1


def test_an_edit_that_removes_a_line_reading_like_a_key_header_is_stored(project):
    doc = "To rotate keys, delete the block that starts with\n--- BEGIN RSA PRIVATE KEY ---\nfrom the file.\n"
    send(claude_edit(project, "docs/keys.md", doc, "To rotate keys, run `make rotate`.\n", "e1"),
         claude_bash(project, "make rotate", "rotated", "b1"))
    done = drain(open_mem())
    assert done["stored"] == 2 and "parked" not in done
    assert any("make rotate" in m["content"] for m in observations())


def test_many_edits_of_one_file_merge_into_observations_of_bounded_size(project):
    from memcli.capture.event_jobs import MERGE_CHARS

    line = "value = '" + "x" * 900 + "'\n"
    send(*[claude_edit(project, "src/big.py", f"a{n} = {line}", f"b{n} = {line}", f"e{n}") for n in range(60)])
    done = drain(open_mem())
    assert "parked" not in done and done["stored"] > 1
    found = observations()
    assert len(found) == done["stored"] and all(len(m["content"]) <= MERGE_CHARS + 2500 for m in found)
    assert sum(m["content"].count("+b") for m in found) == 60  # every edit is in one of them


KILL_POINTS = [
    "memcli.capture.spool:Spool.save_session",  # an event folded into the state, its job not yet done
    "memcli.store.queue:WorkQueue.put@3",  # an event's jobs partly queued, its state not saved
    "memcli.threads.storage:Threads.append",  # a turn in the thread, its job not yet done
    "memcli.core.writing:write",  # an observation stored, its job not yet done
    "memcli.core.writing:write@4",  # the summary stored, its job not yet done
]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_run_killed_between_two_steps_then_run_again_stores_everything_exactly_once(project, point):
    send(*a_session(project))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEM_FAKE_KILL_AFTER": point}
    killed = subprocess.run([sys.executable, FAKE_MEM, "capture", "drain"], env=env, capture_output=True, text=True,
                            timeout=120, cwd=project)
    assert killed.returncode == -9 and "fake mem: killed after" in killed.stderr, killed.stderr
    drain(open_mem())
    assert sorted(m["content"].split("\n")[0] for m in observations()) == [
        "Bash: ran `pytest -q` (failed): run it", "Bash: ran `pytest -q` (ok): run it", "Edit: changed src/parser.py"]
    assert [m["role"] for m in thread_messages()] == ["user", "assistant"]
    assert len(summaries()) == 1
    assert WorkQueue(project / ".mem").waiting() == [] and WorkQueue(project / ".mem").parked() == []


def test_the_same_words_said_twice_in_a_session_are_both_kept_and_a_duplicate_delivery_once(project, tmp_path):
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")

    def said(event: str, **fields) -> None:
        payload = claude(event, project, transcript_path=str(transcript), **fields)
        hook(json.dumps(payload))
        hook(json.dumps(payload))  # a second hook of the same event: delivered twice at once
        with transcript.open("a") as grown:  # the client writes the turn to its transcript
            grown.write(json.dumps(payload) + "\n")

    for _ in range(3):
        said("UserPromptSubmit", prompt="run the tests again")
        said("Stop", last_assistant_message="Done.")
    drain(open_mem())
    assert [m["content"] for m in thread_messages()] == ["run the tests again", "Done."] * 3


def test_a_prompt_over_the_size_limit_is_kept_cut_and_its_thread_still_folds(project):
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("max_input_bytes: 5000\n")
    send(claude("UserPromptSubmit", project, prompt="Here is the whole log. " + "line of the log\n" * 1000),
         *a_session(project))
    done = drain(open_mem())
    assert "parked" not in done and "retried later" not in done
    first = thread_messages()[0]["content"]
    assert first.startswith("Here is the whole log.") and len(first.encode()) <= 5000
    (thread,) = json.loads(ok("thread", "ls", "--json").stdout)
    assert "folded messages" in ok("thread", "summarize", thread["id"], "--force").stderr
