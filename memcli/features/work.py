"""The one runner of a store's work queue (memcli.store.queue): every kind of job, with its handler.

What a write leaves (a compression, vectors: memcli.core.write_jobs), a due thread fold
(memcli.threads.summarize) and captured hook events (memcli.capture.event_jobs) are jobs of one queue,
run by one rule wherever they run: inline by a one-shot command that wants its own result now, by
`mem queue run` (or `mem capture drain`, `mem compress --pending` for their kinds), detached and niced
after a hook or a thread append (`--background`), and when idle in `mem mcp`.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Iterable

from memcli.capture.event_jobs import KINDS as CAPTURE_KINDS
from memcli.capture.event_jobs import CaptureJobs
from memcli.core import write_jobs
from memcli.core.compressing import CompressOptions
from memcli.errors import describe
from memcli.store.queue import WorkQueue, run_jobs
from memcli.threads.summarize import FOLD, fold_job

if TYPE_CHECKING:
    from memcli.core.mem import Mem

KINDS = (write_jobs.COMPRESS, write_jobs.EMBED, FOLD, *CAPTURE_KINDS)
POLL_S = 0.2  # how often a lingering runner looks for new jobs


class Work:
    """The handlers of every kind (or of `kinds`) for one run. `library(step)` runs a step where the
    library may touch the store (a server's one library thread); the slow part of a compression runs
    where the runner is."""

    def __init__(self, mem: Mem, kinds: Iterable[str] | None = None,
                 library: Callable[[Callable[[], Any]], Any] = write_jobs.direct, clock: Callable[[], float] = time.time,
                 compressing: CompressOptions | None = None):
        self.mem, self.library = mem, library
        self.queue = WorkQueue(mem.store.root, clock)
        self.capture = CaptureJobs(mem, library, compressing)
        every = {**write_jobs.handlers(mem, library=library), FOLD: lambda job: library(lambda: fold_job(mem, job)),
                 **self.capture.handlers}
        wanted = set(KINDS if kinds is None else kinds)
        self.handlers = {kind: handler for kind, handler in every.items() if kind in wanted}

    def ready(self) -> bool:
        """Whether a job of these kinds is due now (a cheap look for an idle server)."""
        now = self.queue.clock()
        return self.mem.store.exists and any(job.not_before <= now for job in self.queue.waiting(self.handlers))

    def run_pass(self, *, limit: int | None = None) -> Counter:
        """Every job due now (or the first `limit` of them), once, oldest first."""
        done = Counter()
        try:
            done = run_jobs(self.queue, self.handlers, limit=limit, permanent=write_jobs.permanent, describe=describe)
        finally:
            done.update(self.capture.counts)
            self.capture.close()
        return done

    def next_job(self) -> Callable[[], Counter] | None:
        """For an idle server (memcli.core.idle): the next due job, to run, or None. The look goes through
        the library, so a server's idle look also catches up with the files."""
        if not self.library(self.ready):
            return None
        return lambda: self.run_pass(limit=1)

    def run(self, *, linger: float = 0.0, sleep: Callable[[float], None] = time.sleep) -> Counter:
        """Passes until no job is due; with `linger`, until that long has passed without one."""
        totals: Counter = Counter()
        quiet_since = time.monotonic()
        while True:
            done = self.run_pass()
            totals.update(done)
            if any(count for outcome, count in done.items() if outcome != "busy"):
                quiet_since = time.monotonic()
                continue
            if time.monotonic() - quiet_since >= linger:
                break
            sleep(POLL_S)
        self.queue.forget_done()
        return totals
