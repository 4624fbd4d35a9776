"""The look at every file made by a forked child while a cold search loads its model (memcli/forked.py).

What a search finds must not depend on who looked: the child's findings are applied as the search's own
look would apply them. A child that fails, or cannot be had, leaves the look to the search itself.
"""

from __future__ import annotations

import os
import sqlite3
import threading

import pytest
from helpers import add, jsonl, memory_files, ok, open_mem, run, store_root

from memcli import forked
from memcli.index import db as db_file
from memcli.errors import ModelError
from memcli.index.catalog import Catalog


def age_last_full_look() -> None:
    with sqlite3.connect(store_root() / ".index" / db_file.FILE) as db:
        db.execute("UPDATE meta SET value = '[0, 0]' WHERE key = 'full_look'")


def reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


# -- the child -------------------------------------------------------------------------------------

def test_a_child_hands_back_its_whole_result_from_another_process():
    child = forked.start(lambda: ("x" * 3_000_000, os.getpid()))  # far more than a pipe holds
    text, pid = child.result()
    assert text == "x" * 3_000_000
    assert pid == child.pid != os.getpid()
    assert reaped(child.pid)


def test_a_failing_child_gives_none_and_prints_no_traceback(capfd):
    def fail():
        raise RuntimeError("boom")

    child = forked.start(fail)
    assert child.result() is None
    assert reaped(child.pid)
    assert capfd.readouterr() == ("", "")


def test_a_child_given_up_is_killed_and_reaped():
    never = threading.Event()
    child = forked.start(never.wait)  # the child's copy of the event is never set
    child.stop()
    assert reaped(child.pid)


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
    assert forked.possible()


# -- the search that uses it -----------------------------------------------------------------------

@pytest.fixture
def children(monkeypatch):
    """The children the catalog started, for tests that need one to have run."""
    started = []
    start = forked.start
    monkeypatch.setattr(forked, "start", lambda work: started.append(start(work)) or started[-1])
    return started


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
    newcomer = files[kept].with_name("01JAAAAAAAAAAAAAAAAAAAAAAA.yaml")
    newcomer.write_text(files[kept].read_text().replace(kept, "01JAAAAAAAAAAAAAAAAAAAAAAA")
                        .replace("the deploy key rotates every 30 days", "the deploy key lives in the vault"))
    age_last_full_look()
    return {"kept": kept, "gone": gone, "broken": broken}


@pytest.fixture
def own_looks(monkeypatch):
    """The looks the search process made itself (a child's look is not among them)."""
    made = []
    diff = Catalog._diff
    monkeypatch.setattr(Catalog, "_diff", lambda self, folders: made.append(folders) or diff(self, folders))
    return made


@pytest.mark.parametrize("fork", [True, False], ids=["child looks", "search looks"])
def test_a_search_finds_what_changed_behind_mems_back_whoever_looked(fork, children, own_looks, monkeypatch):
    ids = changed_behind_mems_back()
    own_looks.clear()
    if not fork:
        monkeypatch.setattr(forked, "possible", lambda: False)
    result = run("search", "deploy key office plants billing queue", "--jsonl")
    hits = {hit["id"]: hit["content"] for hit in jsonl(result.stdout)}
    assert hits == {ids["kept"]: "the deploy key rotates every 30 days",
                    "01JAAAAAAAAAAAAAAAAAAAAAAA": "the deploy key lives in the vault"}
    assert "skipped unreadable memory file" in result.stderr
    assert (len(children), own_looks) == ((1, []) if fork else (0, [None]))


def test_a_failed_child_leaves_the_look_to_the_search(children, own_looks, monkeypatch):
    ids = changed_behind_mems_back()
    own_looks.clear()
    monkeypatch.setattr(forked.Child, "result", lambda self: self.stop())
    hits = jsonl(ok("search", "deploy key office plants billing queue", "--jsonl").stdout)
    assert {hit["id"]: hit["content"] for hit in hits}[ids["kept"]] == "the deploy key rotates every 30 days"
    assert ids["gone"] not in {hit["id"] for hit in hits}
    assert len(children) == 1 and reaped(children[0].pid)
    assert own_looks == [None]


def test_no_child_when_no_look_at_every_file_is_due_or_words_alone_are_asked(children):
    add("the deploy key rotates every 90 days")
    ok("search", "deploy key")
    age_last_full_look()
    ok("search", "deploy key", "--mode", "text")
    assert children == []


def test_a_model_that_cannot_load_still_gives_word_matches_after_the_child_looked(children, use_providers):
    add("the deploy key rotates every 90 days")
    age_last_full_look()

    def broken(name):
        raise ModelError("no such model")

    use_providers(embedder=broken)
    result = ok("search", "deploy key")
    assert "the deploy key rotates every 90 days" in result.stdout
    assert "meaning search unavailable" in result.stderr
    assert len(children) == 1


def test_an_interrupted_model_load_leaves_no_child_behind(children, use_providers):
    add("the deploy key rotates every 90 days")
    age_last_full_look()

    def interrupted(name):
        raise KeyboardInterrupt

    use_providers(embedder=interrupted)
    mem = open_mem()
    with pytest.raises(KeyboardInterrupt):
        mem.search("deploy key")
    mem.catalog.close()
    assert len(children) == 1 and reaped(children[0].pid)
