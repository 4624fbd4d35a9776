"""The store's work queue as a user meets it: what waits is listed and done, a job that fails is tried again
after a pause that doubles and then parked with its reason, never holding up the others; a duplicate
delivery is dropped; a damaged job file is set aside; no lock file is left behind per memory."""

from __future__ import annotations

import json

import pytest
from helpers import add, jsonl, ok, run, store_root

from memcli.errors import InputError
from memcli.store.queue import BACKOFF_S, MAX_TRIES, WorkQueue, run_jobs


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def queue(tmp_path):
    return WorkQueue(tmp_path, Clock())


def test_jobs_run_oldest_first_and_leave_the_queue(queue):
    ran = []
    for key, at in (("b", 2.0), ("a", 1.0), ("c", 3.0)):
        queue.put("note", key, {"n": key}, scope=key, at=at)
    counts = run_jobs(queue, {"note": lambda job: ran.append(job.data["n"])})
    assert ran == ["a", "b", "c"] and counts == {"note": 3}
    assert queue.waiting() == []


def test_a_duplicate_delivery_is_dropped_until_its_key_is_forgotten(queue):
    key = "0123456789abcdef" * 2  # an event's key (memcli.capture.events.event_key)
    assert queue.put("event", key, {}, scope="s", once=True)
    assert not queue.put("event", key, {}, scope="s", once=True)  # still waiting
    run_jobs(queue, {"event": lambda job: None})
    assert not queue.put("event", key, {}, scope="s", once=True)  # done a moment ago
    queue.clock.now = (queue.done_dir / f"event-{key}").stat().st_mtime + 8 * 24 * 3600
    assert queue.forget_done() == 1
    assert queue.put("event", key, {}, scope="s", once=True)


def test_a_failing_job_waits_longer_before_each_try_then_is_parked_and_the_others_run(queue):
    queue.put("flaky", "f", {}, scope="f", at=1.0)
    queue.put("fine", "g", {}, scope="g", at=2.0)
    done = []

    def fails(job):
        raise OSError("disk full")

    pauses = []
    for attempt in range(MAX_TRIES):
        counts = run_jobs(queue, {"flaky": fails, "fine": lambda job: done.append(job.key)})
        if attempt < MAX_TRIES - 1:
            assert counts["retried later"] == 1
            (job,) = queue.waiting(["flaky"])
            pauses.append(job.not_before - queue.clock.now)
            assert run_jobs(queue, {"flaky": fails}) == {}  # not due yet: left alone
            queue.clock.now = job.not_before
    assert pauses == [BACKOFF_S * 2 ** n for n in range(MAX_TRIES - 1)]
    assert counts["parked"] == 1 and done == ["g"]
    (parked,) = queue.parked()
    assert parked.tries == MAX_TRIES and parked.error == "disk full"


def test_an_input_that_can_never_pass_is_parked_at_once(queue):
    queue.put("write", "w", {}, scope="w")

    def refuses(job):
        raise InputError("the text is larger than the limit")

    counts = run_jobs(queue, {"write": refuses}, permanent=lambda exc: isinstance(exc, InputError))
    assert counts == {"parked": 1} and queue.parked()[0].tries == 1


def test_a_job_whose_scope_another_runner_holds_is_left_to_it(queue):
    queue.put("fold", "t1", {}, scope="thread-t1")
    with queue.scope("thread-t1") as held:
        assert held
        assert run_jobs(queue, {"fold": lambda job: None}) == {"busy": 1}
    assert run_jobs(queue, {"fold": lambda job: None}) == {"fold": 1}


def test_scope_locks_leave_no_file_behind(queue):
    for n in range(50):
        queue.put("compress", f"m{n}", {}, scope=f"memory-m{n}")
    run_jobs(queue, {"compress": lambda job: None})
    assert list(queue.locks_dir.iterdir()) == []


def test_a_damaged_job_file_is_set_aside_and_the_others_run(queue):
    queue.put("note", "good", {}, scope="g")
    queue.ensure()
    (queue.jobs_dir / "note-bad.json").write_text("{not json")
    assert run_jobs(queue, {"note": lambda job: None}) == {"note": 1}
    assert (queue.root / "bad" / "note-bad.json").exists() and queue.waiting() == []


def test_a_deferred_add_waits_in_the_queue_until_compress_pending_does_it():
    memory_id = add("Amazon blocks the scraper's IP addresses after about 30 requests per second.", "--defer")
    (row,) = jsonl(ok("queue", "--jsonl").stdout)
    assert row == {"name": f"compress-{memory_id}", "kind": "compress", "state": "waiting",
                   "queued_at": row["queued_at"], "tries": 0}
    assert "1 done" in ok("compress", "--pending").stderr
    assert ok("queue", "--jsonl").stdout == "" and "nothing waits" in ok("queue").stderr
    assert json.loads(ok("show", memory_id, "--json").stdout)["optimized"] is True


def test_retry_and_drop_say_how_many_and_exit_1_when_none_matched():
    add("a note")
    queue = WorkQueue(store_root())
    queue.put("fold", "t1", {"thread": "t1"}, scope="thread-t1")
    queue.fail(queue.get("fold", "t1"), "the thread's files are unreadable", permanent=True)
    assert run("queue", "retry", "nothing-like-this").exit_code == 1
    assert "1 parked job queued again" in ok("queue", "retry", "fold-").stderr
    queue.fail(queue.get("fold", "t1"), "again", permanent=True)
    assert run("queue", "drop").exit_code == 2  # say which
    assert "1 parked job dropped" in ok("queue", "drop", "--all").stderr
    assert queue.parked() == [] and queue.waiting() == []


def test_an_empty_job_name_is_a_usage_error_and_drops_nothing():
    add("a note")
    queue = WorkQueue(store_root())
    queue.put("fold", "t1", {"thread": "t1"}, scope="thread-t1")
    queue.fail(queue.get("fold", "t1"), "unreadable", permanent=True)
    for blank in ("", "  "):
        assert run("queue", "drop", blank).exit_code == 2
        assert run("queue", "retry", blank).exit_code == 2
    assert [job.name for job in queue.parked()] == ["fold-t1"]
    assert queue.drop([""]) == 0


def test_listing_the_queue_after_the_key_changed_moves_no_job_and_status_counts_the_set_aside(monkeypatch):
    from memcli.util import own_files

    add("a note")
    queue = WorkQueue(store_root())
    queue.put("fold", "t1", {"thread": "t1"}, scope="thread-t1")
    (store_root().parent / "config" / own_files.KEY_FILE).unlink()  # a new machine key: the old seals fail
    monkeypatch.setattr(own_files, "_keys", {})
    ok("queue", "ls")
    ok("queue", "--jsonl")
    assert (queue.jobs_dir / "fold-t1.json").exists() and not (queue.root / "bad").exists()
    run_jobs(queue, {"fold": lambda job: None})
    assert (queue.root / "bad" / "fold-t1.json").exists()
    status = ok("status").stdout + ok("status").stderr
    assert "1 job set aside" in status and "machine.key" in status
    doctor = run("doctor")
    assert "1 job set aside" in doctor.stdout + doctor.stderr
