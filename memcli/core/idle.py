"""Background work for a long-lived process (`mem mcp`): jobs run only when the process is idle.

The MCP server stores a memory at once and leaves the slow part (compression on a server or a large
local model, a thread's fold, captured events) to this worker, which starts on it after `idle_seconds`
without a request and steps aside while requests arrive: a job already running finishes, the next one
waits for quiet again.

Work comes from *sources*: callables that return the next job (a callable) or None when they have
nothing to do; the server's one source is its store's work queue (memcli.features.work).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any, Callable

from memcli.errors import describe

log = logging.getLogger("memcli")

Job = Callable[[], Any]
Source = Callable[[], "Job | None"]

POLL_S = 0.05  # how often an idle worker looks at the clock; the work itself waits for idle_seconds


def defers_writes(mem) -> bool:
    """Whether a long-lived process should store writes at once and compress them when idle: when
    compression goes to a server, or writes `facts` with a local model (seconds per memory)."""
    return bool(mem.providers.remote) or mem.settings.compress_method == "facts"


class IdleWorker:
    def __init__(self, idle_seconds: float, *, clock: Callable[[], float] = time.monotonic):
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.sources: list[Source] = []
        self.jobs_run = 0
        self._last_request = clock()
        self._active = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add_source(self, source: Source) -> None:
        self.sources.append(source)

    @contextlib.contextmanager
    def request(self):
        """Wrap each request: no job starts while one is open, nor within idle_seconds after it."""
        with self._lock:
            self._active += 1
            self._last_request = self.clock()
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                self._last_request = self.clock()

    def idle(self) -> bool:
        with self._lock:
            return self._active == 0 and self.clock() - self._last_request >= self.idle_seconds

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="mem-idle-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the loop to end; a job in progress finishes first (each job saves as it goes)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run_one(self) -> bool:
        """Run the first job any source has; False when none had one."""
        for source in self.sources:
            try:
                job = source()
                if job is None:
                    continue
                job()
            except Exception as exc:  # noqa: BLE001 - a broken job must not end the worker
                log.warning("background job failed: %s", describe(exc))
            self.jobs_run += 1
            return True
        return False

    def _run(self) -> None:
        rest_until = 0.0
        while not self._stop.wait(POLL_S):
            if not self.idle() or self.clock() < rest_until:
                continue
            if not self.run_one():
                rest_until = self.clock() + self.idle_seconds  # nothing to do: look again later
