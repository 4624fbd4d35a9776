"""The library's wiring: one store, its caches and its models, opened once per command or server.

`Mem` holds what every part of a command shares: the store (the files), the catalog and the vector
index (caches), the providers (models, loaded lazily, once per process) and the gate (redaction and
the denylist). What commands do with it lives beside it: every write in memcli.core.writing, every
read in memcli.core.reading; maintenance of the caches (catching up, settling, rebuilding) is here.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from memcli.errors import MemError, StoreError, describe
from memcli.index.catalog import Catalog
from memcli.privacy.gate import Gate
from memcli.providers import Providers
from memcli.store.folder import Store, find_store

log = logging.getLogger("memcli")


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
        self._key_pattern: list[dict] | None = None
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

            settings = self.settings
            if settings.provider.remote and settings.provider.send_to_remote and self._others_may_write():
                from memcli.providers.consent import untrusted

                why = untrusted(settings.provider)
                if why:  # compress here, as with send_to_remote: false
                    log.warning("%s", why)
                    settings = dataclasses.replace(
                        settings, provider=dataclasses.replace(settings.provider, send_to_remote=False))
            self._providers = engines.with_provider(self._local or engines.local(), settings, self.store.index_dir)
        return self._providers

    def _others_may_write(self) -> bool:
        from memcli.providers.consent import others_may_write

        return others_may_write(self.store.root)

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
        return Gate(self.home, self.settings.redact + self._own_key(), self.gitignore)

    def _own_key(self) -> list[dict]:
        """The provider's API key as one more `redact` pattern: mem knows its own key, so a text quoting it
        (a pasted error, a log) stores `[REDACTED:api-key]`, whatever the key looks like."""
        if self._key_pattern is None:
            self._key_pattern = []
            provider = self.settings.provider
            if provider.remote and provider.api_key_env:
                import re

                from memcli.providers.openai_http import api_key

                try:
                    key = api_key(provider)
                except MemError:
                    key = None
                if key and len(key) >= 8:
                    self._key_pattern = [{"name": "api-key", "regex": re.escape(key)}]
        return self._key_pattern

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

    @property
    def has_embedder(self) -> bool:
        """Whether this process has loaded the embedding model already (a long-lived one, or after a write)."""
        return self._embedder is not None

    def embed_new(self, texts: list[str]) -> list:
        """The vectors of new texts, in one call to the model; Nones (with one warning per process) when no
        embedder can be had: the write goes on and queues the vectors for later (memcli.core.write_jobs)."""
        if not self._embed_failed and texts:
            try:
                vectors, _ = self.embedder().embed_with_whole(texts, whole=False)
                return list(vectors)
            except Exception as exc:  # a missing or broken model must not lose the write
                self._embed_failed = True
                log.warning("not indexed for meaning search yet: %s", describe(exc))
        return [None] * len(texts)

    def index_vectors(self, progress=None):
        """Give a vector to whatever has none yet (from the vector cache, else embedded) and fold a large
        delta into the graph; cheap when in step. Returns what the sync did (memcli.index.vectors.Synced)."""
        synced = self.vectors.sync(self.embedder(), progress)
        self.vectors.maybe_fold(progress)
        return synced

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
        """Rebuild every cache from the files: catalog, vectors (from the vector cache where it has them), graph."""
        if not self.store.exists:
            raise StoreError(f"no store at {self.store.root}; run `mem init` first")
        self.catalog.rebuild(progress)
        self._vectors = None
        self.vectors.sync(self.embedder(), progress)
        self.vectors.fold(progress)
        self.catalog.settle(look=True)  # the rebuild's look at every file is as old as the embedding
        return self.catalog.count()

