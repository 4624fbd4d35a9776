"""Embeddings that travel with the memory files, so a clone or a pull is searchable without embedding.

Embedding is what makes an index slow to build (tens of memories a second on a laptop), so every vector
mem makes is also kept beside the memories, in `vectors/`, which a team commits with them. The index
build (a reindex, the first search of a clone, the catch-up after a pull) takes what it finds there and
embeds only the misses.

Layout: `vectors/<model key>/<day>-<random>.vec`. The model key names the embedding (the model file's
fingerprint, mem's method of embedding a memory, and the dimension), so another model's vectors are
never even opened. A clone appends only to a file it started itself, the same day, and only while the
file is exactly as it left it (`.index/` records which and its stat); otherwise it starts a new one. So
two people adding memories at once, or one person on two branches, never change the same file, and git
merges never conflict; a day's file is small, so a commit adds little to the repository.

A file is a header (magic, model key, dimension, CRC) and records: the first 16 bytes of the sha256 of
the text embedded, the vector as float16 (half the bytes; cosines move by ~1e-3 at most), and a CRC of
the record. A record whose CRC fails, a truncated tail, a header of another model or dimension, or a
vector that is not unit length is never used; the file is reported (doctor) and what is intact in it
still serves. The cache is only ever a cache: without it everything works, it only costs embedding time.

The files come from git, so whoever can commit writes them. Only regular files in real folders are
read (a committed link to /dev/zero, a FIFO or a device is reported, never opened), each up to
MAX_FILE_BYTES. A text whose vector differs between two files is taken from neither (it is embedded
afresh), so a forged file cannot outvote the real one by sorting last; `mem doctor` names both files
and checks a few vectors of every file against fresh embeddings, which finds a file forged whole.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import struct
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("memcli")

FOLDER = "vectors"
SUFFIX = ".vec"
MAGIC = b"MEMVEC1\n"
HEADER = struct.Struct("<8s16sI")  # magic, model key, dimension; then the CRC of these bytes
HEADER_SIZE = HEADER.size + 4
KEY_BYTES = 16
APPENDING_FILE = "vectors-appending"  # in .index/: the cache file this clone appends to, and its stat
UNIT_TOLERANCE = 1e-2  # a stored vector's norm must be 1 within this (float16 rounding stays far below)
AGREE = 0.99  # two vectors of one text agree above this cosine (float16 rounding moves it by far less)
MAX_FILE_BYTES = 256 << 20  # a day's file of one clone: some 300,000 vectors of 384 dimensions
CHECKED_PER_FILE = 2  # vectors of each file that doctor embeds afresh to compare


def text_key(text: str) -> bytes:
    """What a vector is filed under: the text that was embedded, hashed (a changed text is a miss)."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:KEY_BYTES]


def model_key(model_id: str, dim: int) -> bytes:
    """The embedding's identity without the name a store gives its model (two clones may name the same
    file differently): the model file's fingerprint and mem's method, with the dimension."""
    identity = model_id.partition("@")[2] or model_id
    return hashlib.sha256(f"{identity}/{dim}".encode()).digest()[:KEY_BYTES]


def record_size(dim: int) -> int:
    return KEY_BYTES + 2 * dim + 4


@dataclass
class Loaded:
    """The cached vectors of one model: text key -> row of `matrix` (float32), and what was wrong."""

    rows: dict[bytes, int] = field(default_factory=dict)
    matrix: object = None
    files: int = 0
    records: int = 0
    problems: list[str] = field(default_factory=list)  # "<file>: what is wrong", one per damaged file
    rows_of: dict[str, list[tuple[bytes, int]]] = field(default_factory=dict)  # file -> its (text key, row)s

    def get(self, key: bytes):
        row = self.rows.get(key)
        return None if row is None else self.matrix[row]


