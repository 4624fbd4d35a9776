"""When the catalog may trust a file's stamp (mtime, size, ctime) instead of reading the file.

A file is known by its size, mtime and ctime. No tool can set a ctime back (writing the file or setting
its mtime moves it to now), so an edit that keeps the size and restores the mtime is still seen. But a
ctime this recent (SETTLED_NS) is stored as RACY: a change within the same clock tick would leave the
stamp equal, so the next look reads the file again and its hash says whether anything changed (git's
"racily clean" files). A writer of many files (an import) checks its own files once their window has
passed (`settle`), so the next command does not read them all again.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path

from memcli.index import db as db_file

SETTLED_NS = 2_000_000_000
RACY = -1

Stamped = tuple[str, int, int, int]  # (path relative to the store root, mtime_ns, size, ctime_ns)


def settled(ctime_ns: int) -> int:
    """The ctime to record: RACY while it is within the window."""
    return RACY if ctime_ns >= time.time_ns() - SETTLED_NS else ctime_ns


def settle(db: sqlite3.Connection, root: Path, written: dict[str, str]) -> int:
    """Record the real stamp of the files in `written` (path -> sha of what was written, recorded RACY)
    whose change is now older than SETTLED_NS, and take them out of `written`. Each is read and hashed
    once, now that no change can hide in the same clock tick, and marked clean only if it still holds
    what was written (which the catalog holds). Files still within the window stay. How many were marked."""
    clean = []
    horizon = time.time_ns() - SETTLED_NS
    for relpath, sha in list(written.items()):
        path = os.path.join(root, relpath)  # written by this process through Store.file_path
        try:
            info = os.stat(path)
            if info.st_ctime_ns >= horizon:
                continue
            with open(path, "rb") as handle:
                same = hashlib.sha256(handle.read()).hexdigest() == sha
        except OSError:
            same = False
        del written[relpath]
        if same:
            clean.append((info.st_mtime_ns, info.st_size, info.st_ctime_ns, relpath, sha))
    with db_file.transaction(db):
        db.executemany("UPDATE memories SET mtime_ns = ?, size = ?, ctime_ns = ? WHERE path = ? AND sha = ?"
                       f" AND ctime_ns = {RACY}", clean)
    return len(clean)
