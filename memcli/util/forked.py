"""Work done by a forked child process while this one goes on, for the slow start of a command.

A cold `mem search` spends most of its time importing llama_cpp and loading the embedding model, on
one core, while the other core idles: a child embeds the query there, and meanwhile this process
catches up with the files, ranks by words and loads the vector graph (memcli.core.reading.search). A
thread cannot do it: llama-cpp-python points file descriptors 1 and 2 at /dev/null for the whole
process while it loads a model (the other thread's warnings were lost), and the Python work holds the
GIL. A child shares nothing with its parent but the memory it was forked with. It must touch no
database, lock or output: it pickles its result into a pipe and leaves by os._exit, so nothing of the
parent's (buffered output, atexit hooks, SQLite connections) runs twice. Forking is only safe with no
other thread running, and only tried on Linux, where it is measured; elsewhere `start` gives None and
the caller does the work itself, as it does when the child fails.
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
        self._reap = weakref.finalize(self, _stop, pid, pipe)  # at the latest when this goes, or at exit

    def result(self) -> Any | None:
        """The work's return value, or None when the child failed (the caller does the work itself).
        The child writes its result whole or not at all; interrupted meanwhile, it is stopped at once."""
        try:
            chunks = []
            while chunk := os.read(self._pipe, 1 << 20):
                chunks.append(chunk)
        finally:
            self.stop()
        try:
            return pickle.loads(b"".join(chunks)) if chunks else None
        except Exception:  # cut short, or an exception whose class cannot be rebuilt from its args
            return None

    def stop(self) -> None:
        """Kill the child if it still runs, and reap it."""
        self._reap()


def start(work: Callable[[], Any]) -> Child | None:
    """Run `work` in a forked child; None when forking is not possible here."""
    if not possible():
        return None
    for stream in (sys.stdout, sys.stderr):  # what is buffered now must not be written twice
        if stream is not None:
            stream.flush()
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
