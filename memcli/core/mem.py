"""The library behind the CLI and the MCP server: everything a command does, nothing it prints.

`Mem` ties the store (files), the index (caches) and the providers (models) together and keeps the
promises the commands make: no lost write, no half file, no guess on an ambiguous id. Every write
(add, edit, import, ingest, MCP) goes through one pipeline, `commit`: the gate (redaction, denylist)
has been passed, then the duplicate test, compression, embedding and the file under the store lock.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from memcli.core.compressing import Compressing
from memcli.errors import (
    InputError,
    MemError,
    NotFound,
    StoreError,
    describe,
)
from memcli.index.catalog import Catalog
from memcli.index.filters import Filters
from memcli.privacy.gate import Gate
from memcli.providers import Providers
from memcli.store import ids
from memcli.store.files import Store, find_store
from memcli.store.memory import (
    Memory,
    check_text,
    clean_input,
    content_key,
    normalise_tags,
    now_utc,
)
from memcli.util import forked

log = logging.getLogger("memcli")


# What -vv says of a one-shot search's child (and tests look for).
CHILD_EMBEDDED = "a child process embedded the query meanwhile"
WAITING_FOR_CHILD = "waiting for the child process embedding the query"
LOOKING_AHEAD = "another child process looks at every file while the vector graph loads"


@dataclass(frozen=True)
class QueryVector:
    """A query's vector with the identity of the model that made it (what VectorIndex.adopted asks)."""

    model_id: str
    dim: int
    vector: list[float]  # not an array: unpickling one would import numpy before the graph is loaded


@dataclass
class AddResult:
    memory: Memory
    duplicate: bool = False
    redacted: dict[str, int] = field(default_factory=dict)  # secrets replaced, by kind
    tags_added: list[str] = field(default_factory=list)  # new tags merged into the duplicate already stored


