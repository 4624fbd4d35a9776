"""The catalog: a SQLite cache of every memory file, refreshed from the files by mtime and size.

Reading 10k YAML files for every `mem ls` would be slow, so each file's record is cached here with
its stat and hash, plus a full-text index over the raw text and tags. Before every read the catalog
compares the files on disk with what it knows (a stat per file, no parsing) and takes in only what
changed: new files, edited files, deleted files, whatever git or an editor did behind mem's back.
Each file taken in with a compressed form gets the guard's verdict on that form (memcli.index.db.verdict),
recorded beside it: a form a merge reversed or a hand edit broke is then never served, at no cost to a
read. Anything here can be thrown away; `rebuild()` makes it again from the files alone. The reads over
the cache are memcli.index.queries.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from memcli.config import Settings
from memcli.errors import InvalidMemory, StoreError, describe
from memcli.index import db as db_file
from memcli.index import graph_file
from memcli.index import stamps
from memcli.index.dates import date_words
from memcli.index.changes import Looks
from memcli.index.queries import CatalogQueries
from memcli.index.stamps import RACY, SETTLED_NS
from memcli.store.folder import Store
from memcli.store.memory import Memory, content_key
from memcli.util.progress import Progress
from memcli.util.textio import RECORD_FACTOR

log = logging.getLogger("memcli")

DUPLICATE = "duplicate id "  # how a file skipped because another file has its id is recorded (doctor reads it)

# A writer of at least this many files (seconds of embedding at least) waits at its end for the racy window
# of its last write to pass, then looks at every file itself: the next command finds nothing to look at.
SETTLE_WAIT_FILES = 200


@dataclass
class Changes:
    """What one refresh took in; labels let the vector index follow."""

    added: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.broken)


class Catalog(CatalogQueries):
    def __init__(self, store: Store):
        self.store = store
        self.path = store.index_dir / db_file.FILE
        self._db: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._refreshed = False
        self._orphans: list[str] = []  # copies of a memory whose first file just went; each is the memory now
        self._unsettled: dict[str, str] = {}  # files this process wrote and recorded RACY: path -> sha written
        self._written = 0  # files written since the last settle
        self._last_write_ns = 0  # when this process last wrote or deleted a memory file
        self.looks = Looks(self)
        self.in_memory = False  # the file cannot be written (read-only, full): this process works on a copy
        self._said_in_memory = False

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = self._open()
            self._identity = _identity(self.path)
        return self._db

    def _open(self) -> sqlite3.Connection:
        if self.store.read_only:
            return self._copy_in_memory(None)
        try:
            db = db_file.open_db(self.store.index_dir, self.store.lock)
        except Exception as exc:
            if not db_file.is_unwritable(exc):
                raise
            return self._copy_in_memory(describe(exc))
        self.in_memory = False
        self.store.protect(self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
        return db

    def _copy_in_memory(self, why: str | None) -> sqlite3.Connection:
        """`why` the index cannot be written; None for a store this process may not write at all (read-only
        media, another user's folder), where reading it so is no surprise worth a warning."""
        if not self._said_in_memory:
            log.log(logging.INFO if why is None else logging.WARNING,
                    "cannot write the index at %s (%s); this command works on a copy of it in memory",
                    self.store.index_dir, why or "the store is read-only")
        self.in_memory = self._said_in_memory = True
        return db_file.in_memory(self.store.index_dir)

    def _coping(self, exc: BaseException) -> bool:
        """After an error: when it says the index cannot be written now (a full disk), go on with a copy in
        memory (True: do it again); else False."""
        if self.in_memory or not db_file.is_unwritable(exc):
            return False
        self.close()
        self._db = self._copy_in_memory(describe(exc))
        self._refreshed = False
        return True

    def _discard(self) -> None:
        db_file.discard(self.store.index_dir, self.store.lock)

    def close(self) -> None:
        self.looks.drop_ahead()
        if self._db is not None:
            self._db.close()
            self._db = None

    def rebuild(self, progress: Progress | None = None) -> Changes:
        self.close()
        self._discard()
        self._refreshed = False
        return self.refresh(progress)

    # -- keeping up with the files ---------------------------------------------------------------

    def catch_up(self, patience: float = 1) -> Changes:
        """For a long-lived process (the MCP server), before each request: take in what other processes,
        an editor or git changed since the last look (see refresh for the cost and `patience`), and
        reopen a catalog that another process rebuilt (`mem reindex`), or the file again after working on
        a copy in memory (a disk that was full may have room now)."""
        if self._db is not None and (_identity(self.path) != self._identity
                                     or (self.in_memory and not self.store.read_only)):
            self.close()
        return self.refresh(force=True, patience=patience)

    def refresh(self, progress: Progress | None = None, *, force: bool = False, full: bool = False,
                patience: float = 1) -> Changes:
        """Take in what changed on disk since the last look, by any process; once per command unless `force`:
        a few stats when nothing did, whatever the store's size (memcli.index.changes says how, and what
        `patience` defers). `full` looks at every file now and compares every stamp (doctor)."""
        if self._refreshed and not (force or full):
            return Changes()
        try:
            return self._refresh(progress, full, patience)
        except Exception as exc:
            if self._coping(exc):
                return self._refresh(progress, True)
            if not db_file.is_damage(exc):
                raise
            return self.recover(exc, progress)

    def recover(self, exc: BaseException, progress: Progress | None = None) -> Changes:
        """Throw a damaged catalog away and make it again from the files, which are the truth."""
        log.warning("the index at %s is damaged (%s); rebuilding it from the files", self.path, describe(exc))
        self.close()
        self._discard()
        return self._refresh(progress, True)

    def check(self) -> str | None:
        """A full integrity check of the SQLite file (doctor; it reads every page): what was wrong, after
        rebuilding, or None."""
        try:
            problems = [row[0] for row in self.db.execute("PRAGMA quick_check")]
            if problems == ["ok"]:
                return None
            error: BaseException = db_file.Damaged("; ".join(problems[:3]))
        except Exception as exc:
            if not db_file.is_damage(exc):
                raise
            error = exc
        self.recover(error)
        return describe(error)

    def _refresh(self, progress: Progress | None, full: bool, patience: float = 1) -> Changes:
        result = self._look(progress, full, patience)
        for path, error in self.db.execute("SELECT path, error FROM broken ORDER BY path"):
            log.warning("skipped unreadable memory file %s: %s", path, error)
        self._refreshed = True
        return result

    def _look(self, progress: Progress | None, full: bool, patience: float = 1) -> Changes:
        found = self.looks.find(full, patience)
        if found is None:
            return Changes()
        result = Changes()
        if found.fresh or found.gone:
            with self.store.lock():
                result = self._apply(*self.looks.as_they_are_now(found), progress)
        self.looks.remember(found)
        return result

    def look_due(self):
        """For a one-shot command with slow work of its own before it reads the catalog: what a child's
        look at every file should tally against (memcli.index.changes.Looks.due), or None when this
        command's refresh should look for itself."""
        return None if self._refreshed else self.looks.due()

    def _apply(self, fresh, gone, progress: Progress | None) -> Changes:
        changes = Changes()
        with db_file.transaction(self.db):
            for path in gone:
                changes.removed.extend(self._forget(path))
            total = len(fresh)
            for done, (path, mtime, size, ctime) in enumerate(fresh, 1):
                self._take_in(path, mtime, size, ctime, changes)
                if progress and (done % 200 == 0 or done == total):
                    progress("reading memory files", done, total)
            self._adopt_orphans(changes)
        return changes

    def _forget(self, path: str) -> list[int]:
        db = self.db
        db.execute("DELETE FROM broken WHERE path = ?", (path,))
        row = db.execute("SELECT label, id FROM memories WHERE path = ?", (path,)).fetchone()
        if not row:
            return []
        label, memory_id = row
        # Another file with this id was skipped as a duplicate while this one held it (a copy in another
        # month folder, a merge): now it is simply the memory. Taken in at the end of the transaction.
        self._orphans += self.copies(memory_id)
        db.execute("DELETE FROM memories WHERE label = ?", (label,))
        db.execute("DELETE FROM fts WHERE rowid = ?", (label,))
        graph_file.forget(db, label)
        self._link(memory_id, [])
        return [label]

    def _link(self, memory_id: str, supersedes: list[str]) -> None:
        """Record which versions `memory_id` supersedes, and mark them (and unmark the ones it no longer
        names). Links from a file not read yet are taken in with it; `_upsert` marks a version that
        arrives after its successor."""
        db = self.db
        before = [old for (old,) in db.execute("SELECT old FROM links WHERE new = ?", (memory_id,))]
        if set(before) == set(supersedes):
            return
        db.execute("DELETE FROM links WHERE new = ?", (memory_id,))
        db.executemany("INSERT OR IGNORE INTO links VALUES (?, ?)", [(old, memory_id) for old in supersedes])
        db.executemany(_MARK_SUPERSEDED, [(old,) for old in set(before) | set(supersedes)])

    def _adopt_orphans(self, changes: Changes) -> None:
        while self._orphans:
            path = self._orphans.pop()
            try:
                info = os.stat(self.store.file_path(path))
            except (OSError, StoreError):
                self._forget(path)
                continue
            self._take_in(path, info.st_mtime_ns, info.st_size, info.st_ctime_ns, changes)

    def _take_in(self, path: str, mtime: int, size: int, ctime: int, changes: Changes) -> None:
        """Read one file into the catalog; a file that cannot be the memory it claims to be, for whatever
        reason, is recorded as broken (named by every command, skipped) and never stops the others."""
        db = self.db
        ctime = stamps.settled(ctime)
        try:
            if size > self._max_file_bytes():
                raise InvalidMemory(f"larger than {self._max_file_bytes()} bytes; not read")
            data = self.store.file_path(path).read_bytes()
            sha = hashlib.sha256(data).hexdigest()
            row = db.execute("SELECT label, sha FROM memories WHERE path = ?", (path,)).fetchone()
            if row and row[1] == sha:
                db.execute("UPDATE memories SET mtime_ns = ?, size = ?, ctime_ns = ? WHERE label = ?",
                           (mtime, size, ctime, row[0]))
                return
            memory = Memory.from_yaml(data.decode("utf-8"), path)
            other = db.execute("SELECT path FROM memories WHERE id = ? AND path != ?", (memory.id, path)).fetchone()
            if other:
                raise InvalidMemory(f"{DUPLICATE}{memory.id}, also in {other[0]}")
        except Exception as exc:  # one file must never take the others down
            changes.removed.extend(self._forget(path))
            reason = describe(exc).removeprefix(f"{path}: ")
            db.execute("INSERT INTO broken VALUES (?, ?, ?, ?, ?)", (path, mtime, size, ctime, reason))
            changes.broken.append(path)
            return
        self._upsert(path, (mtime, size, ctime), sha, memory, changes)

    def _max_file_bytes(self) -> int:
        try:
            return RECORD_FACTOR * self.store.settings.max_input_bytes
        except StoreError:
            return RECORD_FACTOR * Settings().max_input_bytes

    def _upsert(self, path: str, stamp: tuple[int, int, int], sha: str, memory: Memory, changes: Changes) -> None:
        """Insert a memory, or update it in place when its text is unchanged, so its label and vector stay.
        `stamp` is the file's (mtime_ns, size, ctime_ns)."""
        db = self.db
        db.execute("DELETE FROM broken WHERE path = ?", (path,))
        occupant = db.execute("SELECT id FROM memories WHERE path = ?", (path,)).fetchone()
        if occupant and occupant[0] != memory.id:
            changes.removed.extend(self._forget(path))
        key = content_key(memory.raw)
        served_raw = db_file.verdict(memory.raw, memory.compressed, memory.compression)
        row = db.execute("SELECT label, path, content_key FROM memories WHERE id = ?", (memory.id,)).fetchone()
        if row and row[2] == key:
            db.execute(
                "UPDATE memories SET path = ?, mtime_ns = ?, size = ?, ctime_ns = ?, sha = ?, created_at = ?,"
                " updated_at = ?, tags = ?, source = ?, status = ?, record = ?, served_raw = ? WHERE label = ?",
                (path, *stamp, sha, memory.created_at, memory.updated_at, json.dumps(memory.tags),
                 memory.source, memory.status, memory.to_json(), served_raw, row[0]))
            db.execute("UPDATE fts SET tags = ?, dated = ? WHERE rowid = ?",
                       (" ".join(memory.tags), date_words(memory.created_at), row[0]))
            self._link(memory.id, memory.supersedes)
            return
        if row:
            changes.removed.extend(self._forget(row[1]))
        cursor = db.execute(
            "INSERT INTO memories (id, tail, path, mtime_ns, size, ctime_ns, sha, created_at, updated_at, tags,"
            " source, status, content_key, record, served_raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (memory.id, memory.id[::-1], path, *stamp, sha, memory.created_at, memory.updated_at, json.dumps(memory.tags),
             memory.source, memory.status, key, memory.to_json(), served_raw),
        )
        db.execute("INSERT INTO fts (rowid, raw, tags, dated) VALUES (?, ?, ?, ?)",
                   (cursor.lastrowid, memory.raw, " ".join(memory.tags), date_words(memory.created_at)))
        db.execute(_MARK_SUPERSEDED, (memory.id,))
        self._link(memory.id, memory.supersedes)
        changes.added.append(cursor.lastrowid)

    def record_write(self, relpath: str, memory: Memory, sha: str) -> Changes:
        """Take in a file mem itself just wrote (caller holds the lock), without rescanning the store.
        Its ctime is always too recent to trust (RACY); `settle` marks it clean later."""
        info = self.store.file_path(relpath).stat()
        changes = Changes()
        ctime = stamps.settled(info.st_ctime_ns)
        try:
            with db_file.transaction(self.db):
                self._upsert(relpath, (info.st_mtime_ns, info.st_size, ctime), sha, memory, changes)
                self._adopt_orphans(changes)
        except Exception as exc:
            if not self._coping(exc):
                raise
            return self.record_write(relpath, memory, sha)
        if ctime == RACY:
            self._unsettled[relpath] = sha
        self._written += 1
        self._last_write_ns = time.time_ns()
        return changes

    def settle(self, *, look: bool = False) -> Changes:
        """After many writes (an import, an ingest): mark the files this process wrote clean once their
        racy window passed (memcli.index.stamps.settle), so the next command does not read them again.

        After SETTLE_WAIT_FILES files or more (or when asked to `look`: a reindex), first wait for what is
        left of the window after the last write, then look at every file: the import's folders moved and
        the last full look is as old as the write, so the next command would look at every file of them;
        now it finds the folders as recorded and the full look fresh. What that look took in (another
        process's changes) is returned."""
        wait = self._written >= SETTLE_WAIT_FILES
        self._written = 0
        if wait:
            time.sleep(max(0, self._last_write_ns + SETTLED_NS - time.time_ns()) / 1e9)
        if self._unsettled:
            with self.store.lock():
                stamps.settle(self.db, self.store.root, self._unsettled)
        return self._look(None, True) if wait or look else Changes()

    def record_delete(self, relpath: str) -> list[int]:
        self._last_write_ns = time.time_ns()
        changes = Changes()
        try:
            with db_file.transaction(self.db):
                changes.removed += self._forget(relpath)
                self._adopt_orphans(changes)
        except Exception as exc:
            if not self._coping(exc):
                raise
            return self.record_delete(relpath)
        return changes.removed

    def copies(self, memory_id: str) -> list[str]:
        """The other files that hold this memory's id (skipped as duplicates)."""
        return [path for (path,) in self.db.execute("SELECT path FROM broken WHERE error LIKE ?",
                                                    (f"{DUPLICATE}{memory_id},%",))]


# A version is superseded while some memory names it in `supersedes` (the newest such one is recorded).
_MARK_SUPERSEDED = "UPDATE memories SET superseded_by = (SELECT MAX(new) FROM links WHERE old = ?1) WHERE id = ?1"


def _identity(path) -> tuple[int, int] | None:
    """Which file the path names now; another process's rebuild replaces the catalog with a new file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino
