"""The thread tools: append to a conversation, get it back as a chat-API message list, list threads.

thread_append answers as soon as the messages are on disk; folding old turns into summaries (what
`mem thread append` does in a detached process) is left to the server's idle worker (memcli.core.idle).
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp_types import CallToolResult
from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from memcli.mcp.toolbox import Toolbox, reply
from memcli.threads.chat_prompt import DEFAULT_BUDGET

ThreadId = Annotated[str, Field(description="A thread id as thread_list shows it (a short id), the full id from "
                                            "thread_append, or any unique beginning of one.")]


class MessageIn(TypedDict):
    role: Annotated[Literal["system", "user", "assistant", "model", "tool"],
                    Field(description="Who speaks; 'model' is another name for assistant.")]
    content: str
    name: NotRequired[Annotated[str, Field(description="The speaker's or tool's name.")]]


class ChatMessage(TypedDict):
    role: str
    content: str
    name: NotRequired[str]


class Appended(TypedDict):
    thread: str
    ids: Annotated[list[str], Field(description="The ids of the stored messages, in order.")]
    redacted: NotRequired[Annotated[dict[str, int], Field(description="Secrets replaced, by kind.")]]


class Conversation(TypedDict):
    messages: Annotated[list[ChatMessage], Field(description="Ready to send to a chat API, oldest first.")]
    tokens: int
    budget: int
    left_out_turns: NotRequired[Annotated[int, Field(description="Older turns neither shown nor summarised within the budget.")]]
    left_out_sentences: NotRequired[Annotated[int, Field(description="Sentences of the summaries left out to fit the budget.")]]
    left_out_facts: NotRequired[Annotated[int, Field(description="Facts of the summaries (names, dates, numbers, "
                                                                 "preferences, decisions) the messages no longer hold.")]]
    shortened: NotRequired[Annotated[str, Field(description="What was shortened, in a sentence.")]]


class ThreadRow(TypedDict):
    id: str
    title: NotRequired[str]
    created_at: str
    messages: int
    folded: int
    updated_at: NotRequired[str]


class Threads(TypedDict):
    threads: list[ThreadRow]


def register(box: Toolbox) -> None:
    @box.tool(Appended)
    async def thread_append(
        messages: Annotated[list[MessageIn], Field(min_length=1, description="The messages to add, in order.")],
        thread: Annotated[str | None, Field(description="The thread to add to; leave out to start a new one.")] = None,
        title: Annotated[str | None, Field(description="A title, when starting a new thread.")] = None,
    ) -> CallToolResult:
        """Add messages to a conversation thread (short-term memory), starting one when `thread` is left
        out; returns the thread id to pass next time. Older turns are later folded into summaries that
        thread_context uses and memory_search finds."""
        def append(mem):
            from memcli.threads.storage import Threads as Store
            from memcli.threads.summarize import fold_due, put_fold

            threads = Store(mem)
            thread_id = threads.resolve(thread) if thread else threads.create(title).id
            stored, redacted = threads.append(thread_id, [dict(m) for m in messages])
            if fold_due(mem, thread_id):
                put_fold(mem, thread_id)  # the server's runner folds it when idle
            return thread_id, threads.short_ids()[thread_id], stored, redacted

        thread_id, short, stored, redacted = await box.run(append)
        structured = {"thread": thread_id, "ids": [m.id for m in stored]}
        if redacted:
            structured["redacted"] = redacted
        return reply(structured, f"Stored {len(stored)} message(s) in thread {short}.")

    @box.tool(Conversation, read_only=True)
    async def thread_context(
        thread: ThreadId,
        budget: Annotated[int, Field(ge=1, description="The most tokens the messages may take.")] = DEFAULT_BUDGET,
    ) -> CallToolResult:
        """A thread as the message list a chat API takes, within `budget` tokens: a system message with
        summaries of older turns, then the newest turns verbatim. Use it to continue a conversation."""
        def build(mem):
            from memcli.threads.chat_prompt import build
            from memcli.threads.storage import Threads as Store

            threads = Store(mem)
            thread_id = threads.resolve(thread)
            return build(threads.messages(thread_id), threads.folds(thread_id), budget, mem.token_counter())

        built = await box.run(build)
        structured = {"messages": built.messages, "tokens": built.tokens, "budget": budget}
        for key in ("left_out_turns", "left_out_sentences", "left_out_facts"):
            if getattr(built, key):
                structured[key] = getattr(built, key)
        lines = [f"{m['role']}{' (' + m['name'] + ')' if m.get('name') else ''}: {m['content']}" for m in built.messages]
        if built.left_out_sentences or built.left_out_turns or built.left_out_summaries:
            structured["shortened"] = built.report()
            lines.append(f"[{built.report()}]")
        return reply(structured, "\n".join(lines) or "The thread is empty.")

    @box.tool(Threads, read_only=True)
    async def thread_list() -> CallToolResult:
        """The conversation threads, most recently active first: id, title, how many messages and how
        many of them are folded into summaries."""
        def listing(mem):
            from memcli.threads.storage import Threads as Store

            threads = Store(mem)
            return threads.list(), threads.short_ids()

        found, short = await box.run(listing)
        rows = [info.to_dict() for info in found]
        lines = [f"{short[r['id']]} {r['messages']} messages ({r['folded']} folded) {r.get('title', '')}".rstrip()
                 for r in rows]
        return reply({"threads": rows}, "\n".join(lines) or "No threads yet.")
