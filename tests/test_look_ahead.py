"""The look at every file made by a forked child while a cold search loads its model (memcli/forked.py).

What a search finds must not depend on who looked: the child's findings are applied as the search's own
look would apply them. A child that fails, or cannot be had, leaves the look to the search itself.

A process with another thread never forks, and this test process has run other tests' threads by now,
so whatever must fork runs in a process of its own, as every `mem` command does.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers import add, jsonl, memory_files, ok, run, store_root

from memcli import forked
from memcli.index import db as db_file
from memcli.index.catalog import LOOK_AHEAD_MIN_S

TESTS = Path(__file__).parent
CHILD_LOOKED = "a child process looked at every file meanwhile"


def environment() -> dict:
    return os.environ | {"PYTHONPATH": f"{TESTS.parent}{os.pathsep}{TESTS}"}


def fresh_python(code: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, env=environment())
    assert done.returncode == 0, done.stderr
    return done


def mem_process(*args: str, **env: str) -> subprocess.CompletedProcess:
    """`mem ARGS` in its own process, on the fake models (tests/fake_mem.py)."""
    return subprocess.run([sys.executable, str(TESTS / "fake_mem.py"), *args], capture_output=True, text=True,
                          timeout=120, env=environment() | env)


def last_full_look(at: float, cost: float) -> None:
    """As if the last look at every file began at `at` and took `cost` seconds (a large store's look
    costs more than a child: LOOK_AHEAD_MIN_S)."""
    with sqlite3.connect(store_root() / ".index" / db_file.FILE) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'full_look'", (json.dumps([at, cost]),))


def age_last_full_look() -> None:
    """As if a large store's look at every file were due."""
    last_full_look(0, 1)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


# -- the child -------------------------------------------------------------------------------------

def test_a_child_hands_back_its_whole_result_from_another_process():
    done = fresh_python("""
        import json, os
        from memcli import forked
        child = forked.start(lambda: ("x" * 3_000_000, os.getpid()))  # far more than a pipe holds
        text, pid = child.result()
        try:
            os.waitpid(child.pid, os.WNOHANG)
            reaped = False
        except ChildProcessError:
            reaped = True
        print(json.dumps([text == "x" * 3_000_000, pid == child.pid != os.getpid(), reaped]))
    """)
    assert json.loads(done.stdout) == [True, True, True]


def test_a_failing_child_gives_none_and_prints_no_traceback():
    done = fresh_python("""
        from memcli import forked
        def fail():
            raise RuntimeError("boom")
        print(forked.start(fail).result())
    """)
    assert (done.stdout, done.stderr) == ("None\n", "")


def test_a_child_given_up_is_killed_and_reaped():
    done = fresh_python("""
        import os, threading
        from memcli import forked
        child = forked.start(threading.Event().wait)  # the child's copy of the event is never set
        child.stop()
        try:
            os.waitpid(child.pid, os.WNOHANG)
        except ChildProcessError:
            print("reaped")
    """)
    assert done.stdout == "reaped\n"


def test_no_child_while_another_thread_runs():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forked.possible()
        assert forked.start(lambda: 1) is None
    finally:
        stop.set()
        thread.join()


# -- the search that uses it -----------------------------------------------------------------------

NEWCOMER = "01JAAAAAAAAAAAAAAAAAAAAAAA"
QUERY = "deploy key office plants billing queue"


def changed_behind_mems_back() -> dict[str, str]:
    """One memory edited in place, one deleted, one file added and one broken, with no command since."""
    kept = add("the deploy key rotates every 90 days")
    gone = add("the office plants are watered on Fridays")
    broken = add("the billing queue drains at midnight")
    files = {path.read_text().split("id: ")[1].split()[0]: path for path in memory_files()}
    path = files[kept]
    path.write_text(path.read_text().replace("every 90 days", "every 30 days"))
    files[gone].unlink()
    files[broken].write_text("raw: [unclosed\n")
    files[kept].with_name(f"{NEWCOMER}.yaml").write_text(
        files[kept].read_text().replace(kept, NEWCOMER)
        .replace("the deploy key rotates every 30 days", "the deploy key lives in the vault"))
    age_last_full_look()
    return {"kept": kept, "gone": gone, "broken": broken}


def found(stdout: str) -> dict[str, str]:
    return {hit["id"]: hit["content"] for hit in jsonl(stdout)}


