"""The memory tools: write, search, list, get, delete, context.

Each result is read by a model, so it is written for one: the text block says each day once, then
one line per memory, its short id and content (the compressed form unless `raw`), the shape
memory_context packs (memcli.features.budget.block); the structured result (for programs) follows the read
contract of the README and says what the read cost in tokens against the raw texts (`tokens`,
`raw_tokens`).
"""

from __future__ import annotations

import functools
import inspect
from typing import Annotated, Callable, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from memcli.core import reading
from memcli.core.compressing import CompressOptions
from memcli.core.idle import defers_writes
from memcli.errors import MemError
from memcli.features.budget import DEFAULT_BUDGET, block
from memcli.features.budget import search_within
from memcli.features.result_layout import result_block, search_lines
from memcli.features.savings import read_cost
from memcli.index.filters import Filters
from memcli.mcp.toolbox import Toolbox, client_name, reply
from memcli.mcp.version_tools import Versioned, written_reply
from memcli.store.memory import normalise_tags
from memcli.util.words import counted

Tags = Annotated[list[str] | str | None, Field(description='Tags to file it under, e.g. ["infra", "billing"].')]
TagFilter = Annotated[list[str] | str | None, Field(description="Only memories that have all of these tags.")]
Since = Annotated[str | None, Field(description="Only memories created at or after this: a date, an ISO time, 3d, 2w, yesterday.")]
Until = Annotated[str | None, Field(description="Only memories created at or before this (same forms as since).")]
Source = Annotated[str | None, Field(description="Only memories whose source matches this glob, e.g. docs/*.")]
Mode = Annotated[Literal["hybrid", "vector", "text"],
                 Field(description="hybrid: words and meaning; vector: meaning only; text: words only.")]
MinScore = Annotated[float | None, Field(description="Leave out results scoring below this; 0 keeps every result. "
                                                     "By default a calibrated cut-off drops results with no real match.")]
Raw = Annotated[bool, Field(description="Give the full raw prose as `content` instead of the shorter form.")]
IncludeRaw = Annotated[bool, Field(description="Also give the raw prose as `content_raw` where it differs "
                                               "(costs tokens; for programs that keep both).")]
MemoryId = Annotated[str, Field(description="A memory id as results show it (or the full id).")]
AllVersions = Annotated[bool, Field(description="Also earlier versions that memory_update replaced (each says "
                                                "`superseded_by`).")]


FILTERS = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
           for name, kind, default in (("tags", TagFilter, None), ("since", Since, None), ("until", Until, None),
                                       ("source", Source, None), ("all_versions", AllVersions, False))]


def filtered(tool: Callable) -> Callable:
    """The filter arguments of every reading tool (tags, since, until, source, all_versions), declared
    once: they join the tool's own arguments, and the tool gets them parsed, as `filters`."""
    own = [param for param in inspect.signature(tool, eval_str=True).parameters.values() if param.name != "filters"]

    @functools.wraps(tool)
    async def with_filters(*, tags=None, since=None, until=None, source=None, all_versions=False, **arguments):
        try:
            filters = Filters.parse(normalise_tags(tags), since, until, source, all_versions)
        except MemError as exc:
            raise ToolError(str(exc)) from None
        return await tool(filters=filters, **arguments)

    with_filters.__signature__ = inspect.Signature(own + FILTERS, return_annotation=CallToolResult)
    return with_filters


class MemoryOut(TypedDict):
    id: str
    content: Annotated[str, Field(description="The compressed form, or the raw prose with raw: true or when there is no other.")]
    content_raw: NotRequired[Annotated[str, Field(description="The raw prose, with include_raw: true.")]]
    optimized: NotRequired[Annotated[bool, Field(description="True when a compressed form exists.")]]
    tags: NotRequired[list[str]]
    source: NotRequired[str]
    created_at: str
    score: NotRequired[float]
    superseded_by: NotRequired[Annotated[str, Field(description="A newer version replaced this one.")]]
    cut: NotRequired[Annotated[bool, Field(description="The text block shows one line of it (memory_search); "
                                                       "`content` here is whole.")]]


