"""Requests to a compression server that never hammer it and never hang the caller.

Every request goes through `Caller.call`: the breaker (memcli.providers.circuit) must be closed,
`max_per_minute` (shared by every process on the store) and `max_concurrent` (this process) must
allow it, and the whole thing, retries included, ends by the caller's deadline. Timeouts, dropped
connections, 429 and 5xx are retried up to `max_retries` times after an exponential backoff with
jitter (a 429's or 503's Retry-After is honoured instead); each of them counts as a failure for the
breaker. A 401/403 opens the breaker at once and is not retried. When the time left cannot cover the
wait, the call gives up with a transient ProviderError: the job stays pending for a later try.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import Callable, TypeVar

from memcli.errors import ProviderError
from memcli.providers.circuit import CircuitState
from memcli.providers.protocols import Deadline
from memcli.providers.settings import ProviderSettings

log = logging.getLogger("memcli")

T = TypeVar("T")


class Caller:
    def __init__(self, settings: ProviderSettings, state: CircuitState, *,
                 sleep: Callable[[float], None] = time.sleep, rng: Callable[[], float] = random.random):
        self.settings = settings
        self.state = state
        self.sleep = sleep
        self.rng = rng
        self.slots = threading.BoundedSemaphore(settings.max_concurrent)

    def backoff(self, attempt: int) -> float:
        """The pause before retry number `attempt` (0-based): half the doubled delay fixed, half random,
        so that processes which failed together do not come back together."""
        cap = min(self.settings.max_backoff_seconds, self.settings.backoff_seconds * 2 ** attempt)
        return cap / 2 + self.rng() * cap / 2

    def call(self, send: Callable[[float], T], deadline: Deadline) -> T:
        """`send(timeout)` performs one request; its result, or the last ProviderError."""
        attempt = 0
        while True:
            self._wait_for_turn(deadline)
            try:
                result = self._send(send, deadline)
            except ProviderError as exc:
                if exc.kind == "auth":
                    self.state.failed(str(exc), trip=True)
                    raise
                if not exc.retryable:
                    raise
                self.state.failed(str(exc), retry_after=exc.retry_after)
                pause = exc.retry_after if exc.retry_after is not None else self.backoff(attempt)
                if attempt >= self.settings.max_retries:
                    raise
                if pause >= deadline.remaining():
                    raise ProviderError(exc.kind, f"{str(exc).split(': ', 1)[1]}; retry in {pause:.0f}s "
                                        "is past this job's deadline", exc.retry_after) from None
                log.info("compression server: %s; retry %d in %.1fs", exc, attempt + 1, pause)
                self.sleep(pause)
                attempt += 1
                continue
            self.state.succeeded()
            return result

    def _wait_for_turn(self, deadline: Deadline) -> None:
        """Until the breaker and the per-minute budget let one request out (then it is counted)."""
        while True:
            closed_in = self.state.open_for()
            if closed_in is not None:
                raise ProviderError("circuit-open", f"the circuit is open for {closed_in:.0f}s more after repeated "
                                    "failures; nothing is sent until then")
            wait = self.state.reserve()
            if wait <= 0:
                return
            if wait >= deadline.remaining():
                raise ProviderError("rate-limited", f"the request budget (max_per_minute "
                                    f"{self.settings.max_per_minute}, or a Retry-After) allows the next request "
                                    f"in {wait:.0f}s")
            self.sleep(wait)

    def _send(self, send: Callable[[float], T], deadline: Deadline) -> T:
        if not self.slots.acquire(timeout=deadline.remaining()):
            raise ProviderError("rate-limited", f"max_concurrent {self.settings.max_concurrent} requests busy "
                                "until this job's deadline")
        try:
            timeout = min(self.settings.timeout_seconds, deadline.remaining())
            if timeout <= 0:
                raise ProviderError("timeout", "no time left for a request")
            return send(timeout)
        finally:
            self.slots.release()
