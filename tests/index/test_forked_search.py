"""A one-shot search embeds its query in a forked child (memcli/util/forked.py) while it catches up with the
files, ranks by words and loads the graph.

What a search finds must not depend on who embedded the query. A child that fails, or cannot be had,
leaves the work to the search itself; a model that cannot be loaded is said once, and words still answer.

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
from pathlib import Path

import pytest
from helpers import add, ctrl_c_reaches, jsonl, memory_files, ok, run, store_root
from locations import FAKE_MEM, ROOT, SUPPORT
from test_real_match import OTHER_NOTES, SQLITE

from memcli.core.reading import CHILD_EMBEDDED, LEANED_HERE, LOOKING_AHEAD, WAITING_FOR_CHILD
from memcli.index import db as db_file
from memcli.util import forked


def environment() -> dict:
    return os.environ | {"PYTHONPATH": f"{ROOT}{os.pathsep}{SUPPORT}"}


def fresh_python(code: str, **env: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, env=environment() | env)
    assert done.returncode == 0, done.stderr
    return done


def mem_process(*args: str, **env: str) -> subprocess.CompletedProcess:
    """`mem ARGS` in its own process, on the fake models (tests/support/fake_mem.py)."""
    return subprocess.run([sys.executable, str(FAKE_MEM), *args], capture_output=True, text=True,
                          timeout=120, env=environment() | env)


def age_last_full_look() -> None:
    """As if a large store's look at every file were due (the search makes it while the child works)."""
    with sqlite3.connect(store_root() / ".index" / db_file.FILE) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'full_look'", (json.dumps([0, 1]),))


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
        from memcli.util import forked
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
        from memcli.util import forked
        def fail():
            raise RuntimeError("boom")
        print(forked.start(fail).result())
    """)
    assert (done.stdout, done.stderr) == ("None\n", "")


def test_a_child_given_up_is_killed_and_reaped():
    done = fresh_python("""
        import os, threading
        from memcli.util import forked
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


def test_output_buffered_before_the_fork_is_written_once():
    done = fresh_python("""
        import sys
        from memcli.util import forked
        sys.stdout.write("before ")  # buffered: stdout is a pipe here
        child = forked.start(lambda: sys.stdout.flush())  # a child flushing its copy of the buffer
        child.result()
        print("after")
    """, PYTHONUNBUFFERED="")
    assert done.stdout == "before after\n"


# -- the search that uses it -----------------------------------------------------------------------

NEWCOMER = "01JAAAAAAAAAAAAAAAAAAAAAAA"
QUERY = "deploy key office plants billing queue"


def changed_behind_mems_back() -> dict[str, str]:
    """One memory edited in place, one deleted, one file added (with no vector yet) and one broken, with
    no command since, and the look at every file due."""
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


def test_a_search_gives_the_same_hits_whoever_embedded_the_query(monkeypatch):
    for text in ["the deploy key rotates every 90 days", "deploys go out on Tuesdays after the standup",
                 "the office plants are watered on Fridays", "billing runs its queue at midnight"]:
        add(text)
    forked_search = mem_process("-vv", "search", "deploy key rotation", "--json", "--min-score", "0")
    assert CHILD_EMBEDDED in forked_search.stderr
    monkeypatch.setattr(forked, "possible", lambda: False)
    here = run("-vv", "search", "deploy key rotation", "--json", "--min-score", "0")
    assert CHILD_EMBEDDED not in here.stderr
    assert json.loads(forked_search.stdout) == json.loads(here.stdout)
    assert len(json.loads(here.stdout)) == 4


def test_a_question_hanging_on_one_word_is_as_silent_whoever_embedded_it(monkeypatch):
    """The child embeds the query without its commonest word too (memcli.index.search.leaned_on)."""
    for text in SQLITE + OTHER_NOTES:
        add(text)
    forked_search = mem_process("-vv", "search", "sqlite replication remote server")
    assert CHILD_EMBEDDED in forked_search.stderr and LEANED_HERE not in forked_search.stderr
    assert forked_search.returncode == 1 and forked_search.stdout == ""
    assert mem_process("search", "sqlite", "--jsonl").stdout.count("\n") == len(SQLITE)


def test_a_question_leaning_on_another_word_once_files_went_behind_mems_back_is_answered_as_here(monkeypatch):
    """Before the files are caught up with, "vault" is the question's commonest word, so the child embeds the
    query without it; after, the two vault notes are gone and it is "deploy": the search embeds that itself."""
    for text in ["the deploy key rotates every 90 days", "the office plants are watered on Fridays",
                 "billing runs its queue at midnight", "the staging database is refreshed on Mondays"]:
        add(text)
    vaults = [add("the vault is sealed at night"), add("the vault opens at nine")]
    for path in memory_files():
        if path.stem in vaults:
            path.unlink()
    forked_search = mem_process("-vv", "search", "deploy key vault", "--jsonl")
    assert CHILD_EMBEDDED in forked_search.stderr and LEANED_HERE in forked_search.stderr
    monkeypatch.setattr(forked, "possible", lambda: False)
    here = run("search", "deploy key vault", "--jsonl")
    assert (forked_search.returncode, forked_search.stdout) == (here.exit_code, here.stdout)
    assert "deploy key rotates" in here.stdout