class VectorCache:
    """The `vectors/` folder of one store, for one embedding (model key and dimension)."""

    def __init__(self, store, model_id: str, dim: int):
        self.store = store
        self.dim = dim
        self.key = model_key(model_id, dim)
        self.folder = Path(store.root) / FOLDER / self.key.hex()

    # -- reading ------------------------------------------------------------------------------------

    def load(self) -> Loaded:
        """Every intact record of this model's files; a text two files give different vectors is left out."""
        import numpy as np

        loaded = Loaded()
        parts: list[tuple[str, list[bytes], object]] = []
        for path, problem in self._files():
            name = str(path.relative_to(self.store.root))
            keys, vectors = [], None
            if problem is None:
                keys, vectors, problem = self._read(path)
            loaded.files += 1
            if problem:
                loaded.problems.append(f"{name}: {problem}")
                log.warning("ignored part of the vector cache %s: %s", path, problem)
            if keys:
                parts.append((name, keys, vectors))
        loaded.matrix = (np.concatenate([vectors for _, _, vectors in parts]) if parts
                         else np.zeros((0, self.dim), dtype=np.float32))
        owner: dict[bytes, str] = {}
        disputed: dict[tuple[str, str], int] = {}
        for name, keys, _ in parts:
            for key in keys:
                row = loaded.records
                loaded.records += 1
                loaded.rows_of.setdefault(name, []).append((key, row))
                earlier = loaded.rows.get(key)
                if earlier == -1:
                    continue
                if earlier is not None and float(loaded.matrix[earlier] @ loaded.matrix[row]) < AGREE:
                    pair = (owner[key], name)
                    disputed[pair] = disputed.get(pair, 0) + 1
                    loaded.rows[key] = -1  # neither: embedded afresh
                else:
                    loaded.rows[key], owner[key] = row, name
        loaded.rows = {key: row for key, row in loaded.rows.items() if row >= 0}
        for (first, second), count in disputed.items():
            problem = f"{second}: {count} vectors differ from {first}'s for the same texts (neither is used)"
            loaded.problems.append(problem)
            log.warning("ignored part of the vector cache: %s", problem)
        return loaded

    def _files(self) -> list[tuple[Path, str | None]]:
        """This model's cache files, each with what stops it being read (None: nothing). Links, FIFOs and
        devices are named, never opened: a link to /dev/zero would be read for ever, a FIFO never ends."""
        root = Path(self.store.root)
        for folder in (root / FOLDER, self.folder):
            if folder.is_symlink():
                return [(folder, "a link, not a folder: not read")]
            if os.path.lexists(folder) and not folder.is_dir():
                return [(folder, "not a folder (a file, a FIFO or a device): not read")]
        try:
            entries = sorted(os.scandir(self.folder), key=lambda entry: entry.name)
        except OSError:
            return []
        return [(Path(entry.path), None if entry.is_file(follow_symlinks=False)
                 else "not a regular file (a link, a FIFO or a device): not read")
                for entry in entries if entry.name.endswith(SUFFIX)]

    def _read(self, path: Path) -> tuple[list[bytes], object, str | None]:
        """(text keys, their vectors, what is wrong or None) of one file; only what passes every check."""
        import numpy as np

        try:
            data = _regular_bytes(path)
        except OSError as exc:
            return [], None, f"unreadable ({exc.strerror or exc})"
        except ValueError as exc:
            return [], None, str(exc)
        if len(data) < HEADER_SIZE:
            return [], None, "shorter than its header"
        magic, key, dim = HEADER.unpack_from(data)
        (crc,) = struct.unpack_from("<I", data, HEADER.size)
        if magic != MAGIC or crc != zlib.crc32(data[:HEADER.size]):
            return [], None, "not a vector cache file, or its header is damaged"
        if key != self.key or dim != self.dim:
            return [], None, "made by another model or of another dimension"
        size = record_size(dim)
        body = memoryview(data)[HEADER_SIZE:]
        count, tail = divmod(len(body), size)
        good = [n for n in range(count)
                if zlib.crc32(body[n * size:(n + 1) * size - 4]) == int.from_bytes(body[(n + 1) * size - 4:(n + 1) * size], "little")]
        records = np.frombuffer(body[:count * size], dtype=np.uint8).reshape(count, size)[good]
        vectors = records[:, KEY_BYTES:KEY_BYTES + 2 * dim].copy().view("<f2").astype(np.float32)
        unit = np.abs(np.linalg.norm(vectors, axis=1) - 1) <= UNIT_TOLERANCE if len(good) else np.zeros(0, bool)
        keys = [bytes(records[n, :KEY_BYTES]) for n in range(len(good)) if unit[n]]
        wrong = []
        if len(good) < count:
            wrong.append(f"{count - len(good)} of {count} records damaged")
        if not unit.all():
            wrong.append(f"{int((~unit).sum())} vectors not of unit length")
        if tail:
            wrong.append(f"truncated ({tail} bytes of a partial record at its end)")
        return keys, vectors[unit], "; ".join(wrong) or None

    # -- writing ------------------------------------------------------------------------------------

    def append(self, texts: list[str], vectors) -> None:
        """Add the vectors of these texts to this clone's file (the caller holds the store lock, so no
        other process of this clone appends meanwhile). Failing to write the cache never fails the write:
        the index has the vectors, and the cache is only a cache."""
        import numpy as np

        if not texts:
            return
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)
        records = bytearray()
        for text, vector in zip(texts, vectors):
            record = text_key(text) + vector.astype("<f2").tobytes()
            records += record + zlib.crc32(record).to_bytes(4, "little")
        if any(folder.is_symlink() for folder in (Path(self.store.root) / FOLDER, self.folder)):
            log.warning("the vector cache was not updated (its folder is a link, which mem does not follow)")
            return
        try:
            path = self._own_file()
            if path is None:
                self.store.make_dir(self.folder)
                path = self.folder / f"{_today()}-{secrets.token_hex(4)}{SUFFIX}"
                header = HEADER.pack(MAGIC, self.key, self.dim)
                records[:0] = header + zlib.crc32(header).to_bytes(4, "little")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0),
                         self.store.file_mode or 0o666)
            with os.fdopen(fd, "wb") as handle:
                handle.write(records)
            self._appended(path)
        except OSError as exc:
            log.warning("the vector cache was not updated (%s); the index has the vectors", exc.strerror or exc)

    def _own_file(self) -> Path | None:
        """The file this clone appends to: the one it started, while it is exactly as this clone left it
        (same day, size and mtime); else None (start a new one). So a file changes in one line of history
        only: after a checkout of another branch, or a pull that changed it, the next append starts a new
        file, and the branches merge without touching the same file; and a tail cut by a crash mid-append
        is never appended to (readers ignore that part record)."""
        record = Path(self.store.index_dir) / APPENDING_FILE
        try:
            name, size, mtime_ns = record.read_text(encoding="utf-8").split()
            path = self.folder / name
            info = path.stat()
            if name.startswith(_today()) and (info.st_size, info.st_mtime_ns) == (int(size), int(mtime_ns)):
                return path
        except (OSError, ValueError, UnicodeDecodeError):
            pass
        return None

    def _appended(self, path: Path) -> None:
        info = path.stat()
        record = Path(self.store.index_dir) / APPENDING_FILE
        fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, self.store.file_mode or 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f"{path.name} {info.st_size} {info.st_mtime_ns}\n")
        self.store.protect(record)