class Mem:
    def __init__(self, store: Store, providers: Providers | None = None):
        self.store = store
        self._local = providers  # None: llama.cpp in this process (memcli.core.engines.local)
        self._providers: Providers | None = None
        self.catalog = Catalog(store)
        self.created_store = False
        self._vectors = None
        self._embedder = None
        self._embed_failed = False
        self._counter = None
        self.gitignore = True  # .gitignore counts in the denylist; a command's --no-gitignore turns it off

    @classmethod
    def open(cls, explicit_dir: Path | None = None, providers: Providers | None = None) -> "Mem":
        return cls(Store(find_store(explicit_dir)), providers)

    @property
    def settings(self):
        return self.store.settings

    @property
    def providers(self) -> Providers:
        """The models, with compression sent to the server mem.yaml's `provider` names, if any."""
        if self._providers is None:
            from memcli.core import engines

            self._providers = engines.with_provider(self._local or engines.local(), self.settings,
                                                    self.store.index_dir)
        return self._providers

    @property
    def vectors(self):
        if self._vectors is None:
            from memcli.index.vectors import VectorIndex

            self._vectors = VectorIndex(self.catalog)
        return self._vectors

    def embedder(self):
        """The embedding model, loaded once per process (MCP and `mem search -` reuse it), as it embeds
        memories (memcli.index.sentence_vectors) and queries."""
        if self._embedder is None:
            from memcli.index.sentence_vectors import MemoryEmbedder

            self._embedder = MemoryEmbedder(self.providers.embedder(self.settings.embed_model))
        return self._embedder

    def token_counter(self):
        """`count(text) -> int` with the compression model's tokenizer, loaded once per process."""
        if self._counter is None:
            self._counter = self.providers.token_counter(self.settings.compress_model)
        return self._counter

    def cheap_counter(self, *, batch: bool):
        """The token counter when it costs no model load per memory: already loaded (a long-lived MCP
        server, a write that compressed), or worth loading once for a batch (import, ingest); else None.
        A single short `mem add` is not made to load a model just to count."""
        if self._counter is None and batch:
            try:
                self.token_counter()
            except Exception as exc:  # the count is a convenience: reads count what was not stored
                log.debug("token counts not stored: %s", describe(exc))
        return self._counter

    @property
    def home(self) -> Path:
        """The folder the store speaks for: the project around a `.mem/` store, else the store's own folder.
        Its `.memignore` is the store's denylist, and `mem ingest` writes sources relative to it."""
        root = self.store.root
        return root.parent if root.name == ".mem" else root

    @property
    def gate(self) -> Gate:
        return Gate(self.home, self.settings.redact, self.gitignore)

    def refresh(self, patience: float = 1) -> None:
        """Catch up with the files. A one-shot command looks once; a long-lived process (the MCP server)
        calls this before each request so it sees what other processes, an editor or git changed
        (Catalog.catch_up says how, and how cheaply, and what `patience` defers)."""
        if self.store.exists:
            self.catalog.catch_up(patience)

    def readable(self) -> bool:
        """A store that does not exist yet reads as empty, and reading it creates nothing."""
        if not self.store.exists:
            return False
        self.catalog.refresh()
        return True

    def ensure_store(self) -> None:
        if not self.store.exists:
            self.created_store = self.store.init()

    # -- writing ---------------------------------------------------------------------------------

    def add(self, text: str, *, tags: Iterable[str] = (), source: str | None = None, written_by: str = "cli",
            allow_duplicate: bool = False, compressing: Compressing = Compressing(),
            check_source: bool = True, local_only: bool = False, supersedes: Iterable[str] = ()) -> AddResult:
        """Store a text. Secrets are redacted before anything else sees it (the duplicate test, the models,
        the file); a private key that survives redaction, or a `source` the denylist names, refuses the
        write (Refused) before anything is stored. `check_source=False` is for a caller that has already
        decided the source with finer rules (ingest). `local_only` keeps the text off any compression
        server (`send_to_remote: false` in its file)."""
        return self.add_many([(text, source)], tags=tags, written_by=written_by, allow_duplicate=allow_duplicate,
                             compressing=compressing, check_source=check_source, local_only=local_only,
                             supersedes=supersedes)[0]

    def add_many(self, texts: list[tuple[str, str | None]], *, tags: Iterable[str] = (), written_by: str = "cli",
                 allow_duplicate: bool = False, compressing: Compressing = Compressing(),
                 check_source: bool = True, local_only: bool = False,
                 supersedes: Iterable[str] = ()) -> list[AddResult]:
        """`add` for several (text, source) pairs, such as the chunks of a file: every one passes the gate
        before any is stored, then one `commit_many` embeds them together. A duplicate gets the new tags."""
        prepared = []
        for text, source in texts:
            raw = self._checked_text(text)
            check_text(source or "", "the source")
            if check_source:
                self.gate.refuse_ignored_source(source)
            fields, redacted = self.gate.screen({"raw": raw, "tags": tags, "source": source, "written_by": written_by})
            stamp = now_utc()
            memory = Memory(id=ids.new_id(), created_at=stamp, updated_at=stamp, raw=fields["raw"],
                            tags=normalise_tags(fields["tags"]), source=fields["source"], written_by=fields["written_by"],
                            supersedes=list(supersedes))
            if local_only:
                memory.extra["send_to_remote"] = False
            prepared.append((memory, redacted))
        self.ensure_store()
        stored = self.commit_many([(memory, compressing) for memory, _ in prepared], dedupe=not allow_duplicate)
        results = []
        for (memory, redacted), existing in zip(prepared, stored):
            if existing is None:
                results.append(AddResult(memory, redacted=redacted))
                continue
            from memcli.features.tagging import retag

            merged = retag(self, existing, add=memory.tags)
            results.append(AddResult(merged.memory, duplicate=True, redacted=redacted, tags_added=merged.added))
        return results

    def relabel(self, memory: Memory, *, source: str | None, tags: Iterable[str],
                supersedes: Iterable[str] | None = None) -> Memory:
        """A new source, tags (or versions it supersedes) for a memory whose text stays, so its id, short
        form and vector stay too (ingest renumbering a chunk that moved within its file, memcli/features/versions.py)."""
        with self.store.lock():
            current = self._current(memory.id)
            if current is None:
                raise NotFound(f"no memory with id {memory.id!r}")
            current.source, current.tags, current.updated_at = source, normalise_tags(list(tags)), now_utc()
            if supersedes is not None:
                current.supersedes = list(supersedes)
            self._save(current, None)
        return current

    def _checked_text(self, text: str) -> str:
        raw = clean_input(text)
        if len(raw.encode("utf-8")) > self.settings.max_input_bytes:
            raise InputError(f"the text is larger than the limit of {self.settings.max_input_bytes} bytes")
        return raw

    def commit(self, memory: Memory, compressing: Compressing | None, *, dedupe: bool,
               replaces: str | None = None) -> Memory | None:
        """The one write pipeline, after the gate: the duplicate test, compression (None keeps the memory's
        own `compressed` and `compression`), the vector, then the file and the index under the lock.
        Returns the memory already stored when `dedupe` finds this text (or this id), and writes nothing."""
        return self.commit_many([(memory, compressing)], dedupe=dedupe, replaces=replaces)[0]

    def commit_many(self, writes: list[tuple[Memory, Compressing | None]], *, dedupe: bool,
                    replaces: str | None = None) -> list[Memory | None]:
        """`commit` for many memories at once (import, ingest): their texts are embedded in one call, which
        packs them into the model's batches, and the lock is taken once. One result per write, in order."""
        results: list[Memory | None] = [self.stored_as(m.id, content_key(m.raw)) if dedupe else None
                                        for m, _ in writes]
        todo = [(n, memory) for n, ((memory, compressing), existing) in enumerate(zip(writes, results))
                if existing is None]
        for n, memory in todo:
            if writes[n][1] is not None:
                memory.compressed, memory.compression = self.compression_of(memory, writes[n][1])
                self._store_raw_tokens(memory, batch=len(todo) > 1)
        vectors = self._embed_for_write([memory.raw for _, memory in todo])
        with self.store.lock():
            for (n, memory), vector in zip(todo, vectors):
                # Another process (or an earlier write of this batch) may have stored the same text meanwhile.
                existing = self.stored_as(memory.id, content_key(memory.raw)) if dedupe else None
                if existing:
                    results[n] = existing
                else:
                    self._save(memory, vector, old_relpath=replaces)
        return results

    def stored_as(self, memory_id: str, key: str) -> Memory | None:
        """The stored memory with this id or this text, if any."""
        self.catalog.refresh()
        if self._known_id(memory_id):
            return self.catalog.get(memory_id)
        found = self.catalog.find_content(key)
        return self.catalog.get(found) if found else None

    def _save(self, memory: Memory, vector, old_relpath: str | None = None) -> None:
        """Write the file, tell the catalog, index the vector; the caller holds the lock. The fields set
        after the gate (a compression's reason, new tags or source) pass it here, so nothing reaches the
        file or the catalog unscreened."""
        fields, _ = self.gate.screen(memory.to_dict(), skip=("raw", "compressed"))
        if fields != memory.to_dict():
            vars(memory).update(vars(Memory.from_dict(fields, memory.id)))
        relpath = self.store.write(memory)
        if old_relpath and old_relpath != relpath:
            self.store.delete(old_relpath)
            self.catalog.record_delete(old_relpath)
        sha = hashlib.sha256(self.store.file_path(relpath).read_bytes()).hexdigest()
        added = self.catalog.record_write(relpath, memory, sha).added
        if added and vector is not None:
            self.vectors.add(added[0], vector, self._embedder)

    def _store_raw_tokens(self, memory: Memory, *, batch: bool) -> None:
        """Record what the raw text costs a reader, so reads and `mem stats` need no tokenizer call."""
        info = memory.compression
        if info is not None and not isinstance(info.get("raw_tokens"), int):
            count = self.cheap_counter(batch=batch)
            if count is not None:
                info["raw_tokens"] = count(memory.raw)

    def _embed_for_write(self, texts: list[str]) -> list:
        """The vectors of new texts, or Nones (with one warning per process) when no embedder can be had:
        the write goes on and the next search embeds what is missing."""
        if not self._embed_failed and texts:
            try:
                return list(self.embedder().embed(texts))
            except Exception as exc:  # a missing or broken model must not lose the write
                self._embed_failed = True
                log.warning("not indexed for meaning search yet: %s", describe(exc))
        return [None] * len(texts)

    def compression_of(self, memory: Memory, compressing: Compressing) -> tuple[str | None, dict]:
        """(compressed text or None, the `compression` mapping); never raises (memcli.core.compressing)."""
        from memcli.core.compressing import compression_of

        return compression_of(self, memory, compressing)

    def save_compression(self, memory: Memory, compressed: str | None, info: dict) -> str | None:
        """Store a compression made from `memory`, unless its text changed meanwhile; the status, or None."""
        with self.store.lock():
            current = self._current(memory.id)
            if current is None or current.raw != memory.raw:
                return None
            current.compressed, current.compression = compressed, info
            self._save(current, None)
        return info["status"]

    def pending_count(self) -> int:
        """Memories waiting for compression (a cheap count: the idle worker asks it often)."""
        self.catalog.refresh()
        return self.catalog.status_counts().get("pending", 0)

    def remove(self, memories: list[Memory]) -> None:
        """Delete memories, each with every copy of its file (a copy would otherwise become the memory)."""
        with self.store.lock():
            for memory in memories:
                for relpath in [*self.catalog.copies(memory.id), self.relpath_of(memory.id)]:
                    self.store.delete(relpath)
                    self.catalog.record_delete(relpath)

    def relpath_of(self, memory_id: str) -> str:
        return self.catalog.resolve(memory_id)[1]

    def _current(self, memory_id: str) -> Memory | None:
        """The memory as its file says now (another process or a person may have changed it)."""
        try:
            return self.store.read(self.relpath_of(memory_id))
        except (MemError, OSError):
            return None

    def _known_id(self, memory_id: str) -> bool:
        try:
            self.catalog.get(memory_id)
        except MemError:
            return False
        return True

    # -- reading ---------------------------------------------------------------------------------

    def get(self, prefix: str) -> Memory:
        return self.resolve([prefix])[0]

    def resolve(self, prefixes: Iterable[str]) -> list[Memory]:
        """All or nothing: every prefix must name exactly one memory."""
        prefixes = list(prefixes)
        if not self.readable():
            raise NotFound(f"no memory with id {prefixes[0]!r} (the store at {self.store.root} is empty)")
        found, seen = [], set()
        for prefix in prefixes:
            memory_id, _ = self.catalog.resolve(prefix)
            if memory_id not in seen:
                seen.add(memory_id)
                found.append(self.catalog.get(memory_id))
        return found

    def list(self, filters: Filters = Filters(), limit: int | None = None, offset: int = 0) -> Iterator[Memory]:
        if not self.readable():
            return iter(())
        return self.catalog.list(filters, limit, offset=offset)

    def stats(self) -> dict:
        """What compression saves a reader (memcli.features.savings.savings)."""
        from memcli.features.savings import savings

        return savings(self.list(), lambda text: self.token_counter()(text), self.settings.compress_model)

    def search(self, query: str, *, k: int = 10, mode: str = "hybrid", filters: Filters = Filters(),
               min_score: float | None = None, progress=None, once: bool = False) -> list:
        """Best memories first, as memcli.index.search.Hit. `once`: this process asks nothing more of the
        embedding model (a one-shot `mem search`), so the query is embedded by a forked child
        (memcli.util.forked) on the other core while this process catches up with the files and ranks by words."""
        from memcli.index.search import search

        if not check_text(query, "the search query").strip():
            raise InputError("the search query is empty")
        ahead = None
        if once and mode != "text" and self._embedder is None and self.store.exists and self._settings_readable():
            looking = self.catalog.look_ahead()  # first: when due, at 100k memories the longest of the three
            if looking and os.environ.get("OPENBLAS_NUM_THREADS") == "1":
                # Three processes on two cores: numpy, which this one and the next child need, imported once
                # (told to use one thread, its OpenBLAS starts none at import, which would stop the fork).
                import numpy  # noqa: F401
            ahead = forked.start(lambda: self._embed_query(query))
            if looking:
                log.debug("%s", LOOKING_AHEAD)
                self.vectors.load()
        if not self.readable():
            return []
        return search(self.catalog, query, k=k, mode=mode, filters=filters, min_score=min_score,
                      vector_ranking=lambda q, limit, f: self._vector_ranking(q, limit, f, progress, ahead))

    def context(self, query: str, budget: int, *, raw: bool = False, ids: bool = False, k: int = 20,
                mode: str = "hybrid", filters: Filters = Filters(), min_score: float | None = None, progress=None):
        """The best of the top k memories that fit in `budget` tokens, as a block for a prompt (a `Packed`;
        memcli/features/budget.py says exactly what counts), with short ids when `ids`."""
        from memcli.features.budget import Packed, check_budget, pack

        check_budget(budget)
        hits = self.search(query, k=k, mode=mode, filters=filters, min_score=min_score, progress=progress)
        if not hits:
            return Packed("", 0, budget)
        return pack(hits, budget, self.token_counter(), raw=raw, short_id=self.catalog.short_id if ids else None)

    def _vector_ranking(self, query: str, limit: int, filters: Filters, progress,
                        ahead: forked.Child | None = None) -> list[tuple[int, float]]:
        found = None
        if ahead is not None and self.vectors.missing():
            ahead.stop()  # the model is needed here to embed them: loaded now, not after the child's
            log.debug("the query is embedded here: memories wait for their vectors")
        elif ahead is not None:
            self.vectors.load()  # numpy, hnswlib and the graph, while the child embeds the query
            log.debug("%s", WAITING_FOR_CHILD)
            found = ahead.result()
            if isinstance(found, MemError):  # the model cannot be had: trying again here would fail the same way
                raise found
            if found is None:
                log.debug("the query is embedded here: the child process embedding it failed")
        if found is not None and self.vectors.adopted(found):  # and none is missing, as counted above
            log.debug("%s", CHILD_EMBEDDED)
            self.vectors.maybe_fold()
            vector = found.vector
        else:  # no child, or it failed, or the store's vectors are another model's or incomplete: all of it here
            embedder = self.embedder()
            self.index_vectors(progress)
            vector = embedder.query(query)
        allowed = self.catalog.labels(filters) if filters else None
        skip = set() if filters.all_versions else self.catalog.superseded_labels()
        return self.vectors.query(vector, limit, allowed, skip)

    def _settings_readable(self) -> bool:
        """Read mem.yaml here, before a fork (a child reading it would repeat its warnings); unreadable,
        the search goes on without a child, and its meaning side says why it cannot run."""
        try:
            self.settings  # noqa: B018
        except MemError:
            return False
        return True

    def _embed_query(self, query: str) -> QueryVector | MemError:
        """A forked child's work (see search): what the query's vector is, or why there is none."""
        try:
            embedder = self.embedder()
            return QueryVector(embedder.model_id, embedder.dim, embedder.query(query).tolist())
        except MemError as exc:
            return exc.with_traceback(None)

    def index_vectors(self, progress=None) -> int:
        """Embed whatever has no vector yet and fold a large delta into the graph; cheap when in step."""
        embedded = self.vectors.sync(self.embedder(), progress)
        self.vectors.maybe_fold()
        return embedded

    def settle(self) -> None:
        """After a large write: fold its vectors into the graph now (when they are many enough), then leave
        the catalog up to date with its files (Catalog.settle), so the first search after it pays for
        neither. The fold goes first: its time counts towards the racy window the settling waits out."""
        if not self.store.exists:
            return
        if self._embedder is not None:
            self.vectors.maybe_fold()
        self.catalog.settle()

    def reindex(self, progress=None) -> int:
        """Rebuild every cache from the files alone: catalog, vectors, graph."""
        if not self.store.exists:
            raise StoreError(f"no store at {self.store.root}; run `mem init` first")
        self.catalog.rebuild(progress)
        self._vectors = None
        self.vectors.sync(self.embedder(), progress)
        self.vectors.fold(progress)
        self.catalog.settle(look=True)  # the rebuild's look at every file is as old as the embedding
        return self.catalog.count()

