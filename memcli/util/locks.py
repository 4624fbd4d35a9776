"""An flock that a second holder may wait for or give way to: one hook server, one drain, one fold per
thread. Standard library only, as the hook's path must stay light."""

from __future__ import annotations

import contextlib
import fcntl
from typing import IO, Iterator


@contextlib.contextmanager
def flock_held(handle: IO, wait: bool = False) -> Iterator[bool]:
    """Yields True once `handle`'s file is locked, or False at once where another holds it and `wait` is off."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        yield False
        return
    try:
        yield True
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
