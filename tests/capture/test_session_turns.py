"""Every prompt and answer of a captured session can be found by search, each stored once: the turns before
the latest prompt are folded, as written, into a memory and leave the session's thread; the latest
exchange stays in the thread and in the session's summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import ok, open_mem
from locations import FAKE_MEM, ROOT
from payloads import claude
from work_helpers import drain

from memcli.capture.hook import run

EXCHANGES = [("Why does the importer skip rows with a zebra id?", "The zebra ids fail the checksum, so they are skipped."),
             ("Make the importer accept the walrus format too.", "The walrus format is parsed by read_walrus now."),
             ("Add a test for a capybara file.", "test_capybara covers an empty capybara file.")]


def send_exchanges(project, exchanges=EXCHANGES) -> None:
    for prompt, answer in exchanges:
        run(json.dumps(claude("UserPromptSubmit", project, prompt=prompt)))
        run(json.dumps(claude("Stop", project, last_assistant_message=answer)))


def thread_contents() -> list[str]:
    (thread,) = json.loads(ok("thread", "ls", "--json").stdout)
    return [json.loads(line)["content"] for line in ok("thread", "show", thread["id"], "--jsonl").stdout.splitlines()
            if "content" in json.loads(line)]


def memories_holding(text: str, *, summaries: bool = False) -> list[dict]:
    """The memories whose text holds `text`; the session's summary (which quotes what was asked) aside."""
    listed = [json.loads(line) for line in ok("ls", "--jsonl", "--raw", "-n", "1000").stdout.splitlines()]
    return [m for m in listed if text in m["content"] and summaries == ("session" in m["tags"])]


def test_every_prompt_and_answer_of_a_session_is_found_by_search_and_stored_once(project):
    send_exchanges(project)
    drain(open_mem())
    for word, text in [("zebra", EXCHANGES[0][0]), ("checksum", EXCHANGES[0][1]), ("walrus", EXCHANGES[1][0]),
                       ("read_walrus", EXCHANGES[1][1]), ("capybara", EXCHANGES[2][0]), ("test_capybara", EXCHANGES[2][1])]:
        found = json.loads(ok("search", word, "--json", "--raw").stdout)
        assert any(text in hit["content"] for hit in found), (word, found)
    for earlier in (*EXCHANGES[0], *EXCHANGES[1]):
        [holder] = memories_holding(earlier)  # in the fold of the earlier turns, and nowhere else
        assert "thread" in holder["tags"] and earlier not in thread_contents()
    assert thread_contents() == list(EXCHANGES[2]), "the latest exchange stays in the thread"
    [summary] = memories_holding(EXCHANGES[2][1], summaries=True)
    assert EXCHANGES[2][0] in summary["content"], "... and in the summary"


@pytest.mark.parametrize("point", ["memcli.core.writing:write@2", "memcli.threads.storage:Threads.prune"])
def test_a_fold_killed_half_way_then_run_again_stores_each_turn_once(project, point):
    send_exchanges(project, EXCHANGES[:2])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEM_FAKE_KILL_AFTER": point}
    killed = subprocess.run([sys.executable, FAKE_MEM, "capture", "drain"], env=env, capture_output=True, text=True,
                            timeout=120, cwd=project)
    assert killed.returncode == -9 and "fake mem: killed after" in killed.stderr, killed.stderr
    drain(open_mem())
    for earlier in EXCHANGES[0]:
        assert len(memories_holding(earlier)) == 1 and earlier not in thread_contents()
    assert thread_contents() == list(EXCHANGES[1])
