"""The index's SQLite file: its schema, opening (and rebuilding when damaged), transactions.

This module owns the file. The catalog fills `memories`, `fts`, `broken`, `folders` and `links` (which
version supersedes which, from the files' `supersedes`; `memories.superseded_by` follows from it); the vector
index fills `vectors` and `hnsw_dead` and the graph file beside it, whose labels are the catalog's, so
throwing one away means throwing both away (`discard`).

Everything here is a cache of the memory files, so damage of any kind (a page of noise, a file that
is not a database, a missing table, a meta row that does not parse, a folder where the file should be)
is met the same way: the cache is thrown away and made again from the files (`is_damage` says which
errors mean that; a locked or read-only database does not).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import shutil
import sqlite3
from pathlib import Path
from typing import Iterator, Sequence

from memcli.errors import StoreError
from memcli.index.dates import date_words

log = logging.getLogger("memcli")

SCHEMA_VERSION = "9"
# Schemas whose catalog differs only in its word index (6: no date words; 7: dates as plain words, which
# a year or a bare number matched): opened, that index alone is made again (_refill_words), which makes
# it schema 8.
REFILLED = ("6", "7")
# Schema 8 lacks the guard's verdict on each compressed form (memories.served_raw): opened, the column is
# added and every form checked once (_check_forms).
UNCHECKED = "8"
FILE = "catalog.sqlite"
HNSW_FILE = "vectors.hnsw"
IN_CHUNK = 500  # SQLite allows 999 host parameters in older builds

# The word index: each memory's text, tags and date words (memcli.index.dates), by rowid = label.
FTS = "CREATE VIRTUAL TABLE fts USING fts5 (raw, tags, dated, tokenize = 'porter unicode61 remove_diacritics 2');"
SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE memories (
    label INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tail TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    sha TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    tags TEXT NOT NULL,
    source TEXT,
    status TEXT,
    content_key TEXT NOT NULL,
    record TEXT NOT NULL,
    superseded_by TEXT,
    served_raw TEXT
);
CREATE INDEX memories_created ON memories (created_at);
CREATE INDEX memories_content ON memories (content_key);
CREATE INDEX memories_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE TABLE links (old TEXT NOT NULL, new TEXT NOT NULL, PRIMARY KEY (old, new)) WITHOUT ROWID;
CREATE INDEX links_new ON links (new);
CREATE TABLE broken (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, ctime_ns INTEGER, error TEXT);
{FTS}
CREATE TABLE vectors (label INTEGER PRIMARY KEY, vec BLOB NOT NULL, in_hnsw INTEGER NOT NULL DEFAULT 0);
CREATE INDEX vectors_delta ON vectors (in_hnsw);
CREATE TABLE hnsw_dead (label INTEGER PRIMARY KEY);
CREATE TABLE folders (path TEXT PRIMARY KEY, mtime_ns INTEGER);
"""
# What a look at every file reads of every memory: from this index it reads a tenth of the pages the
# table takes. Added after schema 6 shipped, so a catalog that lacks it gets it when opened (open_db).
STAMP_INDEX = "CREATE INDEX IF NOT EXISTS memories_stamp ON memories (path, mtime_ns, size, ctime_ns);"


class Damaged(Exception):
    """Something read from the index makes no sense (a record that does not parse): the cache is damaged."""


def is_damage(exc: BaseException) -> bool:
    """Whether an error means the cache is damaged (rebuild it), rather than busy, read-only or a bug."""
    if isinstance(exc, Damaged):
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    return (name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_MISMATCH"))
            or "malformed" in text or "not a database" in text
            or (name == "SQLITE_ERROR" and text.startswith(("no such table", "no such column"))))


def is_unwritable(exc: BaseException) -> bool:
    """Whether an error means the index cannot be written at all now (a full disk, a read-only store),
    rather than damage or a bug: reads go on with a copy in memory (in_memory)."""
    if isinstance(exc, OSError):
        return exc.errno in UNWRITABLE_ERRNOS
    name = getattr(exc, "sqlite_errorname", "") or ""
    # SQLITE_IOERR: what a WAL or its shared-memory file growing on a full disk may say instead of FULL
    return isinstance(exc, sqlite3.Error) and name.startswith(("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR"))


UNWRITABLE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}


