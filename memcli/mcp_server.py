"""`mem mcp`: the store as an MCP server on stdio, for AI assistants.

One `Mem` per server process, so the models stay loaded and a search costs what the query costs.
Every call runs on one worker thread (the catalog's SQLite connection and the models belong to it,
and the event loop stays free to answer pings while a write compresses) and starts by catching up with
the files (Catalog.catch_up), so the server sees what other processes, an editor or git changed. Library
errors come back as MCP tool errors; stdout carries the protocol only (the SDK points fd 1 at stderr
while it serves, and our logs go to stderr).
"""

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Callable

from memcli import __version__
from memcli.api import Mem
from memcli.errors import MemError, describe
from memcli.index.filters import Filters
from memcli.store.memory import normalise_tags

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import Field
except ImportError as exc:
    raise MemError(f"`mem mcp` needs the MCP package ({exc}); install it with: pip install 'memcli[mcp]'") from None

log = logging.getLogger("memcli")

INSTRUCTIONS = """\
Long-term memory shared with the user's shell (the `mem` command). Search it before answering
questions about the user's projects, decisions and preferences; write down durable facts worth
remembering (one idea per memory, with tags). Results carry `content` (a shorter form when there is
one; ask `raw: true` for the full prose) and an `id` that memory_get and memory_delete take (any
unique prefix works). memory_context returns a block that fits a token budget."""

Tags = Annotated[list[str] | str | None, Field(description='Tags to file it under, e.g. ["infra", "billing"].')]
TagFilter = Annotated[list[str] | str | None, Field(description="Only memories that have all of these tags.")]
Raw = Annotated[bool, Field(description="Give the raw prose in `content` instead of the compressed form.")]


class Worker:
    """Runs library calls one at a time on a dedicated thread, each after a fresh look at the files."""

    def __init__(self, mem: Mem):
        self.mem = mem
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mem")

    def warm_up(self) -> None:
        """Load the embedding model now, so the first search does not pay for it (a missing model is
        reported when a tool needs it)."""
        def load():
            try:
                self.mem.embedder()
            except Exception as exc:  # reported by the first call that needs the model
                log.debug("embedding model not loaded at start: %s", exc)

        self.pool.submit(load)

    async def __call__(self, work: Callable[[], Any]) -> Any:
        def run():
            self.mem.refresh()
            return work()

        try:
            return await asyncio.wrap_future(self.pool.submit(run))
        except MemError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:
            log.exception("internal error in an MCP call")
            raise ToolError(f"internal error: {describe(exc)}") from None

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def client_name(ctx: Context) -> str:
    """`mcp:<name>` from the clientInfo the client sent when it connected."""
    params = ctx.session.client_params
    name = " ".join((params.client_info.name if params and params.client_info else "").split())
    return f"mcp:{name or 'unknown'}"


def tag_filter(tags) -> Filters:
    return Filters(tags=tuple(normalise_tags(tags)))


def build_server(mem: Mem) -> tuple[MCPServer, Worker]:
    worker = Worker(mem)
    server = MCPServer("mem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool()
    async def memory_write(
        content: Annotated[str, Field(description="The text to remember, in plain prose.")],
        ctx: Context,
        tags: Tags = None,
        source: Annotated[str | None, Field(description="Where it came from: a path or URI.")] = None,
    ) -> dict[str, Any]:
        """Remember a piece of text. Returns the stored memory; `duplicate: true` when the same text
        was already stored (nothing new is written then); `redacted` counts the secrets (by kind) that
        were replaced by [REDACTED:<kind>] before storing. A private key is refused."""
        written_by = client_name(ctx)
        result = await worker(lambda: mem.add(content, tags=tags, source=source, written_by=written_by))
        return result.memory.to_contract() | {"duplicate": result.duplicate, "redacted": result.redacted}

    @server.tool()
    async def memory_search(
        query: Annotated[str, Field(description="What to look for, in words.")],
        limit: Annotated[int, Field(ge=1, le=100, description="How many results at most.")] = 10,
        raw: Raw = False,
        tags: TagFilter = None,
    ) -> dict[str, Any]:
        """Find memories by words and meaning, best first, each with a `score`."""
        hits = await worker(lambda: mem.search(query, k=limit, filters=tag_filter(tags)))
        return {"memories": [hit.memory.to_contract(raw=raw, score=hit.score) for hit in hits]}

    @server.tool()
    async def memory_list(
        limit: Annotated[int, Field(ge=1, le=1000, description="How many memories at most.")] = 20,
        tags: TagFilter = None,
    ) -> dict[str, Any]:
        """The newest memories first."""
        memories = await worker(lambda: list(mem.list(tag_filter(tags), limit)))
        return {"memories": [memory.to_contract() for memory in memories]}

    @server.tool()
    async def memory_get(
        id: Annotated[str, Field(description="A memory id, or any unique prefix of one.")],
        raw: Raw = False,
    ) -> dict[str, Any]:
        """One memory by id."""
        memory = await worker(lambda: mem.get(id))
        return memory.to_contract(raw=raw)

    @server.tool()
    async def memory_delete(
        id: Annotated[str, Field(description="A memory id, or any unique prefix of one.")],
    ) -> dict[str, Any]:
        """Delete one memory. Returns its full id."""
        def delete():
            memory = mem.get(id)
            mem.remove([memory])
            return memory

        memory = await worker(delete)
        return {"deleted": memory.id}

    @server.tool()
    async def memory_context(
        query: Annotated[str, Field(description="What the memories should be about.")],
        budget: Annotated[int, Field(ge=1, description="The most tokens the block may take.")],
        raw: Raw = False,
        tags: TagFilter = None,
    ) -> dict[str, Any]:
        """The memories that best answer the query, packed into at most `budget` tokens: `text` is one
        line per memory (`[id date] content`), best first; `tokens` is what the whole text costs."""
        packed = await worker(lambda: mem.context(query, budget, raw=raw, filters=tag_filter(tags)))
        return packed.to_contract(raw=raw)

    return server, worker


def serve(mem: Mem) -> None:
    """Serve until the client closes stdin."""
    server, worker = build_server(mem)
    worker.warm_up()
    try:
        server.run("stdio")
    finally:
        worker.close()
