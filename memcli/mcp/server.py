"""`mem mcp`: the store as an MCP server on stdio, for AI assistants.

One `Mem` per server process, so the models stay loaded and a search costs what the query costs.
Every call runs on one worker thread (the catalog's SQLite connection and the models belong to it,
and the event loop stays free to answer pings while a write compresses) and starts by catching up with
the files (Catalog.catch_up), so the server sees what other processes, an editor or git changed. Library
errors come back as MCP tool errors; stdout carries the protocol only (the SDK points fd 1 at stderr
while it serves, and our logs go to stderr).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from memcli import __version__
from memcli.core.mem import Mem
from memcli.errors import MemError, describe
from memcli.index.db import is_damage

try:
    from mcp.server.mcpserver.exceptions import ToolError

    from memcli.mcp import memory_tools, thread_tools, version_tools
    from memcli.mcp.toolbox import Server, Toolbox
except ImportError as exc:
    raise MemError(f"`mem mcp` needs the MCP package ({exc}); install it with: pip install 'memcli[mcp]'") from None

log = logging.getLogger("memcli")

# A request leaves the periodic look at every file (for a file rewritten in place; 0.1-0.3 s at 10k
# memories, 1.4 s at 100k) to the idle moments, when the background thread's own catch-up makes it,
# unless it is this many times late: a server that is never idle still sees such a file, later.
REQUEST_PATIENCE = 10

# Each module adds its tools with `register(box)`; a feature with tools of its own adds its module here.
MODULES = [memory_tools, version_tools, thread_tools]

INSTRUCTIONS = """\
Long-term memory shared with the user's shell (the `mem` command). Search it before answering \
questions about the user's projects, decisions and preferences; write down durable facts worth \
remembering (one idea per memory, with tags). Results say each day once (`8 May 2023`, on its own line), then one line \
per memory: a short ID and the content, a shorter form when there is one (`raw: true` gives the full \
prose). The ID is what memory_get, memory_update and memory_delete take. memory_context returns a block that fits a token budget. \
When a fact changed, memory_update replaces the memory that says the old one."""


class Worker:
    """Runs library calls one at a time on a dedicated thread, each after a fresh look at the files.

    Between calls, the store's work queue (memcli.features.work: compressions, vectors, due thread folds,
    captured hook events) is run by memcli.core.idle once the server has been
    idle for `idle_seconds`: their library steps go through this same thread, their slow part (a
    request to a compression server, a local model) runs beside it, so a tool call is not held up.
    Looking for jobs goes through this thread too, and so catches up with the files: that idle
    catch-up is the one that makes the periodic look at every file (see REQUEST_PATIENCE)."""

    def __init__(self, mem: Mem):
        from memcli.core.idle import IdleWorker
        from memcli.features.work import Work

        self.mem = mem
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mem")
        self.idle = IdleWorker(mem.settings.provider.idle_seconds)
        self.work = Work(mem, library=self.run_now)
        self.idle.add_source(self.work.next_job)

    def start_background(self) -> None:
        self.idle.start()

    def run_now(self, work: Callable[[], Any]) -> Any:
        """Run `work` on the library thread and wait for it (for the background worker's thread, which
        calls it when idle: its catch-up makes the look at every file when one is due)."""
        def run():
            self.mem.refresh()
            return work()

        return self.pool.submit(run).result()

    def warm_up(self) -> None:
        """Load the models now, so the first search does not pay for them (a missing model is
        reported when a tool needs it)."""
        def load():
            for model in (self.mem.embedder, self.mem.token_counter):
                try:
                    model()
                except Exception as exc:  # reported by the first call that needs the model
                    log.debug("model not loaded at start: %s", exc)

        self.pool.submit(load)

    async def __call__(self, work: Callable[[Mem], Any]) -> Any:
        def run():
            for attempt in range(2):
                try:
                    self.mem.refresh(REQUEST_PATIENCE)
                    return work(self.mem)
                except Exception as exc:  # a damaged index is rebuilt from the files, and the call made again
                    if attempt or not is_damage(exc):
                        raise
                    self.mem.catalog.recover(exc)

        try:
            with self.idle.request():
                return await asyncio.wrap_future(self.pool.submit(run))
        except MemError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:
            log.exception("internal error in an MCP call")
            raise ToolError(f"internal error: {describe(exc)}") from None

    def close(self) -> None:
        self.idle.stop()
        self.pool.submit(self.mem.catalog.close).result()  # on the thread its SQLite connection belongs to
        self.pool.shutdown(wait=True)


def build_server(mem: Mem) -> tuple[Server, Worker]:
    worker = Worker(mem)
    box = Toolbox(worker)
    for module in MODULES:
        module.register(box)
    server = Server(box, name="mem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    return server, worker


def serve(mem: Mem) -> None:
    """Serve until the client closes stdin."""
    server, worker = build_server(mem)
    worker.warm_up()
    worker.start_background()
    try:
        server.run("stdio")
    finally:
        worker.close()
