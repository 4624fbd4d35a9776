"""The background worker of a long-lived process: it works only when the process is idle, and it runs
the store's work queue one job at a time: pending memories compressed through the provider, sparing a
server that fails."""

from __future__ import annotations

import threading

from helpers import add, open_mem, store_root
from provider_helpers import GOOD_LINE, NOTE, stored, use_server
from script_server import ScriptServer

from memcli.core.idle import IdleWorker
from memcli.features.work import Work
from memcli.store.queue import WorkQueue


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_jobs_wait_for_idle_seconds_without_requests():
    clock = Clock()
    ran = threading.Event()
    worker = IdleWorker(5.0, clock=clock)
    worker.add_source(lambda: (lambda: ran.set()) if not ran.is_set() else None)
    worker.start()
    try:
        with worker.request():
            clock.now += 60  # a long request: however long, nothing runs during it
            assert not ran.wait(0.5)
        clock.now += 4.9  # quiet, but not for idle_seconds yet
        assert not ran.wait(0.5)
        clock.now += 0.2
        assert ran.wait(10)
    finally:
        worker.stop()
    assert worker.jobs_run == 1


def test_a_broken_job_does_not_stop_the_worker():
    calls = []

    def source():
        calls.append(1)
        return (lambda: 1 / 0) if len(calls) == 1 else None

    worker = IdleWorker(0.0)
    worker.add_source(source)
    assert worker.run_one() is True  # ran (and failed, logged)
    assert worker.run_one() is False


def test_pending_memories_are_compressed_one_job_at_a_time():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        first = add(NOTE, "--defer")
        second = add(NOTE + " Also true.", "--defer")
        clock = Clock()
        worker = IdleWorker(5, clock=clock)
        worker.add_source(Work(open_mem()).next_job)
        assert worker.run_one() and len(server.requests) == 1
        assert stored(first)["compressed"] == GOOD_LINE
        assert stored(second)["compression"]["status"] == "pending"
        assert worker.run_one() and worker.run_one() is False
    assert stored(second)["compression"]["status"] == "done"
    assert len(server.requests) == 2


def test_a_memory_left_pending_waits_longer_before_each_try():
    with ScriptServer(default=("status", 503, {})) as server:
        use_server(server.base_url, circuit_threshold=100)
        memory_id = add(NOTE, "--defer")
        clock = Clock()
        source = Work(open_mem(), clock=clock).next_job
        queue = WorkQueue(store_root(), clock)
        waits = []
        for _ in range(3):
            job = source()
            assert job is not None
            job()
            assert source() is None  # not again right away
            (waiting,) = queue.waiting()
            waits.append(waiting.not_before - clock.now)
            clock.now += waits[-1]
    assert waits == [30, 60, 120]
    assert len(server.requests) == 3
    assert stored(memory_id)["compression"]["status"] == "pending"