class Found(TypedDict):
    memories: list[MemoryOut]
    tokens: NotRequired[Annotated[int, Field(description="Tokens of the contents returned.")]]
    raw_tokens: NotRequired[Annotated[int, Field(description="Tokens the raw texts of the same memories would cost.")]]
    next_offset: NotRequired[Annotated[int, Field(description="More memories follow: pass this as offset.")]]


class Deleted(TypedDict):
    deleted: list[str]


class Scored(TypedDict):
    id: str
    score: float


class Packed(TypedDict):
    text: Annotated[str, Field(description="The block: each day once, then one line per memory.")]
    tokens: Annotated[int, Field(description="What the whole block costs.")]
    budget: int
    skipped: NotRequired[Annotated[int, Field(description="Results that did not fit in the budget.")]]
    memories: list[Scored]
    raw_tokens: NotRequired[Annotated[int, Field(description="Tokens the raw texts of the packed memories would cost.")]]


def counter(mem):
    """The token counter, or None when its model cannot be had (the counts are then left out)."""
    try:
        return mem.token_counter()
    except Exception:
        return None


def listing(mem, memories, *, raw: bool, include_raw: bool, scores=None, empty: str, query: str | None = None,
            mode: str = "hybrid") -> tuple[dict, str]:
    """The structured result and the text block of memories read by search or list. A search's block
    (`query`, neither `raw` nor `include_raw`) gives the first hits whole and the rest one line each
    (memcli.features.result_layout); the structured result always has every memory whole, and says
    which ones the block cut (`cut`)."""
    rows = [memory.to_contract(raw=raw, include_raw=include_raw, score=scores[n] if scores else None)
            for n, memory in enumerate(memories)]
    structured = {"memories": rows}
    count = counter(mem)
    if count is not None:
        structured |= read_cost(memories, count, raw=raw)
    if query is None or raw or include_raw:
        text = block(memories, mem.catalog.short_id, raw=raw, include_raw=include_raw)
    else:
        lines = search_lines(mem, memories, query, meaning=mode != "text")
        for row, line in zip(rows, lines):
            if line.cut:
                row["cut"] = True
        text = result_block(memories, lines, mem.catalog.short_id)
    return structured, text.rstrip("\n") or empty




