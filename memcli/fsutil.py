"""File-system helpers for writes that must never leave a half file under the final name.

Every temporary file mem makes is named by `sibling_temp`: a dot file ending in `.tmp` beside its
destination, so one `.gitignore` line covers them all and `mem doctor` can recognise stale ones.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


def sibling_temp(dest: Path) -> Path:
    """A fresh name beside dest (same file system, so os.replace is atomic); nothing is created."""
    return dest.with_name(f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def atomic_write(path: Path, text: str) -> None:
    """Write text to path all at once: readers see the old file or the new one, never a part."""
    tmp = sibling_temp(path)
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
