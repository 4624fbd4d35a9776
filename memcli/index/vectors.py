"""Meaning search: one embedding per memory, in SQLite (the durable copy) and an hnswlib graph.

Rewriting the hnsw file on every `mem add` would cost ~0.5 s at 100k memories, so new vectors wait
in the catalog ("the delta", in_hnsw = 0) and are searched by brute force next to the graph; once
the delta or the set of deleted labels grows past FOLD_AT, the next reader folds them into the file
under the lock and replaces it atomically. The file can always be rebuilt from the stored vectors,
and the vectors from the files, so losing either costs time, never memories.

Every vector comes from one model: the catalog records its id, and a different model means all
vectors are dropped and made again, never mixed.

The graph file is tied to the catalog state it was built from: each fold records the file's size,
mtime, ctime, inode and CRC-32 in the catalog. hnswlib trusts its file (a few damaged bytes crash the
process), so it only ever loads a file whose stat is exactly the recorded one; a file whose stat moved
(a restored backup, a copy, a write of any kind) is checked by its CRC before every other step, and
one that does not match, or that is not there although the catalog says vectors are in it, is thrown
away: its vectors go back to the delta (searched by brute force) and the next fold rebuilds it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass
from typing import Iterable

from memcli.index import db as db_file
from memcli.index import graph_file
from memcli.index.catalog import Catalog
from memcli.store.memory import is_local
from memcli.util.fsutil import sibling_temp
from memcli.util.progress import Progress

log = logging.getLogger("memcli")

FOLD_AT = 2000
EMBED_BATCH = 64
CACHED_BATCH = 5000  # vectors from the cache stored per transaction (a lock held for a fraction of a second)



@dataclass
class Synced:
    """What a sync gave vectors to: taken from the vector cache, embedded."""

    cached: int = 0
    embedded: int = 0


class VectorIndex:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.cache_problems: list[str] = []  # what the last sync found wrong in the vector cache
        self.path = catalog.store.index_dir / db_file.HNSW_FILE
        self._graph = None
        self._graph_stamp = None

    @property
    def db(self):
        return self.catalog.db

    def _meta(self, key: str) -> str | None:
        return db_file.meta(self.db, key)

    def _set_meta(self, key: str, value: str) -> None:
        db_file.set_meta(self.db, key, value)

    # -- keeping vectors in step with the catalog --------------------------------------------------

    def in_step(self, embedder) -> bool:
        """Same model, and a vector for every memory (vectors ⊆ memories by construction). Kept until the
        index changes: counting both tables is asked before every search, and costs more the larger the
        store."""
        return self.catalog.kept.get(("in step", embedder.model_id),
                                     lambda: self.adopted(embedder) and not self.missing())

    def adopted(self, embedder) -> bool:
        """Whether the stored vectors are this model's (its id and its dimension, which a damaged meta row
        could contradict)."""
        return self._meta("embed_model") == embedder.model_id and db_file.meta_int(self.db, "embed_dim") == embedder.dim

    def missing(self) -> int:
        """How many memories have no vector yet (meaning search cannot find them until the next sync)."""
        counts = self.db.execute("SELECT (SELECT COUNT(*) FROM memories), (SELECT COUNT(*) FROM vectors)").fetchone()
        return counts[0] - counts[1]

    def sync(self, embedder, progress: Progress | None = None) -> Synced:
        """Give a vector to every memory that has none (all of them after a model change): from the vector
        cache that travels with the files (memcli.index.vector_cache) when it has the text, else embedded,
        in batches, and added to the cache.

        The embedding itself runs outside the lock (it can take minutes after a big `git pull`); only
        storing each batch takes it, so writers in other processes are never held up for long."""
        from memcli.index.vector_cache import VectorCache, text_key

        if self.in_step(embedder):
            return Synced()
        with self.catalog.store.lock():
            with db_file.transaction(self.db):
                self._adopt(embedder)
        missing = self.db.execute(
            "SELECT m.label, json_extract(m.record, '$.raw'), m.path FROM memories m"
            " LEFT JOIN vectors v ON v.label = m.label WHERE v.label IS NULL ORDER BY m.label").fetchall()
        if not missing:
            return Synced()
        cache = VectorCache(self.catalog.store, embedder.model_id, embedder.dim)
        with self.catalog.store.lock():  # no half-appended record of this clone's other processes is read
            loaded = cache.load()
        self.cache_problems = loaded.problems
        found = [(label, loaded.get(text_key(text))) for label, text, _ in missing]
        hits = [(label, vector) for label, vector in found if vector is not None]
        misses = [(label, text, path) for (label, text, path), (_, vector) in zip(missing, found) if vector is None]
        done = Synced()
        for start in range(0, len(hits), CACHED_BATCH):
            batch = hits[start:start + CACHED_BATCH]
            if not self._store_batch(embedder, [label for label, _ in batch], [vector for _, vector in batch]):
                return done
            done.cached += len(batch)
            if progress:
                progress("vectors from the cache", done.cached, len(hits))
        for start in range(0, len(misses), EMBED_BATCH):
            batch = misses[start:start + EMBED_BATCH]
            texts = [text for _, text, _ in batch]
            vectors = embedder.embed(texts)
            shared = [n for n, (_, _, path) in enumerate(batch) if not is_local(path)]  # the cache is committed
            to_cache = (cache, [texts[n] for n in shared], vectors[shared]) if shared else None
            if not self._store_batch(embedder, [label for label, _, _ in batch], vectors, to_cache):
                return done
            done.embedded += len(batch)
            if progress:
                progress("embedding memories", done.embedded, len(misses))
        return done

    def _store_batch(self, embedder, labels: list[int], vectors, to_cache=None) -> bool:
        """Store a batch of vectors (and add freshly embedded ones to the cache: (cache, texts, vectors));
        False when another process moved to another model meanwhile (its sync goes on)."""
        with self.catalog.store.lock():
            if not self.adopted(embedder):
                return False
            with db_file.transaction(self.db):
                self._insert(labels, vectors)
            if to_cache:
                to_cache[0].append(to_cache[1], to_cache[2])
        return True

    def _adopt(self, embedder) -> None:
        """Make embedder's model the store's: a different one drops every vector (never mix two models)."""
        if self.adopted(embedder):
            return
        if self._meta("embed_model") not in (None, embedder.model_id):
            log.warning("the embedding changed (%s → %s); re-embedding every memory",
                        self._meta("embed_model"), embedder.model_id)
        self._drop_all()
        self._set_meta("embed_model", embedder.model_id)
        self._set_meta("embed_dim", str(embedder.dim))

    def add(self, label: int, text: str, vector, embedder, *, cache: bool = True) -> None:
        """Store the vector of a memory just written, in the index and (unless `cache` is off: a memory that
        stays on this machine) in the vector cache, which is committed (the caller holds the lock)."""
        from memcli.index.vector_cache import VectorCache

        if self._meta("embed_model") not in (None, embedder.model_id):
            return  # the next sync re-embeds everything with the new model, this one included
        with db_file.transaction(self.db):
            self._adopt(embedder)
            self._insert([label], vector.reshape(1, -1))
        if cache:
            VectorCache(self.catalog.store, embedder.model_id, embedder.dim).append([text], vector.reshape(1, -1))

    def _insert(self, labels: list[int], vectors) -> None:
        """Store vectors of memories that still exist (one may have been deleted while it was embedded)."""
        import numpy as np

        rows = [(label, np.asarray(vec, dtype=np.float32).tobytes()) for label, vec in zip(labels, vectors)]
        self.db.executemany("INSERT OR REPLACE INTO vectors (label, vec, in_hnsw)"
                            " SELECT ?1, ?2, 0 WHERE EXISTS (SELECT 1 FROM memories WHERE label = ?1)", rows)

    def _drop_all(self) -> None:
        self.db.execute("DELETE FROM vectors")
        self._forget_file()

    def _forget_file(self) -> None:
        """Delete the graph file; every stored vector is searched by brute force until the next fold."""
        self.db.execute("UPDATE vectors SET in_hnsw = 0 WHERE in_hnsw = 1")
        self.db.execute("DELETE FROM hnsw_dead")
        self.db.execute("DELETE FROM meta WHERE key IN ('hnsw_file', 'hnsw_deleted')")
        self._graph = None
        db_file.remove(self.path)

    # -- the graph file is the one the catalog recorded --------------------------------------------

    def check_file(self, *, deep: bool = False) -> str | None:
        """Throw the graph file away (with a warning) unless it is the one the last fold recorded, or
        when it is missing while the catalog says vectors are in it; returns what was wrong. Cheap when
        its stat is unchanged, unless `deep` (doctor), which checks the CRC whatever the stat says."""
        if not deep and self._file_state() == "ok":
            return None
        with self.catalog.store.lock():
            # Again under the lock: another process may have folded meanwhile.
            state = self._file_state(checksum=True, deep=deep)
            if state in ("ok", "none"):
                return None
            if state != "verified":
                log.warning("the vector index %s is %s; rebuilding it from the stored vectors", self.path, state)
            with db_file.transaction(self.db):
                if state == "verified":
                    self._set_meta("hnsw_file", json.dumps(graph_file.file_record(self.path, self._recorded()["crc"])))
                else:
                    self._forget_file()
        return None if state == "verified" else state

    def _recorded(self) -> dict | None:
        try:
            record = json.loads(self._meta("hnsw_file") or "null")
            return record if isinstance(record, dict) and isinstance(record.get("crc"), int) else None
        except ValueError:
            return None

    def _file_state(self, *, checksum: bool = False, deep: bool = False) -> str:
        """"ok" (the recorded file, by stat), "verified" (its stat moved but its CRC is the recorded one),
        "none" (no file, and none expected), else what is wrong with it."""
        record = self._recorded()
        stat = graph_file.stat_record(self.path)
        if stat is None:
            in_file = self.db.execute("SELECT 1 FROM vectors WHERE in_hnsw = 1 LIMIT 1").fetchone()
            return "missing" if in_file or record else "none"
        if record is None:
            return "not recorded in the catalog"
        if all(record.get(key) == value for key, value in stat.items()) and not deep:
            return "ok"
        if record.get("size") != stat["size"]:
            return "not the file the catalog recorded (its size differs)"
        if not checksum:
            return "changed"
        if graph_file.crc(self.path) != record["crc"]:
            return "damaged (its checksum differs)"
        return "ok" if deep and all(record.get(key) == value for key, value in stat.items()) else "verified"

    # -- folding the delta into the graph ----------------------------------------------------------

    def maybe_fold(self, progress: Progress | None = None) -> None:
        """Check the graph file and fold a large delta; once per change of the index (a graph file whose
        stat moved meanwhile is checked again before a query loads it, and a loaded graph was checked). The
        first search of a clone builds the whole graph here: `progress` says so."""
        self.catalog.kept.get("folded", lambda: self._maybe_fold(progress))

    def _maybe_fold(self, progress: Progress | None) -> None:
        self.check_file()
        delta, dead = self.db.execute(
            "SELECT (SELECT COUNT(*) FROM vectors WHERE in_hnsw = 0), (SELECT COUNT(*) FROM hnsw_dead)").fetchone()
        if delta >= FOLD_AT or dead >= FOLD_AT:
            self.fold(progress)

    def fold(self, progress: Progress | None = None) -> None:
        """Write every stored vector into the hnsw file (from scratch when it is missing or bad).

        The graph is built from a snapshot outside the lock (a minute or more at 100k memories); the lock
        is taken only to check that no other process folded meanwhile and to swap the file in."""
        import numpy as np

        dim = db_file.meta_int(self.db, "embed_dim") or 0
        if not dim:
            return
        stamp = graph_file.stamp(self.path)
        graph = self._load_graph(dim)
        fresh = graph is None
        with db_file.transaction(self.db, "DEFERRED"):
            rows = self.db.execute("SELECT label, vec FROM vectors" + ("" if fresh else " WHERE in_hnsw = 0")).fetchall()
            dead = [] if fresh else [label for (label,) in self.db.execute("SELECT label FROM hnsw_dead")]
            marked = 0 if fresh else db_file.meta_int(self.db, "hnsw_deleted") or 0
        if fresh:
            graph = graph_file.new_graph(dim, max(1024, len(rows)))
        for label in dead:
            with contextlib.suppress(RuntimeError):
                graph.mark_deleted(label)
                marked += 1
        if rows:
            needed = graph.element_count + len(rows)
            if needed > graph.max_elements:
                graph.resize_index(max(needed, int(graph.max_elements * 1.5)))
            for start in range(0, len(rows), 5000):
                chunk = rows[start:start + 5000]
                data = np.frombuffer(b"".join(vec for _, vec in chunk), dtype=np.float32).reshape(len(chunk), dim)
                graph.add_items(data, [label for label, _ in chunk])
                if progress:
                    progress("building the vector graph", min(start + 5000, len(rows)), len(rows))
        tmp = sibling_temp(self.path)
        try:
            graph.save_index(str(tmp))
            self.catalog.store.protect(tmp)
            crc = graph_file.crc(tmp)
            with self.catalog.store.lock():
                if graph_file.stamp(self.path) != stamp:
                    # Another process folded first; its file holds what this one would have written.
                    tmp.unlink()
                    self._graph = None
                    return
                os.replace(tmp, self.path)
                with db_file.transaction(self.db):
                    self._folded([label for label, _ in rows], dead, marked, fresh)
                    self._set_meta("hnsw_file", json.dumps(graph_file.file_record(self.path, crc)))
        finally:
            db_file.remove(tmp)
        self._graph, self._graph_stamp = graph, graph_file.stamp(self.path)

    def _folded(self, added: list[int], dead: list[int], marked: int, fresh: bool) -> None:
        """Record a fold: what went into the file, what it marks deleted. A memory deleted while the graph
        was built is in the file unmarked, so it waits in hnsw_dead for the next fold."""
        if fresh:
            self.db.execute("DELETE FROM hnsw_dead")
            self.db.execute("UPDATE vectors SET in_hnsw = 0")
        for start in range(0, max(len(added), len(dead)), 500):
            for labels, sql in ((added[start:start + 500], "UPDATE vectors SET in_hnsw = 1 WHERE label IN ({})"),
                                (dead[start:start + 500], "DELETE FROM hnsw_dead WHERE label IN ({})")):
                if labels:
                    self.db.execute(sql.format(",".join("?" * len(labels))), labels)
        gone = set(added) - {label for (label,) in self.db.execute("SELECT label FROM vectors WHERE in_hnsw = 1")}
        self.db.executemany("INSERT OR IGNORE INTO hnsw_dead VALUES (?)", [(label,) for label in gone])
        self._set_meta("hnsw_deleted", str(marked))

    def _load_graph(self, dim: int):
        """The graph, only when the file is exactly the one the catalog recorded (else None: the caller
        searches the stored vectors by brute force, or folds from scratch)."""
        import hnswlib

        stamp = graph_file.stamp(self.path)
        if stamp is None or self._file_state() != "ok":
            return None
        if self._graph is not None and self._graph_stamp == stamp:
            return self._graph
        graph = hnswlib.Index(space="cosine", dim=dim)
        try:
            graph.load_index(str(self.path))
        except (RuntimeError, ValueError, OSError) as exc:
            log.warning("the vector index %s is damaged (%s); rebuilding it", self.path, exc)
            return None
        if graph.dim != dim:
            return None
        self._graph, self._graph_stamp = graph, stamp
        return graph

    # -- querying ----------------------------------------------------------------------------------

    def load(self) -> None:
        """Import numpy and load the graph now (a query would), so that a query made later costs only itself."""
        import numpy  # noqa: F401

        dim = db_file.meta_int(self.db, "embed_dim")
        if dim:
            self._load_graph(dim)

    def query(self, vector, k: int, allowed: set[int] | None = None,
              skip: set[int] = frozenset()) -> list[tuple[int, float]]:
        """The k nearest labels by cosine similarity, best first; `allowed` restricts them (filters), `skip`
        leaves some out (superseded versions: few, so cheaper to skip than to list what is allowed)."""
        import numpy as np

        if allowed is not None and len(allowed) <= FOLD_AT:
            # Exact and faster than the graph when the filters leave few candidates.
            with db_file.transaction(self.db, "DEFERRED"):
                dim = db_file.meta_int(self.db, "embed_dim") or 0
                labels, matrix = graph_file.matrix(self._vectors_for(allowed), dim)
            dead, marked, graph = set(), 0, None
        else:
            labels, matrix, dead, marked, graph = self.catalog.kept.get("searched", self._searched)
            dead = dead | skip
        if matrix is None:
            return []
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        scores: dict[int, float] = {}
        if labels:
            sims = matrix @ vector
            for i in np.argsort(-sims):
                if (allowed is None or labels[i] in allowed) and labels[i] not in skip:
                    scores[labels[i]] = float(sims[i])
                    if len(scores) == k:
                        break
        if graph is not None:
            fetch = min(k + len(dead), graph.element_count - marked)
            if fetch > 0:
                graph.set_ef(max(64, fetch * 2))
                accept = (lambda label: label in allowed) if allowed is not None else None
                for label, similarity in graph_file.knn(graph, vector, fetch, accept):
                    if label not in dead:
                        scores.setdefault(label, similarity)
        return sorted(scores.items(), key=lambda item: -item[1])[:k]

    def _searched(self) -> tuple:
        """What an unfiltered query searches, read in one transaction: (labels and matrix of the vectors
        searched by brute force, labels the graph holds but marks deleted, how many, the graph). The
        delta is read before the graph: a fold in between can only duplicate a label, never lose it. The
        file is checked first: one whose stat moved since the last check would else be searched around
        by brute force for as long as this is kept."""
        self.check_file()
        with db_file.transaction(self.db, "DEFERRED"):
            dim = db_file.meta_int(self.db, "embed_dim") or 0
            rows = self.db.execute("SELECT label, vec FROM vectors WHERE in_hnsw = 0").fetchall()
            dead = {label for (label,) in self.db.execute("SELECT label FROM hnsw_dead")}
            marked = db_file.meta_int(self.db, "hnsw_deleted") or 0
            graph = self._load_graph(dim) if dim else None
            if dim and graph is None and self.db.execute("SELECT 1 FROM vectors WHERE in_hnsw = 1 LIMIT 1").fetchone():
                rows = self.db.execute("SELECT label, vec FROM vectors").fetchall()
        return (*graph_file.matrix(rows, dim), dead, marked, graph)

    def _vectors_for(self, labels: Iterable[int]) -> list:
        return list(db_file.rows_in(self.db, "SELECT label, vec FROM vectors WHERE label IN ({marks})", list(labels)))
