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
        """Every intact record of this model's files (the last one wins when a text is there twice)."""
        import numpy as np

        loaded = Loaded()
        parts = []
        for path in sorted(self.folder.glob(f"*{SUFFIX}")) if self.folder.is_dir() else []:
            keys, vectors, problem = self._read(path)
            loaded.files += 1
            if problem:
                loaded.problems.append(f"{path.relative_to(self.store.root)}: {problem}")
                log.warning("ignored part of the vector cache %s: %s", path, problem)
            if keys:
                parts.append(vectors)
                base = loaded.records
                loaded.rows.update((key, base + n) for n, key in enumerate(keys))
                loaded.records += len(keys)
        loaded.matrix = np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)
        return loaded

    def _read(self, path: Path) -> tuple[list[bytes], object, str | None]:
        """(text keys, their vectors, what is wrong or None) of one file; only what passes every check."""
        import numpy as np

        try:
            data = path.read_bytes()
        except OSError as exc:
            return [], None, f"unreadable ({exc.strerror or exc})"
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
        try:
            path = self._own_file()
            if path is None:
                self._mkdir()
                path = self.folder / f"{_today()}-{secrets.token_hex(4)}{SUFFIX}"
                header = HEADER.pack(MAGIC, self.key, self.dim)
                records[:0] = header + zlib.crc32(header).to_bytes(4, "little")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, self.store.file_mode or 0o666)
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

    def _mkdir(self) -> None:
        mode = 0o700 if self.store.private else 0o777
        for folder in (self.folder.parent, self.folder):
            if not folder.is_dir():
                folder.mkdir(mode=mode, exist_ok=True)


def _today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


@dataclass
class Report:
    """`mem doctor`'s view of the cache: how many memories it covers, its size, what it ignored, and the
    sample checked against fresh embeddings (ids whose cached vector differs)."""

    total: int = 0
    hits: int = 0
    files: int = 0
    bytes: int = 0
    unused: int = 0
    problems: list[str] = field(default_factory=list)
    checked: int = 0
    mismatched: list[str] = field(default_factory=list)

    @property
    def hit_rate(self) -> float:
        return self.hits / self.total if self.total else 1.0


def check(catalog, embedder, sample: int = 0, *, agree: float = 0.99) -> Report:
    """Read every cache file of the embedder's model and count the memories it has a vector for; embed
    `sample` of those afresh and name the ones whose cached vector's cosine to the fresh one is below
    `agree` (float16 rounding moves it by far less)."""
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
    report.bytes = sum(path.stat().st_size for path in cache.folder.glob(f"*{SUFFIX}")) if cache.folder.is_dir() else 0
    chosen = random.sample(covered, min(sample, len(covered)))
    if chosen:
        fresh = np.asarray(embedder.embed([text for _, text, _ in chosen]), dtype=np.float32)
        for (memory_id, _, key), vector in zip(chosen, fresh):
            if float(loaded.get(key) @ vector) < agree:
                report.mismatched.append(memory_id)
        report.checked = len(chosen)
    return report
