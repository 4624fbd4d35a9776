"""`mem mcp` on the wire, as hostile or hurried clients speak it (and invalid
UTF-8): every request gets its JSON-RPC reply, under the id the client waits on, and a client that
closes its side of the pipe after its last request still has every write stored and answered.

The MCP package's own client cannot send any of these lines (it refuses lone surrogates and deep nesting,
and chooses its own ids), so they go over the raw stdio pipe of a real `mem mcp` process."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

import pytest
from helpers import ok
from locations import FAKE_MEM
from mcp_client import server_env

HANDSHAKE = [
    {"jsonrpc": "2.0", "id": "init", "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def line(message) -> bytes:
    return message if isinstance(message, bytes) else json.dumps(message).encode()


def write_call(request_id, content) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "memory_write", "arguments": {"content": content}}}


class Server:
    """A `mem mcp` child spoken to line by line."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, str(FAKE_MEM), "mcp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=os.environ | server_env())
        self.buffer = b""
        self.send(*HANDSHAKE)
        self.until("init")

    def send(self, *messages) -> None:
        self.process.stdin.write(b"".join(line(message) + b"\n" for message in messages))
        self.process.stdin.flush()

    def until(self, request_id) -> list[dict]:
        """The replies read up to and including the one to `request_id` (a safety bound of 60 s, so a
        server that never answers fails the test instead of hanging it)."""
        replies, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline:
            while b"\n" in self.buffer:
                text, self.buffer = self.buffer.split(b"\n", 1)
                replies.append(json.loads(text))
                if replies[-1].get("id") == request_id:
                    return replies
            ready, _, _ = select.select([self.process.stdout], [], [], 1)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 1 << 16)
                assert chunk, f"the server ended before answering {request_id!r}: {self.close()}"
                self.buffer += chunk
        raise AssertionError(f"no reply to {request_id!r} within 60 s; got {replies}")

    def answer_to(self, message) -> list[dict]:
        """What the server says to one line, then to a ping after it (which proves it still serves)."""
        self.send(message, {"jsonrpc": "2.0", "id": "still there?", "method": "ping"})
        replies = self.until("still there?")
        assert replies[-1] == {"jsonrpc": "2.0", "id": "still there?", "result": {}}
        return replies[:-1]

    def close(self) -> str:
        self.process.stdin.close()
        self.process.stdout.read()
        stderr = self.process.stderr.read().decode()
        self.process.wait(timeout=60)
        return stderr


@pytest.fixture
def server():
    ok("init")
    server = Server()
    yield server
    assert "Traceback" not in server.close()


def memory_list(server) -> str:
    server.send({"jsonrpc": "2.0", "id": "list", "method": "tools/call",
                 "params": {"name": "memory_list", "arguments": {}}})
    return server.until("list")[-1]["result"]["content"][0]["text"]


def test_a_lone_surrogate_escape_is_answered_under_the_requests_own_id(server):
    [reply] = server.answer_to(b'{"jsonrpc":"2.0","id":27,"method":"tools/call","params":'
                               b'{"name":"memory_write","arguments":{"content":"half an emoji \\ud83d here"}}}')
    assert reply["id"] == 27
    assert reply["error"]["code"] == -32602
    assert "surrogate" in reply["error"]["message"] and "\\ud83d" in reply["error"]["message"]
    assert "half an emoji" not in memory_list(server)


def test_a_whole_surrogate_pair_is_one_character_and_is_stored(server):
    server.send(b'{"jsonrpc":"2.0","id":28,"method":"tools/call","params":'
                b'{"name":"memory_write","arguments":{"content":"shipped it \\ud83d\\ude00 today"}}}')
    assert not server.until(28)[-1]["result"]["isError"]
    assert "shipped it \U0001F600 today" in memory_list(server)


@pytest.mark.parametrize("request_id", [{"a": 1}, True, False, 1.5, [1], None], ids=repr)
def test_a_request_whose_id_is_not_a_string_or_an_integer_is_answered_as_invalid(server, request_id):
    [reply] = server.answer_to({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                                "params": {"name": "memory_list", "arguments": {}}})
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600
    assert "id" in reply["error"]["message"]


def test_arguments_nested_50000_deep_are_answered_under_the_requests_own_id(server):
    deep = b"[" * 50_000 + b"]" * 50_000
    [reply] = server.answer_to(b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":'
                               b'{"name":"memory_write","arguments":{"content":"x","tags":' + deep + b"}}}")
    assert reply["id"] == "deep"
    assert reply["error"]["code"] == -32600
    assert "deep" in reply["error"]["message"]


def test_invalid_utf8_in_a_write_is_refused_not_stored_as_replacement_characters(server):
    [reply] = server.answer_to(line(write_call(29, "the caf_ on Main Street")).replace(b"caf_", b"caf\xe9"))
    assert reply["id"] == 29
    assert reply["error"]["code"] == -32700
    assert "UTF-8" in reply["error"]["message"] and "0xe9" in reply["error"]["message"]
    assert "Main Street" not in memory_list(server)


def test_a_client_that_closes_its_pipe_after_its_writes_has_every_write_stored_and_answered():
    ok("init")
    writes = [write_call(n, f"release note {n}: service {n} moved to the new cluster") for n in range(8)]
    done = subprocess.run([sys.executable, str(FAKE_MEM), "mcp"], env=os.environ | server_env(), timeout=120,
                          input=b"".join(line(message) + b"\n" for message in HANDSHAKE + writes),
                          capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    for n in range(8):
        assert "result" in replies[n] and not replies[n]["result"]["isError"], replies[n]
    listed = json.loads(ok("ls", "--json", "--raw", "-n", "0").stdout)
    assert sorted(memory["content"] for memory in listed) == sorted(w["params"]["arguments"]["content"]
                                                                     for w in writes)


def test_a_client_that_closes_both_ends_after_its_writes_still_has_every_write_stored():
    ok("init")
    writes = [write_call(n, f"incident note {n}: the pager rotation changed on day {n}") for n in range(8)]
    server = subprocess.Popen([sys.executable, str(FAKE_MEM), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=os.environ | server_env())
    server.stdin.write(b"".join(line(message) + b"\n" for message in HANDSHAKE + writes))
    server.stdin.close()
    server.stdout.close()
    stderr = server.stderr.read().decode()
    assert server.wait(timeout=120) == 0, stderr
    assert "Traceback" not in stderr and "closed its end of stdout" in stderr
    assert len(json.loads(ok("ls", "--json", "-n", "0").stdout)) == 8
