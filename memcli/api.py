"""The library behind the CLI and the MCP server: everything a command does, nothing it prints.

`Mem` ties the store (files), the catalog (cache) and the engines (compressor, embedder) together,
and keeps the promises the commands make: no lost write, no half file, no guess on an ambiguous id.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from memcli import engines, ids
from memcli.catalog import Catalog, Filters
from memcli.errors import InputError, InvalidMemory, MemError, NotFound, Refused, StoreError
from memcli.memory import Memory, content_key, normalise_tags, now_utc
from memcli.store import Store, find_store

log = logging.getLogger("memcli")


@dataclass
class AddResult:
    memory: Memory
    duplicate: bool = False
    redacted: dict[str, int] = field(default_factory=dict)  # secrets replaced, by kind


@dataclass
class EditResult:
    memory: Memory | None  # None when nothing changed
    redacted: dict[str, int] = field(default_factory=dict)


@dataclass
class ImportReport:
    imported: int = 0
    duplicates: int = 0
    invalid: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)


class Mem:
    def __init__(self, store: Store):
        self.store = store
        self.catalog = Catalog(store)
        self.created_store = False
        self._vectors = None
        self._embedder = None
        self._embed_failed = False
        self._counter = None

    @property
    def vectors(self):
        if self._vectors is None:
            from memcli.vectors import VectorIndex

            self._vectors = VectorIndex(self.catalog)
        return self._vectors

    def embedder(self):
        """The embedding model, loaded once per process (MCP and `mem search -` reuse it)."""
        if self._embedder is None:
            self._embedder = engines.embedder(self.settings.embed_model)
        return self._embedder

    def token_counter(self):
        """`count(text) -> int` with the compression model's tokenizer, loaded once per process."""
        if self._counter is None:
            self._counter = engines.token_counter(self.settings.compress_model)
        return self._counter

    @classmethod
    def open(cls, explicit_dir: Path | None = None) -> "Mem":
        return cls(Store(find_store(explicit_dir)))

    @property
    def settings(self):
        return self.store.settings

    def _ensure_store(self) -> None:
        if not self.store.exists:
            self.created_store = self.store.init()

    def refresh(self) -> None:
        """Catch up with the files. A one-shot command looks once; a long-lived process (the MCP server)
        calls this before each request so it sees what other processes, an editor or git changed
        (Catalog.catch_up says how, and how cheaply)."""
        if self.store.exists:
            self.catalog.catch_up()

    def _readable(self) -> bool:
        """A store that does not exist yet reads as empty, and reading it creates nothing."""
        if not self.store.exists:
            return False
        self.catalog.refresh()
        return True

    # -- writing ---------------------------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        tags: Iterable[str] = (),
        source: str | None = None,
        written_by: str = "cli",
        allow_duplicate: bool = False,
        compress: bool = True,
        defer: bool = False,
        method: str | None = None,
        ratio: float | None = None,
        check_source: bool = True,
    ) -> AddResult:
        """Store a text. Secrets are redacted before anything else sees it (the duplicate test, the models,
        the file); a private key that survives redaction, or a `source` the denylist names, refuses the
        write (Refused) before anything is stored. `check_source=False` is for a caller that has already
        decided the source with finer rules (ingest)."""
        raw = _clean_input(text)
        if len(raw.encode("utf-8")) > self.settings.max_input_bytes:
            raise InputError(f"the text is larger than the limit of {self.settings.max_input_bytes} bytes")
        tag_list = normalise_tags(list(tags))
        if check_source:
            self.refuse_ignored_source(source)
        (raw, source), redacted = self._redacted(raw, source)
        self._ensure_store()
        key = content_key(raw)
        if not allow_duplicate:
            existing = self._duplicate_of(key)
            if existing:
                return AddResult(existing, duplicate=True, redacted=redacted)
        compressed, info = self._compression_for(raw, compress=compress, defer=defer, method=method, ratio=ratio)
        self._compression_warning(info)
        vector = self._embed_for_write(raw)
        stamp = now_utc()
        memory = Memory(
            id=ids.new_id(), created_at=stamp, updated_at=stamp, raw=raw, tags=tag_list,
            source=source, written_by=written_by, compressed=compressed, compression=info,
        )
        with self.store.lock():
            if not allow_duplicate:
                # Another process may have added the same text while this one was compressing.
                existing = self._duplicate_of(key)
                if existing:
                    return AddResult(existing, duplicate=True, redacted=redacted)
            self._save(memory, vector)
        return AddResult(memory, redacted=redacted)

    def relabel(self, memory: Memory, *, source: str | None, tags: Iterable[str]) -> Memory:
        """A new source and tags for a memory whose text stays, so its id, short form and vector stay too
        (ingest renumbering a chunk that moved within its file)."""
        with self.store.lock():
            current = self._current(memory.id)
            if current is None:
                raise NotFound(f"no memory with id {memory.id!r}")
            current.source, current.tags, current.updated_at = source, normalise_tags(list(tags)), now_utc()
            self._save(current, None)
        return current

    def _duplicate_of(self, key: str) -> Memory | None:
        self.catalog.refresh()
        found = self.catalog.find_content(key)
        return self.catalog.get(found) if found else None

    def _save(self, memory: Memory, vector, old_relpath: str | None = None) -> None:
        """Write the file, tell the catalog, index the vector; the caller holds the lock."""
        relpath = self.store.write(memory)
        if old_relpath and old_relpath != relpath:
            self.store.delete(old_relpath)
            self.catalog.record_delete(old_relpath)
        sha = hashlib.sha256(self.store.file_path(relpath).read_bytes()).hexdigest()
        added = self.catalog.record_write(relpath, memory, sha).added
        if added and vector is not None:
            self.vectors.add(added[0], vector, self._embedder)

    def _embed_for_write(self, raw: str):
        """The vector of a new text, or None (with one warning per process) when no embedder can be had:
        the write goes on and the next search embeds what is missing."""
        if self._embed_failed:
            return None
        try:
            return self.embedder().embed([raw])[0]
        except Exception as exc:  # a missing or broken model must not lose the write
            self._embed_failed = True
            reason = str(exc) if isinstance(exc, MemError) else f"{type(exc).__name__}: {exc}"
            log.warning("not indexed for meaning search yet: %s", reason)
        return None

    def _compression_for(self, raw: str, *, compress: bool, defer: bool, method: str | None, ratio: float | None):
        """(compressed text or None, the `compression` mapping). Never raises: a write must not fail here."""
        settings = self.settings
        if not compress:
            return None, {"status": "skipped", "reason": "compression turned off"}
        if len(raw) < settings.compress_min_chars:
            return None, {"status": "skipped", "reason": f"shorter than {settings.compress_min_chars} characters"}
        if defer:
            return None, {"status": "pending"}
        try:
            result = engines.compressor()(
                raw,
                method=method or settings.compress_method,
                ratio=ratio or settings.compress_target,
                model=settings.compress_model,
                min_chars=settings.compress_min_chars,
                timeout_s=settings.compress_timeout_s,
            )
            compressed, info = result.text, dict(result.info)
        except Exception as exc:  # fail-open: the memory lands raw and `mem compress --failed` can retry
            compressed, info = None, {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
        return compressed, info

    def _compression_warning(self, info: dict) -> None:
        if info.get("status") == "failed":
            log.warning("compression failed (%s); stored the raw text only, retry with `mem compress --failed`",
                        info.get("reason", "unknown reason"))

    def to_compress(self, *, pending: bool = False, failed: bool = False, every: bool = False) -> list[Memory]:
        """The memories a `mem compress` run should (re)do, oldest first."""
        if not self._readable():
            return []
        wanted = {status for status, on in (("pending", pending), ("failed", failed)) if on}
        return [m for m in self.catalog.list(Filters(), newest_first=False) if every or m.status in wanted]

    def compress(self, memories: list[Memory], *, method: str | None = None, ratio: float | None = None,
                 progress=None) -> dict[str, int]:
        """(Re)compress memories one by one, each saved as soon as it is done, so an interrupted run loses
        nothing and a re-run picks up what is left. Returns how many ended in each status."""
        outcome: dict[str, int] = {}
        for done, memory in enumerate(memories, 1):
            compressed, info = self._compression_for(memory.raw, compress=True, defer=False, method=method,
                                                     ratio=ratio)
            with self.store.lock():
                current = self._current(memory.id)
                if current is not None and current.raw == memory.raw:
                    current.compressed, current.compression = compressed, info
                    self._save(current, None)
                    outcome[info["status"]] = outcome.get(info["status"], 0) + 1
            if progress:
                progress("compressing", done, len(memories))
        return outcome

    def remove(self, memories: list[Memory]) -> None:
        with self.store.lock():
            for memory in memories:
                relpath = self._relpath_of(memory.id)
                self.store.delete(relpath)
                self.catalog.record_delete(relpath)

    def _relpath_of(self, memory_id: str) -> str:
        return self.catalog.resolve(memory_id)[1]

    def edit_text(self, memory: Memory) -> str:
        return self.store.read(self._relpath_of(memory.id)).to_yaml()

    def save_edit(self, memory: Memory, text: str) -> EditResult:
        """Validate an edited file, redact it and save it. Raises before writing anything."""
        edited = Memory.from_yaml(text, f"edited memory {memory.id}")
        if edited.id != memory.id:
            raise InvalidMemory(f"the id cannot be changed (was {memory.id}, now {edited.id})")
        if edited.source != memory.source:
            self.refuse_ignored_source(edited.source)
        (edited.raw, edited.compressed, edited.source), redacted = self._redacted(
            edited.raw, edited.compressed, edited.source)
        if edited.to_dict() == memory.to_dict():
            return EditResult(None, redacted)
        if edited.raw != memory.raw:
            edited.raw = _clean_input(edited.raw)
            if edited.compressed == memory.compressed:
                # The old short form describes the old text; make a new one.
                edited.compressed, edited.compression = self._compression_for(
                    edited.raw, compress=True, defer=False, method=None, ratio=None)
                self._compression_warning(edited.compression)
        edited.updated_at = now_utc()
        vector = self._embed_for_write(edited.raw)
        with self.store.lock():
            self._save(edited, vector, old_relpath=self._relpath_of(memory.id))
        return EditResult(edited, redacted)

    def import_jsonl(self, lines: Iterable[str], *, compress: bool = True, defer: bool = False) -> ImportReport:
        """Take exported JSON lines: ids and timestamps kept, exact duplicates skipped, bad lines reported."""
        report = ImportReport()
        self._ensure_store()
        for number, text in enumerate(lines, 1):
            if not text.strip():
                continue
            try:
                memory = self._imported(text, number)
            except MemError as exc:
                report.invalid.append(str(exc))
                continue
            try:
                self.refuse_ignored_source(memory.source)
                (raw, memory.source), redacted = self._redacted(memory.raw, memory.source)
                if raw != memory.raw:  # the short form was made from the secret too: make a new one
                    memory.raw, memory.compressed, memory.compression = raw, None, None
                (memory.compressed,), in_short_form = self._redacted(memory.compressed)
            except Refused as exc:
                report.refused.append(f"line {number}: {exc}")
                continue
            report.redacted = dict(Counter(report.redacted) + Counter(redacted) + Counter(in_short_form))
            key = content_key(memory.raw)
            if self._known_id(memory.id) or self._duplicate_of(key):
                report.duplicates += 1
                continue
            if memory.compressed is None and memory.status != "skipped":
                memory.compressed, memory.compression = self._compression_for(
                    memory.raw, compress=compress, defer=defer, method=None, ratio=None)
            vector = self._embed_for_write(memory.raw)
            with self.store.lock():
                if self._known_id(memory.id) or self._duplicate_of(key):
                    report.duplicates += 1
                    continue
                self._save(memory, vector)
            report.imported += 1
        return report

    def _imported(self, text: str, line: int) -> Memory:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidMemory(f"line {line}: not JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise InvalidMemory(f"line {line}: expected a JSON object")
        record = dict(data)
        if "raw" not in record and isinstance(record.get("content_raw"), str):
            record["raw"] = record["content_raw"]
        if isinstance(record.get("raw"), str):
            try:
                record["raw"] = _clean_input(record["raw"])
            except InputError as exc:
                raise InvalidMemory(f"line {line}: {exc}") from None
        record.setdefault("id", ids.new_id())
        record.setdefault("created_at", now_utc())
        record.setdefault("written_by", "import")
        for key in ("content", "content_raw", "optimized", "score", "query"):
            record.pop(key, None)
        memory = Memory.from_dict(record, f"line {line}")
        if len(memory.raw.encode("utf-8")) > self.settings.max_input_bytes:
            raise InputError(f"line {line}: text larger than {self.settings.max_input_bytes} bytes")
        return memory

    # -- privacy ---------------------------------------------------------------------------------

    @property
    def home(self) -> Path:
        """The folder the store speaks for: the project around a `.mem/` store, else the store's own folder.
        Its `.memignore` is the store's denylist, and `mem ingest` writes sources relative to it."""
        root = self.store.root
        return root.parent if root.name == ".mem" else root

    def ignore_rules(self, walk_root: Path | None = None):
        """The denylist (memcli.ignore.IgnoreRules) for this store, and for an ingest walk of `walk_root`."""
        from memcli.ignore import IgnoreRules

        return IgnoreRules.load(self.home, walk_root)

    def refuse_ignored(self, path: Path | str, what: str = "file", rules=None, named: str | None = None) -> None:
        """Refused, naming the rule and where it is written, when the denylist ignores `path`."""
        found = (rules or self.ignore_rules()).match(path)
        if found is not None and found.ignored:
            raise Refused(f"refusing {what} {named or path}: it is ignored by {found.source_name}:{found.line}:"
                          f"{found.pattern} (`mem ignore check -v {path}` explains)")

    def refuse_ignored_source(self, source: str | None) -> None:
        """A `source` that names a local path (a plain path, `path#n`, or a file:// URI) must not be ignored;
        other URIs (https://, mailto:, ...) are not files mem could read, and pass."""
        from memcli.ignore import local_paths

        paths = local_paths(source) if source else []
        if paths:
            rules = self.ignore_rules()
            for path in paths:
                self.refuse_ignored(path, "source", rules, named=source)

    def redact(self, text: str):
        """The text with its secrets replaced (a memcli.redact.Redaction); Refused if a private key survives.
        A broken `redact` pattern in mem.yaml is a StoreError naming it."""
        from memcli.redact import check_no_private_key, redact

        result = redact(text, self.settings.redact)
        check_no_private_key(result.text)
        return result

    def _redacted(self, *texts: str | None) -> tuple[list[str | None], dict[str, int]]:
        """Each text redacted (None stays None), and the counts of all of them together."""
        counts: Counter[str] = Counter()
        out = []
        for text in texts:
            if text is not None:
                result = self.redact(text)
                text = result.text
                counts.update(result.counts)
            out.append(text)
        return out, dict(counts)

    def _current(self, memory_id: str) -> Memory | None:
        """The memory as its file says now (another process or a person may have changed it)."""
        try:
            return self.store.read(self._relpath_of(memory_id))
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
        if not self._readable():
            raise NotFound(f"no memory with id {prefixes[0]!r} (the store at {self.store.root} is empty)")
        found, seen = [], set()
        for prefix in prefixes:
            memory_id, _ = self.catalog.resolve(prefix)
            if memory_id not in seen:
                seen.add(memory_id)
                found.append(self.catalog.get(memory_id))
        return found

    def list(self, filters: Filters = Filters(), limit: int | None = None) -> Iterator[Memory]:
        if not self._readable():
            return iter(())
        return self.catalog.list(filters, limit)

    def stats(self) -> dict:
        """What compression saves a reader: tokens of the raw text against tokens actually read."""
        totals = {"memories": 0, "optimized": 0, "raw_tokens": 0, "read_tokens": 0}
        by_status: dict[str, int] = {}
        by_method: dict[str, dict] = {}
        for memory in self.list():
            info = memory.compression or {}
            status = info.get("status", "none")
            by_status[status] = by_status.get(status, 0) + 1
            if memory.optimized and isinstance(info.get("raw_tokens"), int) and isinstance(info.get("tokens"), int):
                raw_tokens, read_tokens = info["raw_tokens"], info["tokens"]
                method = by_method.setdefault(str(info.get("method")), {"memories": 0, "raw_tokens": 0, "tokens": 0})
                method["memories"] += 1
                method["raw_tokens"] += raw_tokens
                method["tokens"] += read_tokens
                totals["optimized"] += 1
            else:
                raw_tokens = read_tokens = self.token_counter()(memory.raw)
            totals["memories"] += 1
            totals["raw_tokens"] += raw_tokens
            totals["read_tokens"] += read_tokens
        for method in by_method.values():
            method["saved_percent"] = _percent(method["raw_tokens"] - method["tokens"], method["raw_tokens"])
        return {
            **totals,
            "optimized_percent": _percent(totals["optimized"], totals["memories"]),
            "saved_tokens": totals["raw_tokens"] - totals["read_tokens"],
            "saved_percent": _percent(totals["raw_tokens"] - totals["read_tokens"], totals["raw_tokens"]),
            "by_status": by_status,
            "by_method": by_method,
            "tokenizer": self.settings.compress_model,
        }

    def export(self) -> Iterator[dict]:
        if not self._readable():
            return iter(())
        return (memory.to_dict() for memory in self.catalog.list(Filters(), newest_first=False))

    def search(self, query: str, *, k: int = 10, mode: str = "hybrid", filters: Filters = Filters(),
               min_score: float | None = None, progress=None) -> list:
        """Best memories first, as `Hit`s; `score` is fused rank (hybrid), cosine (vector) or BM25 (text)."""
        from memcli.search import CANDIDATES, Hit, fuse, text_ranking

        if not query.strip():
            raise InputError("the search query is empty")
        if not self._readable():
            return []
        rankings = {}
        if mode in ("hybrid", "text"):
            rankings["text"] = text_ranking(self.catalog, query, max(CANDIDATES, k), filters)
        if mode in ("hybrid", "vector"):
            try:
                rankings["vector"] = self._vector_ranking(query, max(CANDIDATES, k), filters, progress)
            except MemError as exc:
                if mode == "vector":
                    raise
                log.warning("meaning search unavailable (%s); showing word matches only", exc)
        ranked = fuse(rankings["text"], rankings["vector"]) if len(rankings) > 1 else next(iter(rankings.values()))
        if min_score is not None:
            ranked = [(label, score) for label, score in ranked if score >= min_score]
        ranked = ranked[:k]
        memories = self.catalog.by_labels(label for label, _ in ranked)
        return [Hit(memories[label], score) for label, score in ranked if label in memories]

    def context(self, query: str, budget: int, *, raw: bool = False, k: int = 20, mode: str = "hybrid",
                filters: Filters = Filters(), min_score: float | None = None, progress=None):
        """The best of the top k memories that fit in `budget` tokens, as a block for a prompt (a `Packed`;
        memcli/context.py says exactly what counts)."""
        from memcli.context import Packed, check_budget, pack

        check_budget(budget)
        hits = self.search(query, k=k, mode=mode, filters=filters, min_score=min_score, progress=progress)
        if not hits:
            return Packed("", 0, budget)
        return pack(hits, budget, self.token_counter(), raw=raw, label=self.catalog.short_id)

    def _vector_ranking(self, query: str, limit: int, filters: Filters, progress) -> list[tuple[int, float]]:
        embedder = self.embedder()
        self.index_vectors(progress)
        allowed = self.catalog.labels(filters) if filters else None
        return self.vectors.query(embedder.embed([query])[0], limit, allowed)

    def index_vectors(self, progress=None) -> int:
        """Embed whatever has no vector yet and fold a large delta into the graph; cheap when in step."""
        embedded = self.vectors.sync(self.embedder(), progress)
        self.vectors.maybe_fold()
        return embedded

    def reindex(self, progress=None) -> int:
        """Rebuild every cache from the files alone: catalog, vectors, graph."""
        if not self.store.exists:
            raise StoreError(f"no store at {self.store.root}; run `mem init` first")
        self.catalog.rebuild(progress)
        self._vectors = None
        self.vectors.sync(self.embedder(), progress)
        self.vectors.fold(progress)
        return self.catalog.count()


def _clean_input(text: str) -> str:
    """The text as given, minus the trailing newline(s) that `echo` and files add; never empty."""
    raw = text.rstrip("\r\n")
    if not raw.strip():
        raise InputError("nothing to add: the text is empty")
    if "\x00" in raw:
        raise InputError("the text contains NUL bytes; mem stores text only")
    return raw


def _percent(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0