def in_memory(index_dir: Path) -> sqlite3.Connection:
    """A copy of the index in memory, for a process that cannot write the file (read-only or full): it
    keeps up with the files and answers as usual, and is gone when the process ends. Empty (the
    schema alone) when the file cannot be read either: the refresh fills it from the files."""
    copy = sqlite3.connect(":memory:", isolation_level=None)
    path = index_dir / FILE
    # Read-only with its journal first; immutable (the file alone) when the journal cannot be opened either,
    # as on read-only media without its -shm file. What the copy lacks, the refresh takes from the files.
    for how in ("mode=ro", "immutable=1"):
        try:
            source = sqlite3.connect(f"{path.resolve().as_uri()}?{how}", uri=True)
            try:
                if _schema_version(source) == SCHEMA_VERSION:
                    source.backup(copy)
                    break
            finally:
                source.close()
        except sqlite3.Error as exc:
            log.debug("the index at %s cannot be read (%s, %s)", path, how, exc)
    if _schema_version(copy) != SCHEMA_VERSION:
        copy.executescript("BEGIN;" + SCHEMA + STAMP_INDEX + "COMMIT;")
        copy.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
    return copy


def open_db(index_dir: Path, lock) -> sqlite3.Connection:
    """The index database, created when missing and made anew (with a warning) when damaged or of an
    older schema. `lock` is the store's lock (a context manager factory)."""
    _make_folder(index_dir)
    path = index_dir / FILE
    for attempt in range(2):
        try:
            db = sqlite3.connect(path, timeout=60, isolation_level=None)
        except sqlite3.Error as exc:
            log.warning("cannot open the index at %s (%s); making it anew", path, exc)
            discard(index_dir, lock)
            continue
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            version = _schema_version(db)
            if version in REFILLED:
                with lock():
                    if _schema_version(db) in REFILLED:
                        _refill_words(db)
                version = _schema_version(db)
            if version == UNCHECKED:
                with lock():
                    if _schema_version(db) == UNCHECKED:
                        _check_forms(db)
                version = _schema_version(db)
            if version == SCHEMA_VERSION:
                _add_index(db)
                return db
            if version is None:
                with lock():
                    if _schema_version(db) is None:
                        remove(index_dir / HNSW_FILE)
                        db.executescript("BEGIN;" + SCHEMA + STAMP_INDEX + "COMMIT;")
                        db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                return db
        except sqlite3.DatabaseError as exc:
            if is_unwritable(exc):  # the caller goes on with a copy in memory
                db.close()
                raise
            if not is_damage(exc) and not (isinstance(exc, sqlite3.OperationalError) and _is_cantopen(exc)):
                db.close()
                raise StoreError(f"cannot use the index at {path}: {exc}") from None
            log.warning("the index at %s is damaged (%s); rebuilding it from the files", path, exc)
        db.close()
        if attempt == 0:
            discard(index_dir, lock)
    raise StoreError(f"cannot open or rebuild the index at {path}")