def register(box: Toolbox) -> None:
    @box.tool(Versioned, idempotent=True)
    async def memory_write(
        content: Annotated[str, Field(description="The text to remember, in plain prose.")],
        ctx: Context,
        tags: Tags = None,
        source: Annotated[str | None, Field(description="Where it came from: a path or URI.")] = None,
        local_only: Annotated[bool, Field(description="Never send this memory to a compression server.")] = False,
        supersedes: Annotated[str | None, Field(description="The id of a memory this one replaces (its fact "
                                                            "changed); the same as memory_update.")] = None,
    ) -> CallToolResult:
        """Remember a piece of text (one idea per memory, with tags). Says the id it was stored under;
        writing the same text again stores nothing new and says so. Names current memories that say
        nearly the same (`similar`), so that one can be updated instead. Secrets are replaced by
        [REDACTED:<kind>] before storing; a private key is refused."""
        from memcli.core.writing import Text, write

        written_by = client_name(ctx)
        # Slow compression (a server, a large local model) is left to the idle worker: stored now.
        return await box.run(lambda mem: written_reply(
            write(mem, Text(content, tags or (), source, written_by, local_only=local_only), supersedes=supersedes,
                  on_similar=mem.settings.on_similar, compressing=CompressOptions(defer=defers_writes(mem))),
            mem.catalog.short_id))

    @box.tool(Found, read_only=True)
    @filtered
    async def memory_search(
        query: Annotated[str, Field(description="What to look for, in words.")],
        filters: Filters,
        limit: Annotated[int, Field(ge=1, le=100, description="How many results at most.")] = 10,
        mode: Mode = "hybrid",
        min_score: MinScore = None,
        raw: Raw = False,
        include_raw: IncludeRaw = False,
    ) -> CallToolResult:
        """Find memories by words and meaning, best first: each day once, then `ID content` per memory.
        The first two are whole; each one after them is the one sentence of it that best matches the
        query, ending in … where the memory says more: memory_get with its ID gives the whole memory.
        raw: true gives every memory whole, as raw prose. Use it to look something up; use
        memory_context instead to fill a prompt within a token budget. Nothing comes back when nothing
        matches well (min_score: 0 shows the best anyway)."""
        def search(mem):
            hits = reading.search(mem, query, k=limit, mode=mode, filters=filters, min_score=min_score)
            return listing(mem, [hit.memory for hit in hits], raw=raw, include_raw=include_raw,
                           scores=[hit.score for hit in hits], query=query, mode=mode,
                           empty="No memory matches well enough (min_score: 0 shows the closest ones).")

        return reply(*await box.run(search))

    @box.tool(Found, read_only=True)
    @filtered
    async def memory_list(
        filters: Filters,
        limit: Annotated[int, Field(ge=1, le=1000, description="How many memories at most.")] = 20,
        offset: Annotated[int, Field(ge=0, description="Skip this many (from next_offset of the previous page).")] = 0,
        raw: Raw = False,
        include_raw: IncludeRaw = False,
    ) -> CallToolResult:
        """The newest memories first: each day once, then `ID content` per memory. When more follow, the
        result says `next_offset`; pass it as offset for the next page."""
        def page(mem):
            memories = list(reading.listing(mem, filters, limit + 1, offset=offset))
            structured, text = listing(mem, memories[:limit], raw=raw, include_raw=include_raw,
                                       empty="No memories.")
            if len(memories) > limit:
                structured["next_offset"] = offset + limit
                text += ("" if text.endswith("\n") else "\n") + f"(more: offset {offset + limit})\n"
            return structured, text

        return reply(*await box.run(page))

    @box.tool(Found, read_only=True)
    async def memory_get(id: MemoryId, raw: Raw = False, include_raw: IncludeRaw = False) -> CallToolResult:
        """One memory by id, as `ID content` under its day (raw: true for the full prose): its
        current version, even when the id names one that an update replaced."""
        from memcli.core.writing import current

        return reply(*await box.run(lambda mem: listing(mem, current(mem, id)[1], raw=raw, include_raw=include_raw,
                                                        empty="")))

    @box.tool(Deleted, destructive=True, idempotent=True)
    async def memory_delete(
        ids: Annotated[list[str] | str, Field(description="Memory ids, as results show them, to delete.")],
    ) -> CallToolResult:
        """Delete memories for good, each with its earlier versions. Every id must name exactly one
        memory, or nothing is deleted. Says the full ids deleted."""
        from memcli.core.writing import remove
        from memcli.index.versions import own_versions

        def delete(mem):
            named = reading.resolve(mem, [ids] if isinstance(ids, str) else ids)
            memories = list({m.id: m for memory in named for m in own_versions(mem.catalog, memory.id)}.values())
            remove(mem, memories)
            return [memory.id for memory in memories]

        deleted = await box.run(delete)
        return reply({"deleted": deleted}, f"Deleted {', '.join(deleted)}.")

    @box.tool(Packed, read_only=True)
    @filtered
    async def memory_context(
        query: Annotated[str, Field(description="What the memories should be about.")],
        filters: Filters,
        budget: Annotated[int, Field(ge=1, description="The most tokens the block may take.")] = DEFAULT_BUDGET,
        limit: Annotated[int, Field(ge=1, le=100, description="How many search results to consider.")] = 20,
        mode: Mode = "hybrid",
        min_score: MinScore = None,
        raw: Raw = False,
        ids: Annotated[bool, Field(description="Put each memory's id before it, to act on it with memory_get, "
                                               "memory_update or memory_delete.")] = False,
    ) -> CallToolResult:
        """The memories that best answer the query, packed into at most `budget` tokens, ready to use
        as context: each day once, then one memory per line, best first (no ids unless `ids`). Says
        how many results did not fit. Use it to fill a prompt; use memory_search to look around."""
        def context(mem):
            packed = search_within(mem, query, budget, raw=raw, ids=ids, k=limit, mode=mode, filters=filters,
                                    min_score=min_score)
            structured = packed.to_contract()
            count = counter(mem)
            if count is not None:
                structured["raw_tokens"] = read_cost([hit.memory for hit in packed.hits], count)["raw_tokens"]
            note = f"({counted(packed.skipped, 'more result')} did not fit in {budget} tokens)" if packed.skipped else ""
            if not packed.hits:
                note = note or "No memory matches well enough (min_score: 0 takes the closest ones)."
            return structured, packed.text, note

        return reply(*await box.run(context))