def test_memories_without_a_vector_are_embedded_before_the_search_by_meaning():
    ids = changed_behind_mems_back()
    done = mem_process("-vv", "search", "vault", "--mode", "vector", "--jsonl", "-n", "1")
    assert found(done.stdout) == {NEWCOMER: "the deploy key lives in the vault"}
    assert "the query is embedded here: memories wait for their vectors" in done.stderr
    again = mem_process("-vv", "search", "vault", "--mode", "vector", "--jsonl", "-n", "1")
    assert found(again.stdout) == found(done.stdout) and CHILD_EMBEDDED in again.stderr
    assert ids["kept"] not in found(again.stdout)


def test_a_search_finds_what_changed_behind_mems_back_while_the_child_embeds():
    ids = changed_behind_mems_back()
    done = mem_process("-vv", "search", QUERY, "--jsonl", "--min-score", "0")
    assert found(done.stdout) == {ids["kept"]: "the deploy key rotates every 30 days",
                                  NEWCOMER: "the deploy key lives in the vault"}
    assert "skipped unreadable memory file" in done.stderr
    assert LOOKING_AHEAD in done.stderr
    assert {row["id"] for row in jsonl(ok("ls", "--jsonl").stdout)} == {ids["kept"], NEWCOMER}
    assert LOOKING_AHEAD not in mem_process("-vv", "search", QUERY).stderr, "a look that cost little is made here"


@pytest.mark.parametrize("blas_threads", ["1", "2"])
def test_with_the_look_due_the_query_is_still_embedded_in_a_child_whatever_numpy_is_told(blas_threads):
    add("the deploy key rotates every 90 days")
    age_last_full_look()
    done = mem_process("-vv", "search", "deploy key", OPENBLAS_NUM_THREADS=blas_threads)
    assert LOOKING_AHEAD in done.stderr and CHILD_EMBEDDED in done.stderr
    assert "the deploy key rotates every 90 days" in done.stdout


def test_a_search_with_the_look_due_finds_every_memory_of_a_damaged_catalog():
    ids = {add(text) for text in ["the deploy key rotates every 90 days", "the billing queue drains at midnight"]}
    age_last_full_look()
    path = store_root() / ".index" / db_file.FILE
    with sqlite3.connect(path) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'folders'").fetchone()[0]
    with open(path, "r+b") as handle:  # what the look at every file tallies against first
        handle.seek(page_size * (page - 1))
        handle.write(os.urandom(page_size))
    done = mem_process("search", QUERY, "--jsonl", "--min-score", "0")
    assert set(found(done.stdout)) == ids
    assert "is damaged" in done.stderr


def test_a_failed_child_leaves_the_embedding_to_the_search():
    add("the deploy key rotates every 90 days")
    done = fresh_python("""
        import logging, sys
        from memcli.util import forked
        forked.Child.result = lambda self: self.stop()  # as if the child had died
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
        import json, fakes
        from memcli.core import reading
        from memcli.core.mem import Mem
        hits = reading.search(Mem.open(providers=fakes.providers()), "deploy key", mode="vector", once=True)
        print(json.dumps([hit.memory.raw for hit in hits]))
    """)
    assert json.loads(done.stdout) == ["the deploy key rotates every 90 days"]
    assert "the query is embedded here: the child process embedding it failed" in done.stderr


def test_no_child_for_words_alone_or_a_search_of_many_queries():
    add("the deploy key rotates every 90 days")
    assert CHILD_EMBEDDED in mem_process("-vv", "search", "deploy key").stderr
    assert CHILD_EMBEDDED not in mem_process("-vv", "search", "deploy key", "--mode", "text").stderr
    many = subprocess.run([sys.executable, str(FAKE_MEM), "-vv", "search", "-"], input="deploy key\n",
                          capture_output=True, text=True, timeout=120, env=environment())
    assert CHILD_EMBEDDED not in many.stderr and "the deploy key rotates" in many.stdout


def test_a_model_that_cannot_load_still_gives_word_matches_and_is_tried_once():
    add("the deploy key rotates every 90 days")
    done = mem_process("-vv", "search", "deploy key", MEM_FAKE_LOAD="fail")
    assert done.returncode == 0
    assert "the deploy key rotates every 90 days" in done.stdout
    assert "meaning search unavailable (fake embedder: no such model)" in done.stderr
    assert done.stderr.count("fake embedder: tried to load") == 1, "a model that failed is not loaded again"
    vector = mem_process("search", "deploy key", "--mode", "vector", MEM_FAKE_LOAD="fail")
    assert vector.returncode == 6 and "fake embedder: no such model" in vector.stderr