def _refill_words(db: sqlite3.Connection) -> None:
    """An older schema (REFILLED) to this one: the word index gains each memory's date words
    (memcli.index.dates). It is filled again from the catalog's own rows, so labels, vectors and the
    graph stay (a rebuild would embed every memory again)."""
    log.warning("the word index is taking in each memory's date (once): %s memories",
                db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    db.create_function("mem_date_words", 1, date_words, deterministic=True)
    with transaction(db):
        db.execute("DROP TABLE fts")
        db.execute(FTS)
        db.execute("INSERT INTO fts (rowid, raw, tags, dated) SELECT label, json_extract(record, '$.raw'),"
                   " (SELECT group_concat(value, ' ') FROM json_each(memories.tags)), mem_date_words(created_at)"
                   " FROM memories")
        set_meta(db, "schema", UNCHECKED)


def _check_forms(db: sqlite3.Connection) -> None:
    """Schema 8 to this one: each compressed form gets the guard's verdict the catalog now records as
    it takes a file in (`verdict`), from the catalog's own rows, once."""
    log.warning("checking every compressed form against its raw text (once): %s memories",
                db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    with transaction(db):
        db.execute("ALTER TABLE memories ADD COLUMN served_raw TEXT")
        rows = db.execute("SELECT label, record FROM memories WHERE json_extract(record, '$.compressed') IS NOT NULL")
        db.executemany("UPDATE memories SET served_raw = ? WHERE label = ?",
                       [(verdict(**_form_of(record)), label) for label, record in rows.fetchall()])
        set_meta(db, "schema", SCHEMA_VERSION)


def _form_of(record: str) -> dict:
    data = json.loads(record)
    return {"raw": data["raw"], "form": data.get("compressed"), "compression": data.get("compression")}


def verdict(raw: str, form: str | None, compression: dict | None) -> str | None:
    """Why a memory's compressed form may not be served (it fails the guard: memcli.compress.pipeline.
    check_given), or None, as for a memory without one. A form still as the guard stamped it
    (memcli.compress.guard.seal) costs a hash, not a check."""
    if form is None:
        return None
    from memcli.compress.guard import seal

    method = (compression or {}).get("method")
    if (compression or {}).get("guarded") == seal(raw, form, method):
        return None  # the form the guard passed and stamped, unchanged since
    from memcli.compress.pipeline import check_given

    return check_given(raw, form, method)


def _add_index(db: sqlite3.Connection) -> None:
    """STAMP_INDEX in a catalog made before it (a no-op, without a lock, when it is there); a catalog that
    cannot take it now (read-only, or locked for long) goes on without it: it only makes a look faster."""
    try:
        db.execute(STAMP_INDEX)
    except sqlite3.OperationalError as exc:
        if is_damage(exc):
            raise
        log.debug("the catalog goes on without its stamp index: %s", exc)


def _is_cantopen(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorname", "") == "SQLITE_CANTOPEN"


def _make_folder(index_dir: Path) -> None:
    """The index folder; a file or a dangling link in its place is a damaged cache and goes."""
    try:
        if index_dir.is_symlink() or (index_dir.exists() and not index_dir.is_dir()):
            index_dir.unlink()
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create {index_dir}: {exc.strerror or exc}") from None


def discard(index_dir: Path, lock) -> None:
    """Delete the database and what depends on its labels (the graph file), whatever took their place."""
    with lock():
        for name in (FILE, FILE + "-wal", FILE + "-shm", FILE + "-journal", HNSW_FILE):
            remove(index_dir / name)


def remove(path: Path) -> None:
    """Delete a cache file, or a folder or link someone put in its place."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StoreError(f"cannot remove the damaged cache {path}: {exc.strerror or exc}") from None


def _schema_version(db: sqlite3.Connection) -> str | None:
    has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
    if not has_meta:
        # Empty: a new file. Tables without meta: a damaged one.
        return "unknown" if db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() else None
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    return row[0] if row else "unknown"


@contextlib.contextmanager
def transaction(db: sqlite3.Connection, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
    """All of the block or none of it. IMMEDIATE takes the write lock at once; DEFERRED (for a
    consistent read of several tables) takes none until a write."""
    db.execute(f"BEGIN {mode}")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # a COMMIT that failed (a full disk) has rolled back already
            db.execute("ROLLBACK")
        raise


def version(db: sqlite3.Connection) -> tuple[int, int]:
    """What changes whenever the database does, by this connection or by another process, so that what
    was computed from it can be kept until then."""
    return db.execute("PRAGMA data_version").fetchone()[0], db.total_changes


class Kept:
    """Values computed from the database, kept until it changes (by this connection or another process):
    a long-lived process (MCP, `mem search -`) computes each once per change, not once per query. A value
    whose computing writes is computed again next time (the write changed the version)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self._state: tuple[int, int] | None = None
        self._values: dict = {}

    def get(self, key, compute):
        state = version(self.db)
        if state != self._state:
            self._state, self._values = state, {}
        if key not in self._values:
            value = compute()
            if version(self.db) != state:
                return value
            self._values[key] = value
        return self._values[key]


def rows_in(db: sqlite3.Connection, sql: str, values: Sequence) -> Iterator[tuple]:
    """The rows of `sql` (which has one `IN ({marks})`) for any number of values, in chunks."""
    for start in range(0, len(values), IN_CHUNK):
        chunk = list(values[start:start + IN_CHUNK])
        # A list, not the cursor: abandoning this generator after the database closed must not close a
        # cursor of a closed database (an error nobody can catch, at garbage collection).
        yield from db.execute(sql.format(marks=",".join("?" * len(chunk))), chunk).fetchall()


def meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def meta_int(db: sqlite3.Connection, key: str) -> int | None:
    """A number kept in meta; one that does not parse reads as missing (the caller then rebuilds what it
    describes)."""
    try:
        return int(meta(db, key))
    except (TypeError, ValueError):
        return None


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

