"""The stdio transport: every request gets its reply, under the id its client waits on.

The SDK's stdio reader decodes stdin with replacement characters, hands the session an exception for a
line its parser refuses (which the session only logs), and takes a request whose id is an object, a
boolean or a fraction for a notification (never answered); at EOF the session cancels the requests still
running. A client of any of these would wait forever, or lose the writes it piped before closing.

So mem reads stdin itself, line by line, and answers here every line that is not a message it can serve:
-32700 for a line that is not UTF-8 or not JSON, -32600 for JSON that is not a valid request (an unusable
id, nesting deeper than the parser reads), -32602 for a string holding half a UTF-16 surrogate pair
(valid JSON, but not text). The reply carries the request's id when the line has a usable one, found
without the parser that refused it; else null, as JSON-RPC 2.0 says. At EOF it waits until every request
read has been answered, then ends the stream: a client that half-closes its pipe has everything it sent
done (and one that closes both ends has it done without replies, where the SDK's writer died of the
broken pipe). While serving, fd 0 points at the null device and fd 1 at stderr, as the SDK's own
transport does, so nothing the server runs reads the client's lines or writes into the protocol.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import sys
from collections import Counter
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

log = logging.getLogger("memcli")

# A refused line nested deeper than this is called too deep (a real request nests a few levels).
DEEP = 100

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^"{}\[\],:]+', re.S)
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)


def outline(text: str) -> tuple[dict[str, str], int]:
    """The members of the line's top-level object (name -> the value's JSON text) and how deep it nests,
    in one pass without recursion, so a line nested 50,000 deep or cut short still shows its id."""
    members: dict[str, str] = {}
    depth = deepest = 0
    last = name = None
    start = 0
    for token in _TOKEN.finditer(text):
        piece = token.group()
        if piece in ("{", "["):
            depth += 1
            deepest = max(deepest, depth)
        elif depth == 1 and piece in ("}", "]", ","):
            if name is not None:
                members[name] = text[start:token.start()].strip()
            last = name = None
            depth -= piece != ","
        elif piece in ("}", "]"):
            depth -= 1
        elif depth == 1 and piece == ":" and last is not None:
            name, start = last, token.end()
        elif depth == 1 and piece.startswith('"'):
            with contextlib.suppress(ValueError):
                last = json.loads(piece)
    return members, deepest


def usable_id(members: dict[str, str]) -> int | str | None:
    """The request's id when it is one a reply can carry (a string or an integer), else None."""
    try:
        value = json.loads(members.get("id", "null"))
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


def lone_surrogate(text: str) -> str | None:
    """The first `\\uD8xx`-`\\uDFxx` escape of the line that is not half of a whole pair, as written."""
    escapes = list(_ESCAPE.finditer(text))
    for index, escape in enumerate(escapes):
        code = int(escape.group(1) or "0", 16)
        if 0xD800 <= code <= 0xDBFF:
            following = escapes[index + 1] if index + 1 < len(escapes) else None
            if (following and following.start() == escape.end()
                    and 0xDC00 <= int(following.group(1) or "0", 16) <= 0xDFFF):
                continue
            return escape.group()
        if 0xDC00 <= code <= 0xDFFF:
            previous = escapes[index - 1] if index else None
            if not (previous and previous.end() == escape.start()
                    and 0xD800 <= int(previous.group(1) or "0", 16) <= 0xDBFF):
                return escape.group()
    return None


