"""The index's SQLite file: its schema, opening (and rebuilding when damaged), transactions.

This module owns the file. The catalog fills `memories`, `fts`, `broken`, `folders` and `links` (which
version supersedes which, from the files' `supersedes`; `memories.superseded_by` follows from it); the vector
index fills `vectors` and `hnsw_dead` and the graph file beside it, whose labels are the catalog's, so
throwing one away means throwing both away (`discard`).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path
from typing import Iterator, Sequence

from memcli.errors import StoreError

log = logging.getLogger("memcli")

SCHEMA_VERSION = "4"
FILE = "catalog.sqlite"
HNSW_FILE = "vectors.hnsw"
IN_CHUNK = 500  # SQLite allows 999 host parameters in older builds

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE memories (
    label INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    sha TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    tags TEXT NOT NULL,
    source TEXT,
    status TEXT,
    content_key TEXT NOT NULL,
    record TEXT NOT NULL,
    superseded_by TEXT
);
CREATE INDEX memories_created ON memories (created_at);
CREATE INDEX memories_content ON memories (content_key);
CREATE INDEX memories_superseded ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
CREATE TABLE links (old TEXT NOT NULL, new TEXT NOT NULL, PRIMARY KEY (old, new)) WITHOUT ROWID;
CREATE INDEX links_new ON links (new);
CREATE TABLE broken (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, error TEXT);
CREATE VIRTUAL TABLE fts USING fts5 (raw, tags, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE vectors (label INTEGER PRIMARY KEY, vec BLOB NOT NULL, in_hnsw INTEGER NOT NULL DEFAULT 0);
CREATE INDEX vectors_delta ON vectors (in_hnsw);
CREATE TABLE hnsw_dead (label INTEGER PRIMARY KEY);
CREATE TABLE folders (path TEXT PRIMARY KEY, mtime_ns INTEGER);
"""


def open_db(index_dir: Path, lock) -> sqlite3.Connection:
    """The index database, created when missing and made anew (with a warning) when damaged or of an
    older schema. `lock` is the store's lock (a context manager factory)."""
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create {index_dir}: {exc.strerror or exc}") from None
    path = index_dir / FILE
    for attempt in range(2):
        db = sqlite3.connect(path, timeout=60, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            version = _schema_version(db)
            if version == SCHEMA_VERSION:
                return db
            if version is None:
                with lock():
                    if _schema_version(db) is None:
                        with contextlib.suppress(FileNotFoundError):
                            (index_dir / HNSW_FILE).unlink()
                        db.executescript("BEGIN;" + SCHEMA + "COMMIT;")
                        db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                return db
        except sqlite3.DatabaseError as exc:
            log.warning("the index at %s is damaged (%s); rebuilding it from the files", path, exc)
        db.close()
        if attempt == 0:
            discard(index_dir, lock)
    raise StoreError(f"cannot open or rebuild the index at {path}")


def discard(index_dir: Path, lock) -> None:
    """Delete the database and what depends on its labels (the graph file)."""
    with lock():
        for name in (FILE, FILE + "-wal", FILE + "-shm", HNSW_FILE):
            with contextlib.suppress(FileNotFoundError):
                (index_dir / name).unlink()


def _schema_version(db: sqlite3.Connection) -> str | None:
    has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
    if not has_meta:
        return None
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
        db.execute("ROLLBACK")
        raise


def rows_in(db: sqlite3.Connection, sql: str, values: Sequence) -> Iterator[tuple]:
    """The rows of `sql` (which has one `IN ({marks})`) for any number of values, in chunks."""
    for start in range(0, len(values), IN_CHUNK):
        chunk = list(values[start:start + IN_CHUNK])
        yield from db.execute(sql.format(marks=",".join("?" * len(chunk))), chunk)


def meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