def _regular_bytes(path: Path) -> bytes:
    """The bytes of a regular file, opened without following a link and without waiting on a FIFO put in
    its place meanwhile; ValueError when it is not one or is larger than MAX_FILE_BYTES."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(path, flags), "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file (a link, a FIFO or a device): not read")
        if info.st_size > MAX_FILE_BYTES:
            raise ValueError(f"larger than {MAX_FILE_BYTES >> 20} MB: not read")
        return handle.read(info.st_size)


def _today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


@dataclass
class Report:
    """`mem doctor`'s view of the cache: how many memories it covers, its size, what it ignored, the files
    whose vectors differ from fresh embeddings of their texts, and the sample checked (ids whose cached
    vector differs)."""

    total: int = 0
    hits: int = 0
    files: int = 0
    bytes: int = 0
    unused: int = 0
    problems: list[str] = field(default_factory=list)
    forged: list[str] = field(default_factory=list)  # "<file>: how many of its checked vectors differ"
    checked: int = 0
    mismatched: list[str] = field(default_factory=list)

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 1.0


def check(catalog, embedder, sample: int = 0, *, agree: float = AGREE) -> Report:
    """Read every cache file of the embedder's model and count the memories it has a vector for; embed
    afresh CHECKED_PER_FILE vectors of every file (named in `forged` when one differs) and `sample` more
    at random (their memories named in `mismatched`): a vector differs when its cosine to the fresh one
    is below `agree` (float16 rounding moves it by far less)."""
    import random

    import numpy as np

    cache = VectorCache(catalog.store, embedder.model_id, embedder.dim)
    with catalog.store.lock():
        loaded = cache.load()
    memories = [(memory_id, text, text_key(text)) for memory_id, text in
                catalog.db.execute("SELECT id, json_extract(record, '$.raw') FROM memories")]
    covered = [(memory_id, text, key) for memory_id, text, key in memories if key in loaded.rows]
    report = Report(total=len(memories), hits=len(covered), files=loaded.files, problems=loaded.problems,
                    unused=len(set(loaded.rows) - {key for _, _, key in memories}))
    report.bytes = sum(path.lstat().st_size for path, problem in cache._files() if problem is None)
    text_of = {key: text for _, text, key in memories}
    pools = {name: [(key, row) for key, row in rows if key in text_of] for name, rows in loaded.rows_of.items()}
    per_file = [(name, key, row) for name, pool in pools.items()
                for key, row in random.sample(pool, min(CHECKED_PER_FILE, len(pool)))]
    chosen = random.sample(covered, min(sample, len(covered)))
    checks = [(key, row) for _, key, row in per_file] + [(key, loaded.rows[key]) for _, _, key in chosen]
    if not checks:
        return report
    fresh = np.asarray(embedder.embed([text_of[key] for key, _ in checks]), dtype=np.float32)
    differs = [float(loaded.matrix[row] @ vector) < agree for (_, row), vector in zip(checks, fresh)]
    for name in dict.fromkeys(name for name, _, _ in per_file):
        results = [wrong for (file, _, _), wrong in zip(per_file, differs) if file == name]
        if any(results):
            report.forged.append(f"{name}: {sum(results)} of {len(results)} vectors checked differ from fresh "
                                 "embeddings of their texts")
    report.mismatched = [memory_id for (memory_id, _, _), wrong in zip(chosen, differs[len(per_file):]) if wrong]
    report.checked = len(chosen)
    return report