def read_line(raw: bytes) -> types.JSONRPCMessage | types.JSONRPCError | None:
    """The message on one line of stdin, or the error reply to it; None for a blank line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        members, _ = outline(raw.decode("utf-8", errors="replace"))
        return _error(usable_id(members), types.PARSE_ERROR,
                      f"Parse error: the line is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                      "nothing was done")
    if not text.strip():
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        return _refusal(text, exc)
    if isinstance(message, types.JSONRPCNotification):
        members, _ = outline(text)
        if "id" in members:  # a request whose id the parser could not take: not a notification
            return _error(None, types.INVALID_REQUEST,
                          f"Invalid request: the id must be a string or an integer, not {members['id'][:40]}")
    return message


def _refusal(text: str, exc: ValidationError) -> types.JSONRPCError:
    members, deepest = outline(text)
    request_id = usable_id(members)
    errors = exc.errors()
    if any(error.get("type") == "json_invalid" for error in errors):
        if deepest > DEEP:
            return _error(request_id, types.INVALID_REQUEST,
                          f"Invalid request: nested {deepest} levels deep, deeper than mem reads; nothing was done")
        half = lone_surrogate(text)
        if half:
            return _error(request_id, types.INVALID_PARAMS,
                          f"Invalid params: {half} is half of a UTF-16 surrogate pair, not a character; send the "
                          "character itself (or both halves of its pair). Nothing was done")
        return _error(request_id, types.PARSE_ERROR, "Parse error: the line is not JSON")
    where = "; ".join(".".join(map(str, error.get("loc", ()))) + ": " + error.get("msg", "") for error in errors[:3])
    return _error(request_id, types.INVALID_REQUEST, f"Invalid request: not a JSON-RPC 2.0 message ({where})")


def _error(request_id, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class Replies:
    """The write side: passes every message on, and knows which requests read are still unanswered."""

    def __init__(self, inner):
        self._inner = inner
        self._waiting: Counter = Counter()
        self._changed = anyio.Event()

    def expect(self, request_id) -> None:
        self._waiting[request_id] += 1

    def settle(self, request_id) -> None:
        """`request_id` needs no more answer (answered, or cancelled by its client)."""
        if self._waiting[request_id] > 0:
            self._waiting[request_id] -= 1
        self._waiting += Counter()  # drops the ids at zero
        self._changed.set()

    async def all_answered(self) -> None:
        while self._waiting:
            self._changed = anyio.Event()
            await self._changed.wait()

    async def send(self, item: SessionMessage) -> None:
        try:
            await self._inner.send(item)
        finally:
            if isinstance(item.message, (types.JSONRPCResponse, types.JSONRPCError)):
                self.settle(item.message.id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self):
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc) -> None:
        await self._inner.__aexit__(*exc)


async def _read(source, deliver, replies: Replies) -> None:
    async with deliver:
        async for raw in source:
            message = read_line(raw)
            if isinstance(message, types.JSONRPCError):
                await replies.send(SessionMessage(message))
            elif message is not None:
                if isinstance(message, types.JSONRPCRequest):
                    replies.expect(message.id)
                elif message.method == "notifications/cancelled":  # a cancelled request is never answered
                    replies.settle((message.params or {}).get("requestId"))
                await deliver.send(SessionMessage(message))
        await replies.all_answered()


class _Wire:
    """stdout's wire, written by the SDK's writer. Once the client has closed its end, replies are
    dropped (said once on stderr) and the requests already read still run to the end."""

    def __init__(self, file):
        self._file = anyio.wrap_file(io.TextIOWrapper(file, encoding="utf-8"))
        self._gone = False

    async def write(self, text: str) -> None:
        await self._guarded(self._file.write, text)

    async def flush(self) -> None:
        await self._guarded(self._file.flush)

    async def _guarded(self, call, *args) -> None:
        if self._gone:
            return
        try:
            await call(*args)
        except (BrokenPipeError, ConnectionResetError):
            self._gone = True
            log.warning("the client closed its end of stdout: the requests read are finished without replies")


@contextlib.contextmanager
def _claimed(fd: int, mode: str, divert):
    """The wire of fd 0 or 1 as a binary file for the transport. Meanwhile the fd itself points
    elsewhere (stdin at the null device, stdout at stderr), so nothing the server runs reads the
    client's lines or writes into the protocol."""
    wire = os.dup(fd)
    elsewhere = divert()
    os.dup2(elsewhere, fd)
    os.close(elsewhere)
    try:
        yield os.fdopen(wire, mode, closefd=False)  # a reading thread may still hold it: never closed under it
    finally:
        os.dup2(wire, fd)


@contextlib.asynccontextmanager
async def answering_stdio_server():
    """(read stream, write stream) for the session: stdin read here, each reply written by the SDK's
    writer onto stdout's wire."""
    sys.stdout.flush()
    with _claimed(0, "rb", lambda: os.open(os.devnull, os.O_RDONLY)) as stdin, \
            _claimed(1, "wb", lambda: os.dup(2)) as stdout:
        async with stdio_server(stdin=anyio.wrap_file(io.StringIO()), stdout=_Wire(stdout)) as (_, write_stream):
            replies = Replies(write_stream)
            deliver, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_read, anyio.wrap_file(stdin), deliver, replies)
                yield receive, replies