def test_a_search_finds_what_changed_behind_mems_back_when_a_child_looked():
    ids = changed_behind_mems_back()
    done = mem_process("-vv", "search", QUERY, "--jsonl")
    assert found(done.stdout) == {ids["kept"]: "the deploy key rotates every 30 days",
                                  NEWCOMER: "the deploy key lives in the vault"}
    assert CHILD_LOOKED in done.stderr and "1 gone" in done.stderr
    assert "skipped unreadable memory file" in done.stderr
    assert {row["id"] for row in jsonl(ok("ls", "--jsonl").stdout)} == {ids["kept"], NEWCOMER}


def test_the_same_search_looking_itself_finds_the_same(monkeypatch):
    ids = changed_behind_mems_back()
    monkeypatch.setattr(forked, "possible", lambda: False)
    result = run("-vv", "search", QUERY, "--jsonl")
    assert found(result.stdout) == {ids["kept"]: "the deploy key rotates every 30 days",
                                    NEWCOMER: "the deploy key lives in the vault"}
    assert CHILD_LOOKED not in result.stderr
    assert "skipped unreadable memory file" in result.stderr


def test_a_failed_child_leaves_the_look_to_the_search():
    ids = changed_behind_mems_back()
    done = fresh_python("""
        from memcli import forked
        forked.Child.result = lambda self: self.stop()  # as if the child had died
        import json, fakes
        from memcli.api import Mem
        hits = Mem.open(providers=fakes.providers()).search("%s")
        print(json.dumps({hit.memory.id: hit.memory.raw for hit in hits}))
    """ % QUERY)
    assert json.loads(done.stdout) == {ids["kept"]: "the deploy key rotates every 30 days",
                                 NEWCOMER: "the deploy key lives in the vault"}


def test_no_child_when_no_look_at_every_file_is_due_or_it_is_cheap_or_words_alone_are_asked():
    add("the deploy key rotates every 90 days")
    ok("search", "deploy key")
    last_full_look(time.time(), 1)  # due in ten seconds
    assert CHILD_LOOKED not in mem_process("-vv", "search", "deploy key").stderr
    last_full_look(0, LOOK_AHEAD_MIN_S / 2)  # due, but cheaper than a child
    assert CHILD_LOOKED not in mem_process("-vv", "search", "deploy key").stderr
    age_last_full_look()
    assert CHILD_LOOKED not in mem_process("-vv", "search", "deploy key", "--mode", "text").stderr
    age_last_full_look()
    assert CHILD_LOOKED in mem_process("-vv", "search", "deploy key").stderr


def test_a_model_that_cannot_load_still_gives_word_matches_after_the_child_looked():
    add("the deploy key rotates every 90 days")
    age_last_full_look()
    done = mem_process("-vv", "search", "deploy key", MEM_FAKE_LOAD="fail")
    assert done.returncode == 0
    assert "the deploy key rotates every 90 days" in done.stdout
    assert "meaning search unavailable (fake embedder: no such model)" in done.stderr
    assert CHILD_LOOKED in done.stderr
    assert done.stderr.count("fake embedder: tried to load") == 1, "a model that failed is not loaded again"


def test_a_query_that_is_not_text_is_refused_before_any_child_or_model():
    add("the deploy key rotates every 90 days")
    age_last_full_look()
    done = subprocess.run([sys.executable, str(TESTS / "fake_mem.py"), "-vv", "search", b"bad \xff query"],
                          capture_output=True, timeout=120, env=environment() | {"MEM_FAKE_LOAD": "fail"})
    assert done.returncode == 2
    assert b"the search query" in done.stderr
    assert CHILD_LOOKED.encode() not in done.stderr and b"fake embedder" not in done.stderr


def test_ctrl_c_while_the_model_loads_leaves_no_child_behind():
    add("the deploy key rotates every 90 days")
    age_last_full_look()
    search = subprocess.Popen([sys.executable, str(TESTS / "fake_mem.py"), "search", "deploy key"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=environment() | {"MEM_FAKE_LOAD": "hang"})
    try:
        assert search.stderr.readline() == "fake embedder: loading\n"
        children = children_of(search.pid)
        assert len(children) == 1, "the look at every file is being made by a child"
        search.send_signal(signal.SIGINT)
        _, stderr = search.communicate(timeout=30)
    finally:
        search.kill()
    assert search.returncode == 130 and "mem: interrupted" in stderr
    deadline = time.monotonic() + 10
    while Path(f"/proc/{children[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{children[0]}").exists(), "the child was reaped"
