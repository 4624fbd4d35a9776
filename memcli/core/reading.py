"""Every read: a memory by its id (or a short or partial one), listings, tags in use, and search.

A one-shot `mem search` (`once`) asks nothing more of the embedding model than the query's vector, so
it forks (memcli.util.forked) the slow parts it would otherwise wait for: a child embeds the query on
the other core, and, when the look at every file is due, another makes that look, while this process
loads the vector graph and ranks by words. This is the only place mem forks.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator

from memcli.errors import InputError, MemError, NotFound
from memcli.index import changes
from memcli.index import search as hybrid
from memcli.index.filters import Filters
from memcli.store.memory import Memory, check_text
from memcli.util import forked

if TYPE_CHECKING:
    from memcli.core.mem import Mem

log = logging.getLogger("memcli")

# What -vv says of a one-shot search's children (and tests look for).
CHILD_EMBEDDED = "a child process embedded the query meanwhile"
WAITING_FOR_CHILD = "waiting for the child process embedding the query"
LOOKING_AHEAD = "another child process looks at every file while the vector graph loads"
LEANED_HERE = "the query without its commonest word is embedded here: the files changed which word that is"


@dataclass(frozen=True)
class QueryVector:
    """A query's vector with the identity of the model that made it (what VectorIndex.adopted asks)."""

    model_id: str
    dim: int
    vector: list[float]  # not an array: unpickling one would import numpy before the graph is loaded
    leaned: tuple[str, list[float]] | None = None  # a word (hybrid.leaned_on) and the query's vector without it


def get(mem: Mem, prefix: str) -> Memory:
    return resolve(mem, [prefix])[0]


def resolve(mem: Mem, prefixes: Iterable[str]) -> list[Memory]:
    """All or nothing: every prefix must name exactly one memory."""
    prefixes = list(prefixes)
    if not prefixes:
        raise InputError("no memory id given")
    if not mem.readable():
        raise NotFound(f"no memory with id {prefixes[0]!r} (the store at {mem.store.root} is empty)")
    found, seen = [], set()
    for prefix in prefixes:
        memory_id, _ = mem.catalog.resolve(prefix)
        if memory_id not in seen:
            seen.add(memory_id)
            found.append(mem.catalog.get(memory_id))
    return found


def listing(mem: Mem, filters: Filters = Filters(), limit: int | None = None, offset: int = 0) -> Iterator[Memory]:
    if not mem.readable():
        return iter(())
    return mem.catalog.list(filters, limit, offset=offset)


def tag_counts(mem: Mem, filters: Filters = Filters()) -> list[tuple[str, int]]:
    """Every tag with how many memories carry it, most used first."""
    if not mem.readable():
        return []
    return mem.catalog.tag_counts(filters)


def to_compress(mem: Mem, *, pending: bool = False, failed: bool = False, every: bool = False) -> list[Memory]:
    """The memories a `mem compress` run should (re)do, oldest first. A form that failed the guard when
    its file was taken in (a hand edit, a merge) counts as failed: making it again mends it."""
    if not mem.readable():
        return []
    wanted = {status for status, on in (("pending", pending), ("failed", failed)) if on}
    every_version = Filters(all_versions=True)
    return [m for m in mem.catalog.list(every_version, newest_first=False)
            if every or m.status in wanted or failed and m.served_raw]


def pending_count(mem: Mem) -> int:
    """Memories waiting for compression (a cheap count: the idle worker asks it often)."""
    if not mem.readable():
        return 0
    return mem.catalog.status_counts().get("pending", 0)


def relpath_of(mem: Mem, memory_id: str) -> str:
    return mem.catalog.resolve(memory_id)[1]


def as_on_disk(mem: Mem, memory_id: str) -> Memory | None:
    """The memory as its file says now (another process or a person may have changed it)."""
    try:
        return mem.store.read(relpath_of(mem, memory_id))
    except (MemError, OSError):
        return None


def known_id(mem: Mem, memory_id: str) -> bool:
    try:
        mem.catalog.get(memory_id)
    except MemError:
        return False
    return True


def search(mem: Mem, query: str, *, k: int = 10, mode: str = "hybrid", filters: Filters = Filters(),
           min_score: float | None = None, progress=None, once: bool = False) -> list[hybrid.Hit]:
    """Best memories first (memcli.index.search ranks them); `once`: a one-shot search (see above).
    When meaning search cannot run (no embedding model), hybrid says so once and goes on with words."""
    if not check_text(query, "the search query").strip():
        raise InputError("the search query is empty")
    cut = mode == "hybrid" and min_score is None  # the default cut-off asks of the query without a word too
    ahead = _fork_ahead(mem, query, cut) if once and mode != "text" else None
    if not mem.readable():
        return []
    limit = hybrid.candidates(k)
    words = hybrid.word_ranking(mem.catalog, query, limit, filters) if mode in ("hybrid", "text") else None
    meaning = store = leaned = None
    if mode in ("hybrid", "vector"):
        try:
            leaning = hybrid.leaned_on(mem.catalog, query) if cut else None
            meaning, store, leaned = _vector_ranking(mem, query, limit, filters, progress, ahead, leaning)
        except MemError as exc:
            if mode == "vector":
                raise
            log.warning("meaning search unavailable (%s); showing word matches only", exc)
    return hybrid.ranked(mem.catalog, query, k=k, filters=filters, min_score=min_score, words=words,
                          meaning=meaning, store=store, leaned=leaned)


