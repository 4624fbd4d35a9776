"""File-system helpers for writes that must never leave a half file under the final name.

Every temporary file mem makes is named by `sibling_temp`: a dot file ending in `.tmp` beside its
destination, so one `.gitignore` line covers them all and `mem doctor` can recognise stale ones.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from pathlib import Path
from typing import Iterator

# What sibling_temp names (and what older versions named, without the random part): the pid that made it.
TEMP_NAME = re.compile(r"^\..+\.(\d+)(?:\.[0-9a-f]+)?\.tmp$")


def sibling_temp(dest: Path) -> Path:
    """A fresh name beside dest (same file system, so os.replace is atomic); nothing is created."""
    return dest.with_name(f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def private_mode(folder: Path) -> int | None:
    """0o600 for a file in a folder only its owner may enter (a private store's .index/ and threads: the
    file is as private as its folder from its first byte), else None (the umask decides)."""
    try:
        return None if os.stat(folder).st_mode & 0o077 else 0o600
    except OSError:
        return None


def atomic_write(path: Path, text: str, mode: int | None = None) -> None:
    """Write text to path all at once: readers see the old file or the new one, never a part. `mode`
    (0o600 for a private store) is the file's from its first byte; None makes it as private as its
    folder (memcli.util.fsutil.private_mode), else leaves it to the umask."""
    mode = private_mode(path.parent) if mode is None else mode
    tmp = sibling_temp(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def stale_temps(root: Path) -> Iterator[Path]:
    """Temp files under root left by a process that is no longer running (killed mid-write); a live
    process's temp file is its write in progress and is left alone."""
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [name for name in subfolders if name != ".git"]
        for name in names:
            match = TEMP_NAME.match(name)
            if match and not _running(int(match.group(1))):
                yield Path(folder) / name


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid < 1 << 22  # another user's process, or a number no pid can be
    return True


@contextlib.contextmanager
def scratch_file(dest: Path, text: str) -> Iterator[Path]:
    """A private (0600) file named like a temp file beside dest, holding text, removed on the way out
    whatever happens (an error, Ctrl-C); only a kill -9 can leave it, where `mem doctor` finds temp files."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = sibling_temp(dest)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        yield tmp
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
