"""Reading exactly the file that the denylist decided on, never another one swapped in meanwhile.

A path is decided (memcli.privacy.ignore) under its name and under what it resolves to; `pin` records
what that was: the resolved path and the identity (device, inode) of the regular file there. The read
opens the resolved path without following a link (O_NOFOLLOW) and compares what it opened (fstat) with
the pin. A file replaced by a link to `.env`, or a folder on the way replaced by a link, while mem was
busy elsewhere (compressing the files before it) is therefore refused, not read. O_NONBLOCK keeps a
FIFO put in its place from hanging the read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from memcli.errors import InputError, Refused


@dataclass(frozen=True)
class Pin:
    path: Path  # as named (absolute, links not resolved)
    real: str  # what it resolved to when it was decided
    ident: tuple[int, int] | None  # (st_dev, st_ino) of the regular file there; None when there was none


def pin(path: Path | str) -> Pin:
    """What `path` is now: resolved, and the identity of the regular file it resolves to."""
    named = Path(os.path.abspath(path))
    real = os.path.realpath(named)
    try:
        info = os.lstat(real)
    except OSError:
        return Pin(named, real, None)
    return Pin(named, real, (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None)


def read_pinned(pinned: Pin, limit: int) -> bytes:
    """At most limit+1 bytes of the pinned file; Refused when what is there now is not what was decided,
    InputError when it is missing or not a regular file, OSError for other failures."""
    if pinned.ident is None:
        if not os.path.lexists(pinned.real):
            raise InputError(f"no such file: {pinned.path}")
        raise InputError(f"{pinned.path} is not a regular file; mem reads text files only")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(pinned.real, flags)
    except FileNotFoundError:
        raise InputError(f"no such file: {pinned.path}") from None
    except OSError:
        if os.path.islink(pinned.real):
            raise _changed(pinned, "it is a link now") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if (info.st_dev, info.st_ino) != pinned.ident or not stat.S_ISREG(info.st_mode):
            raise _changed(pinned, "another file is there now")
        return handle.read(limit + 1)


def _changed(pinned: Pin, why: str) -> Refused:
    return Refused(f"refusing {pinned.path}: it changed after mem decided to read it ({why}); not read")
