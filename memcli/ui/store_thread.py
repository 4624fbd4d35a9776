"""Every library call of the page on one thread, each after a look at the files.

The catalog is a SQLite connection, which belongs to the thread that opened it, and the models are
loaded once per process: one thread holds them all, and the page's requests take turns on it, as the
MCP server's calls do (memcli.mcp.server.Worker). Each call first takes in what other processes changed
(a hook's runner storing observations, `mem add` in a shell, git), so a page shows the store as it is.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from memcli.index.db import is_damage


class StoreThread:
    def __init__(self, open_mem: Callable[[], Any]):
        self._open = open_mem
        self._mem = None
        self.root = None  # the store's folder, once a first call opened it
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mem-ui")

    async def __call__(self, work: Callable[[Any], Any]) -> Any:
        """`work(mem)` on the store's thread; a damaged index is rebuilt from the files and the call made again."""
        return await asyncio.wrap_future(self.pool.submit(self._run, work))

    def _run(self, work):
        if self._mem is None:
            self._mem = self._open()
            self.root = self._mem.store.root
        for attempt in range(2):
            try:
                self._mem.refresh()
                return work(self._mem)
            except Exception as exc:
                if attempt or not is_damage(exc):
                    raise
                self._mem.catalog.recover(exc)

    def close(self) -> None:
        def close():
            if self._mem is not None:
                self._mem.catalog.close()

        self.pool.submit(close).result()  # on the thread its SQLite connection belongs to
        self.pool.shutdown(wait=True)
