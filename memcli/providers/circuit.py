"""What every mem process on a store knows about its compression server: the circuit breaker, the
requests of the last minute, the last error. Kept in `.index/provider.json` (a cache: deleting it
only forgets the history), read and written under its own file lock, so a bad key or an outage seen
by one `mem add` stops the next one too, and `max_per_minute` holds across processes.

The breaker: closed (requests go out); after `circuit_threshold` consecutive failures, or at once on
a 401/403, open until `open_until`: nothing is sent. After that one trial is allowed (half-open): a
success closes it, a failure opens it again for twice the previous cooldown, up to
`circuit_max_cooldown_seconds`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path
from typing import Callable

from memcli.providers.settings import ProviderSettings
from memcli.util.fsutil import atomic_write
from memcli.util.own_files import open_lock

STATE_FILE = "provider.json"
WINDOW_S = 60.0


def _fresh() -> dict:
    return {"failures": 0, "opened": 0, "open_until": None, "not_before": None, "requests": [],
            "last_error": None, "provider": None}


class CircuitState:
    def __init__(self, index_dir: Path, settings: ProviderSettings, clock: Callable[[], float] = time.time):
        self.path = index_dir / STATE_FILE
        self.settings = settings
        self.clock = clock
        self.identity = f"{settings.name} {settings.base_url} {settings.model}"

    @contextlib.contextmanager
    def _locked(self):
        """The state, read under the lock; whatever the block changes is written back."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with os.fdopen(open_lock(self.path.with_suffix(".lock")), "r+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self._read()
            before = json.dumps(data, sort_keys=True)
            yield data
            if json.dumps(data, sort_keys=True) != before:
                atomic_write(self.path, json.dumps(data, indent=1))

    def _read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict) or data.get("provider") != self.identity:
            data = _fresh()  # another server or model: its history says nothing about this one
            data["provider"] = self.identity
        return data

    def reserve(self) -> float:
        """0 when a request may go now (and it is counted), else how many seconds to wait first.
        Raises nothing; the caller decides whether waiting fits its deadline."""
        now = self.clock()
        with self._locked() as data:
            data["requests"] = [t for t in data["requests"] if t > now - WINDOW_S]
            if data["not_before"] and now < data["not_before"]:
                return data["not_before"] - now
            if len(data["requests"]) >= self.settings.max_per_minute:
                return data["requests"][-self.settings.max_per_minute] + WINDOW_S - now
            data["requests"].append(now)
            return 0.0

    def open_for(self) -> float | None:
        """Seconds until the breaker lets a request through, or None when it is closed or half-open."""
        now = self.clock()
        with self._locked() as data:
            until = data["open_until"]
            return until - now if until and now < until else None

    def succeeded(self) -> None:
        with self._locked() as data:
            data.update(failures=0, opened=0, open_until=None)

    def failed(self, reason: str, *, trip: bool = False, retry_after: float | None = None) -> None:
        """Count a failure; `trip` opens the breaker whatever the count (a rejected key)."""
        now = self.clock()
        with self._locked() as data:
            data["failures"] += 1
            data["last_error"] = {"at": now, "reason": reason}
            if retry_after:
                data["not_before"] = max(data["not_before"] or 0.0, now + retry_after)
            already_open = data["open_until"] and now < data["open_until"]
            # A failed trial after a cooldown (opened > 0) opens it again at once, for twice as long.
            if not already_open and (trip or data["opened"] or data["failures"] >= self.settings.circuit_threshold):
                cooldown = min(self.settings.circuit_cooldown_seconds * 2 ** data["opened"],
                               self.settings.circuit_max_cooldown_seconds)
                data["opened"] += 1
                data["open_until"] = now + cooldown

    def snapshot(self) -> dict:
        """For `mem status`: the breaker, when it closes, the last error, requests in the last minute."""
        now = self.clock()
        with self._locked() as data:
            until = data["open_until"]
            state = "closed" if not data["opened"] else "open" if now < until else "half-open"
            return {
                "circuit": state,
                "closes_at": until if state == "open" else None,
                "consecutive_failures": data["failures"],
                "cooldown_seconds": (min(self.settings.circuit_cooldown_seconds * 2 ** max(data["opened"] - 1, 0),
                                         self.settings.circuit_max_cooldown_seconds) if data["opened"] else None),
                "last_error": data["last_error"],
                "requests_last_minute": sum(1 for t in data["requests"] if t > now - WINDOW_S),
            }
