"""Daemon threads that may be inside native code (llama.cpp) when their caller stops waiting for them.

A compression that times out is left to finish in its thread; it stops at its next deadline check. A
process that leaves meanwhile must let it get there before freeing the models it uses, or the thread
dies by SIGSEGV inside a freed llama.cpp context (memcli.providers.llama waits here at exit).
"""

from __future__ import annotations

import threading
import time
from typing import Callable

_running: set[threading.Thread] = set()
_guard = threading.Lock()


def start(target: Callable[..., None], *args, name: str) -> threading.Thread:
    """A daemon thread running `target(*args)`, known to `wait` until it returns."""
    def run() -> None:
        try:
            target(*args)
        finally:
            with _guard:
                _running.discard(thread)

    thread = threading.Thread(target=run, name=name, daemon=True)
    with _guard:
        _running.add(thread)
    thread.start()
    return thread


def wait(limit_s: float) -> bool:
    """Wait for every thread started here to return, `limit_s` at most in all; True when none is left."""
    until = time.monotonic() + limit_s
    with _guard:
        threads = list(_running)
    for thread in threads:
        thread.join(max(0.0, until - time.monotonic()))
    return not any(thread.is_alive() for thread in threads)
