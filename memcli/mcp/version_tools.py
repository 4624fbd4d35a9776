"""memory_update, and what the write tools say about versions (memcli/core/writing.py): the memories a
write replaced, and the current ones it is close to, so the assistant can make it an update."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from memcli.mcp.toolbox import Toolbox, client_name, reply


class Close(TypedDict):
    id: str
    score: Annotated[float, Field(description="How close, 0-1 (MiniLM cosine).")]
    content: str


class Versioned(TypedDict):
    """What memory_write and memory_update return."""

    id: str
    duplicate: Annotated[bool, Field(description="The same text was stored already; nothing new was written.")]
    written_by: str
    optimized: NotRequired[bool]
    tags: NotRequired[list[str]]
    source: NotRequired[str]
    redacted: NotRequired[Annotated[dict[str, int], Field(description="Secrets replaced by [REDACTED:<kind>], by kind.")]]
    replaces: NotRequired[Annotated[list[str], Field(description="The versions this memory now replaces.")]]
    similar: NotRequired[Annotated[list[Close], Field(description="Current memories saying nearly the same.")]]
    unchanged: NotRequired[Annotated[bool, Field(description="The memory already said that; nothing was written.")]]


def written_reply(written, short_id) -> CallToolResult:
    """The structured result (full ids) and the sentence a model reads, for any write (short ids, as
    results show them; on the library's thread, where `short_id` asks the catalog)."""
    memory = written.memory
    structured = {"id": memory.id, "duplicate": written.duplicate, "written_by": memory.written_by}
    structured |= {key: value for key, value in memory.to_contract().items() if key in ("optimized", "tags", "source")}
    extra = {"redacted": written.redacted, "replaces": [m.id for m in written.replaced],
             "similar": [close.to_contract() for close in written.similar], "unchanged": written.unchanged}
    structured |= {key: value for key, value in extra.items() if value}
    said = [f"{'Already stored' if written.duplicate or written.unchanged else 'Stored'} as {short_id(memory.id)}."]
    if written.replaced:
        said.append(f"It replaces {', '.join(short_id(m.id) for m in written.replaced)}, which searches no longer "
                    "return.")
    if written.redacted:
        said.append(f"Redacted {sum(written.redacted.values())} secret(s): {', '.join(sorted(written.redacted))}.")
    if written.similar and not written.replaced:
        said.append("Current memories that say nearly the same: " + "; ".join(
            f"{short_id(c.memory.id)} ({c.score:.2f}) {' '.join(c.memory.content.split())}" for c in written.similar)
            + ". If the new text replaces one of them, call memory_update with that id and the same content "
              "(nothing is stored twice).")
    return reply(structured, " ".join(said))


def register(box: Toolbox) -> None:
    @box.tool(Versioned, idempotent=True)
    async def memory_update(
        id: Annotated[str, Field(description="The memory to replace: its id or short id.")],
        content: Annotated[str, Field(description="What it says now, in plain prose (the whole text).")],
        ctx: Context,
        tags: Annotated[list[str] | str | None,
                        Field(description="Tags of the new version (default: those of the old one).")] = None,
    ) -> CallToolResult:
        """Replace a memory whose fact changed (a new port, a moved date, a reversed decision): the new
        text becomes the current version and searches stop returning the old one, which is kept as
        history. Use it instead of memory_write when a memory already says something that is no
        longer true, or when memory_write reports a similar memory that the new text replaces."""
        from memcli.core.writing import update

        written_by = client_name(ctx)
        return await box.run(lambda mem: written_reply(update(mem, id, content, tags=tags, written_by=written_by),
                                                       mem.catalog.short_id))