def test_a_query_that_is_not_text_is_refused_before_any_child_or_model():
    add("the deploy key rotates every 90 days")
    done = subprocess.run([sys.executable, str(FAKE_MEM), "-vv", "search", b"bad \xff query"],
                          capture_output=True, timeout=120, env=environment() | {"MEM_FAKE_LOAD": "fail"})
    assert done.returncode == 2
    assert b"the search query" in done.stderr
    assert b"fake embedder" not in done.stderr


def test_ctrl_c_while_the_child_loads_the_model_leaves_no_child_behind():
    add("the deploy key rotates every 90 days")
    age_last_full_look()
    search = subprocess.Popen([sys.executable, str(FAKE_MEM), "-vv", "search", "deploy key"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=environment() | {"MEM_FAKE_LOAD": "hang"}, preexec_fn=ctrl_c_reaches)
    try:
        seen = [search.stderr.readline() for _ in range(3)]  # the search has done its part, and waits
        assert sorted(seen) == ["fake embedder: loading\n", f"mem: info: {LOOKING_AHEAD}\n",
                                f"mem: info: {WAITING_FOR_CHILD}\n"]
        children = children_of(search.pid)
        assert len(children) == 1, "the model is being loaded by a child; the one that looked at every file is gone"
        search.send_signal(signal.SIGINT)  # to the parent alone, which waits for the child
        _, stderr = search.communicate(timeout=30)
    finally:
        for pid in children_of(search.pid):  # a failed run leaves no hung child behind either
            os.kill(pid, signal.SIGKILL)
        search.kill()
    assert search.returncode == 130 and "mem: interrupted" in stderr
    assert not Path(f"/proc/{children[0]}").exists(), "the child was killed and reaped before the parent left"


@pytest.mark.models
def test_with_the_real_model_a_child_embeds_the_query_as_this_process_would(real_models):
    for text in ["Caroline moved from Sweden four years ago", "Melanie paints sunsets by the lake",
                 "The team deploys on Tuesdays after the standup"]:
        ok("add", "--no-compress", text)
    env = os.environ | {"PYTHONPATH": str(ROOT), "MEM_MODELS_DIR": str(real_models)}
    mem = [sys.executable, "-m", "memcli", "-vv", "search"]
    once = subprocess.run([*mem, "Where did Caroline move from?", "--mode", "vector", "--jsonl"],
                          capture_output=True, text=True, timeout=120, env=env)
    many = subprocess.run([*mem, "-", "--mode", "vector"], input="Where did Caroline move from?\n",
                          capture_output=True, text=True, timeout=120, env=env)
    assert CHILD_EMBEDDED in once.stderr and CHILD_EMBEDDED not in many.stderr
    assert [(hit["id"], hit["score"]) for hit in jsonl(once.stdout)] == \
           [(hit["id"], hit["score"]) for hit in jsonl(many.stdout)]
    assert jsonl(once.stdout)[0]["content"] == "Caroline moved from Sweden four years ago"


def test_a_warning_about_mem_yaml_is_said_once_not_by_the_child_too():
    add("the deploy key rotates every 90 days")
    with open(store_root() / "mem.yaml", "a") as settings:
        settings.write("bogus_key: 1\n")
    done = mem_process("-vv", "search", "deploy key")
    assert CHILD_EMBEDDED in done.stderr
    assert done.stderr.count("bogus_key") == 1


def test_a_command_leaves_no_write_ahead_log_behind():
    add("the deploy key rotates every 90 days")
    for command in (["ls"], ["search", "deploy key"]):
        assert mem_process(*command).returncode == 0
        assert sorted(path.name for path in (store_root() / ".index").glob("catalog.sqlite*")) == ["catalog.sqlite"]


def test_a_model_that_cannot_load_does_not_make_the_search_rebuild_the_graph_first():
    add("the deploy key rotates every 90 days")
    ok("reindex")  # folds the vectors into the graph file
    (store_root() / ".index" / "vectors.hnsw").unlink()
    done = mem_process("search", "deploy key", MEM_FAKE_LOAD="fail")
    assert done.returncode == 0 and "the deploy key rotates" in done.stdout
    assert "meaning search unavailable" in done.stderr and "rebuilding" not in done.stderr


def test_an_unreadable_mem_yaml_still_gives_word_matches():
    add("the deploy key rotates every 90 days")
    with open(store_root() / "mem.yaml", "a") as settings:
        settings.write("models: [unclosed\n")
    done = mem_process("search", "deploy key")
    assert done.returncode == 0 and "the deploy key rotates" in done.stdout
    assert "meaning search unavailable (cannot read" in done.stderr
