"""The stdio transport, answering the messages the SDK drops.

The SDK's stdio reader hands the session an exception for a line that is not a JSON-RPC message, and
the session only logs it: a client that sent `{bad json`, or a `tools/call` whose `params` is a string,
would wait forever for a reply. Here every such line gets the JSON-RPC answer: -32700 (parse error)
for a line that is not JSON, -32600 (invalid request) for JSON that is not a valid message, with the
request's id when it has a usable one (else null, as JSON-RPC 2.0 says). Everything else, and the SDK's
own handling of stdin and stdout (fd 1 pointed at stderr while serving), is unchanged.
"""

from __future__ import annotations

import contextlib
from typing import Any

import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError


def answer_for(exc: Exception) -> types.JSONRPCError | None:
    """The error reply to a line the SDK could not read as a message; None for anything else."""
    if not isinstance(exc, ValidationError):
        return None
    errors = exc.errors()
    if any(error.get("type") == "json_invalid" for error in errors):
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    message = next((error["input"] for error in errors if isinstance(error.get("input"), dict)), None)
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        request_id = None
    where = "; ".join(".".join(map(str, error.get("loc", ()))) + ": " + error.get("msg", "") for error in errors[:3])
    return _error(request_id, types.INVALID_REQUEST, f"Invalid request: not a JSON-RPC 2.0 message ({where})")


def _error(request_id, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class Answering:
    """The read side of the transport: passes messages through, answers the lines that are not one."""

    def __init__(self, inner, write_stream):
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self):
        while True:
            item = await self._inner.receive()
            reply = answer_for(item) if isinstance(item, Exception) else None
            if reply is None:
                return item
            await self._write.send(SessionMessage(reply))

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def answering_stdio_server():
    """The SDK's stdio_server, with the read side that answers malformed lines."""
    async with stdio_server() as (read_stream, write_stream):
        yield Answering(read_stream, write_stream), write_stream
