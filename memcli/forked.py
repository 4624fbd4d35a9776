"""Work done by a forked child process while this one goes on, for the slow start of a command.

A cold `mem search` spends most of its first 200 ms importing llama_cpp and loading the model, on one
core; the look at every file (a stat per file) can run meanwhile on the other. A thread cannot do it:
the look holds the GIL between its stats, so the two slow each other down (measured: no gain). A child
shares nothing with its parent but the memory it was forked with. It must touch no database, lock or
output: it pickles its result into a pipe and leaves by os._exit, so nothing of the parent's (buffered
output, atexit hooks, SQLite connections) runs twice. Forking is only safe with no other thread
running, and only tried on Linux, where it is measured; elsewhere `start` gives None and the caller
does the work itself, as it does when the child fails.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import weakref
from typing import Any, Callable


def possible() -> bool:
    """On Linux, in a process of one thread: none of Python's, none native (llama.cpp's OpenMP pool
    once a model ran), so no lock can be held in the child by a thread that is not there."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            return next(line for line in status if line.startswith("Threads:")).split()[1] == "1"
    except (OSError, StopIteration, IndexError):
        return False


class Child:
    """A forked child doing `work`; `result()` waits for its return value."""

    def __init__(self, pid: int, pipe: int):
        self.pid, self._pipe = pid, pipe
        self._reap = weakref.finalize(self, _stop, pid, pipe)

    def result(self) -> Any | None:
        """The work's return value, or None when the child failed (the caller does the work itself)."""
        self._reap.detach()
        try:
            with os.fdopen(self._pipe, "rb") as pipe:
                data = pipe.read()
        finally:
            _, status = os.waitpid(self.pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
        return pickle.loads(data)

    def stop(self) -> None:
        """Give up on the result: the child is killed and reaped."""
        self._reap()


def start(work: Callable[[], Any]) -> Child | None:
    """Run `work` in a forked child; None when forking is not possible here."""
    if not possible():
        return None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return Child(pid, read)


def _stop(pid: int, pipe: int) -> None:
    os.close(pipe)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
