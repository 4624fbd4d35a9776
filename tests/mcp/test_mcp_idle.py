"""`mem mcp` with a compression server: a write is stored at once, and the server's idle worker
compresses it once no request has come for idle_seconds (the MCP package's own client, over stdio)."""

from __future__ import annotations

import time

from mcp_client import call, session
from provider_helpers import GOOD_LINE, NOTE, stored, use_server
from script_server import ScriptServer

IDLE_S = 2.0
WAIT_S = 60.0


def test_writes_are_deferred_and_compressed_when_idle():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url, idle_seconds=IDLE_S)

        async def scenario(client):
            import anyio

            written = await call(client, "memory_write", content=NOTE, tags=["billing"])
            returned_at = time.time()
            pending = stored(written["id"])["compression"]
            sent_during_write = len(server.requests)
            local = await call(client, "memory_write", content=NOTE + " Kept here.", local_only=True)
            deadline = time.monotonic() + WAIT_S
            while stored(written["id"])["compression"]["status"] == "pending" and time.monotonic() < deadline:
                await anyio.sleep(0.2)  # polling the file, not the server: no MCP request in between
            return written["id"], local["id"], pending, sent_during_write, returned_at

        memory_id, local_id, pending, sent_during_write, returned_at = session(scenario)
    assert pending == {"status": "pending", "raw_tokens": len(NOTE.split())} and sent_during_write == 0
    memory = stored(memory_id)
    assert memory["compressed"] == GOOD_LINE and memory["compression"]["method"] == "facts"
    assert len(server.requests) == 1  # the local-only memory never went out
    assert server.requests[0]["at"] - returned_at >= IDLE_S - 0.05
    assert stored(local_id)["send_to_remote"] is False