def _fork_ahead(mem: Mem, query: str, cut: bool) -> forked.Child | None:
    """The children of a one-shot search: the query's embedding, and the look at every file when due
    (first: at 100k memories the longest of the three), then the vector graph loads here meanwhile. With
    the default `cut`, the child embeds the query without the word hybrid.leaned_on gives too, as the
    index says before this process catches up with the files (after, when it gives another word, this
    process embeds that query itself)."""
    if mem.has_embedder or not mem.store.exists or not _settings_readable(mem):
        return None
    leaning = hybrid.leaned_on(mem.catalog, query) if cut else None
    expected = mem.catalog.look_due()
    if expected is not None:
        if os.environ.get("OPENBLAS_NUM_THREADS") == "1":
            # Three processes on two cores: numpy, which this one and the next child need, imported once
            # (told to use one thread, its OpenBLAS starts none at import, which would stop the fork).
            import numpy  # noqa: F401
        store = mem.store
        mem.catalog.looks.expect(forked.start(lambda: changes.scan_every_file(store, expected)))
    child = forked.start(lambda: _embed_query(mem, query, leaning))
    if expected is not None:
        log.debug("%s", LOOKING_AHEAD)
        mem.vectors.load()
    return child


def _vector_ranking(mem: Mem, query: str, limit: int, filters: Filters, progress, ahead: forked.Child | None,
                    leaning: str | None) -> tuple[list, list | None, list | None]:
    """The best `limit` within the filters by cosine; when filters narrowed them, the best of the whole
    store the cut-off weighs a hit against (memcli.index.search.REST); and the best of the whole store for
    the query without the word `leaning` (None without one)."""
    found = None
    if ahead is not None and mem.vectors.missing():
        ahead.stop()  # the model is needed here to embed them: loaded now, not after the child's
        log.debug("the query is embedded here: memories wait for their vectors")
    elif ahead is not None:
        mem.vectors.load()  # numpy, hnswlib and the graph, while the child embeds the query
        log.debug("%s", WAITING_FOR_CHILD)
        found = ahead.result()
        if isinstance(found, MemError):  # the model cannot be had: trying again here would fail the same way
            raise found
        if found is None:
            log.debug("the query is embedded here: the child process embedding it failed")
    if found is not None and mem.vectors.adopted(found):  # and none is missing, as counted above
        log.debug("%s", CHILD_EMBEDDED)
        mem.vectors.maybe_fold()
        vector = found.vector
        other = found.leaned[1] if found.leaned and found.leaned[0] == leaning else None
    else:  # no child, or it failed, or the store's vectors are another model's or incomplete: all of it here
        embedder = mem.embedder()
        mem.index_vectors(progress)
        vector = embedder.query(query)
        other = None
    if leaning is not None and other is None:
        if found is not None:
            log.debug("%s", LEANED_HERE)
        other = mem.embedder().query(hybrid.without(query, leaning))
    allowed = mem.catalog.labels(filters) if filters else None
    skip = set() if filters.all_versions else mem.catalog.superseded_labels()
    store = None if allowed is None else mem.vectors.query(vector, 2 * hybrid.REST, None, skip)
    leaned = None if leaning is None else mem.vectors.query(other, 2 * hybrid.REST, None, skip)
    return mem.vectors.query(vector, limit, allowed, skip), store, leaned


def _settings_readable(mem: Mem) -> bool:
    """Read mem.yaml here, before a fork (a child reading it would repeat its warnings); unreadable,
    the search goes on without a child, and its meaning side says why it cannot run."""
    try:
        mem.settings  # noqa: B018
    except MemError:
        return False
    return True


def _embed_query(mem: Mem, query: str, leaning: str | None) -> QueryVector | MemError:
    """A forked child's work (see search): what the query's vector is (and without the word `leaning`), or
    why there is none."""
    try:
        embedder = mem.embedder()
        leaned = None if leaning is None else (leaning, embedder.query(hybrid.without(query, leaning)).tolist())
        return QueryVector(embedder.model_id, embedder.dim, embedder.query(query).tolist(), leaned)
    except MemError as exc:
        return exc.with_traceback(None)
