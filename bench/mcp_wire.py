"""`mem mcp` on the raw stdio pipe, for this checkout and another: hostile lines answered, and writes
piped by a client that then closes its side of the pipe.

    .venv/bin/python bench/mcp_wire.py --against CHECKOUT [--writes 20]

For each checkout, in a fresh store with the real default models (so a write compresses for a while):
1. seven lines a careless or hostile client sends (a lone surrogate escape, ids that are an object, a
   boolean, a fraction or null, arguments nested 50,000 deep, invalid UTF-8), each followed by a ping:
   how many got a reply under the id the client waits on (null where the id is unusable);
2. WRITES `memory_write` requests piped at once, then EOF on stdin: how many were answered with a result,
   how many with an error, and how many memories the store holds afterwards.
Counts, not times: they do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANDSHAKE = [
    {"jsonrpc": "2.0", "id": "init", "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
LIST = {"name": "memory_list", "arguments": {}}
# (what it is, the line, the id its reply must carry)
HOSTILE = [
    ("lone surrogate escape", b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_write",'
                              b'"arguments":{"content":"half \\ud800 of a pair"}}}', 1),
    ("id an object", json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/call", "params": LIST}).encode(), None),
    ("id a boolean", json.dumps({"jsonrpc": "2.0", "id": True, "method": "tools/call", "params": LIST}).encode(), None),
    ("id a fraction", json.dumps({"jsonrpc": "2.0", "id": 1.5, "method": "tools/call", "params": LIST}).encode(), None),
    ("id null", json.dumps({"jsonrpc": "2.0", "id": None, "method": "tools/call", "params": LIST}).encode(), None),
    ("nested 50,000 deep", b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"memory_write",'
                           b'"arguments":{"content":"x","tags":' + b"[" * 50000 + b"]" * 50000 + b"}}}", 6),
    ("invalid UTF-8", b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_write",'
                      b'"arguments":{"content":"caf\xe9 on Main Street"}}}', 7),
]
NOTES = ["The staging database moved to db-{n}.internal on port 54{n:02d} after the outage review.",
         "Ana prefers the {n} o'clock standup; the team agreed to move it from Tuesday to Thursday.",
         "Deploys of service {n} now go through the canary pool first, then 10% of traffic for an hour."]


def env_for(code: Path, store: Path) -> dict:
    return dict(os.environ, PYTHONPATH=str(code), PYTHONSAFEPATH="1", MEM_DIR=str(store))


def hostile(code: Path, store: Path) -> list[tuple[str, bool]]:
    """(kind, answered under the right id before the ping after it) for each hostile line."""
    server = subprocess.Popen([sys.executable, "-m", "memcli", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env_for(code, store))
    buffer = b""

    def until(request_id) -> list[dict]:
        nonlocal buffer
        replies, deadline = [], time.monotonic() + 120
        while time.monotonic() < deadline:
            while b"\n" in buffer:
                text, buffer = buffer.split(b"\n", 1)
                replies.append(json.loads(text))
                if replies[-1].get("id") == request_id:
                    return replies
            if select.select([server.stdout], [], [], 1)[0]:
                chunk = os.read(server.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                buffer += chunk
        return replies

    def send(*lines: bytes) -> None:
        server.stdin.write(b"".join(line + b"\n" for line in lines))
        server.stdin.flush()

    send(*(json.dumps(m).encode() for m in HANDSHAKE))
    until("init")
    found = []
    for number, (kind, line, request_id) in enumerate(HOSTILE):
        ping = f"ping {number}"
        send(line, json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}).encode())
        replies = until(ping)
        found.append((kind, any(r.get("id") == request_id and "error" in r for r in replies[:-1])))
    server.stdin.close()
    server.wait(timeout=120)
    return found


def piped_writes(code: Path, store: Path, writes: int) -> tuple[int, int, int]:
    """(answered with a result, answered with an error, memories stored) after WRITES writes and EOF."""
    requests = [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
                 "params": {"name": "memory_write", "arguments": {"content": NOTES[n % 3].format(n=n)}}}
                for n in range(writes)]
    done = subprocess.run([sys.executable, "-m", "memcli", "mcp"], env=env_for(code, store), capture_output=True,
                          input=b"".join(json.dumps(m).encode() + b"\n" for m in HANDSHAKE + requests), timeout=1800)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    ok = sum(1 for r in replies if isinstance(r.get("id"), int) and "result" in r and not r["result"]["isError"])
    failed = sum(1 for r in replies if isinstance(r.get("id"), int) and ("error" in r or r["result"]["isError"]))
    listed = subprocess.run([sys.executable, "-m", "memcli", "ls", "--json", "-n", "0"], env=env_for(code, store),
                            capture_output=True, text=True)
    stored = len(json.loads(listed.stdout or "[]"))
    return ok, failed, stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="another checkout, e.g. one of main")
    parser.add_argument("--writes", type=int, default=20)
    args = parser.parse_args()
    rows = {}
    for name, code in (("this", ROOT), ("other", args.against.resolve())):
        with tempfile.TemporaryDirectory(prefix="mem-bench-wire-") as work:
            subprocess.run([sys.executable, "-m", "memcli", "init"], env=env_for(code, Path(work) / "a"),
                           capture_output=True, check=True)
            subprocess.run([sys.executable, "-m", "memcli", "init"], env=env_for(code, Path(work) / "b"),
                           capture_output=True, check=True)
            rows[name] = (hostile(code, Path(work) / "a"), piped_writes(code, Path(work) / "b", args.writes))
    print("| hostile line: answered under the id the client waits on | this checkout | other |\n|---|---|---|")
    for index, (kind, _, _) in enumerate(HOSTILE):
        print(f"| {kind} | {'yes' if rows['this'][0][index][1] else 'no'} | "
              f"{'yes' if rows['other'][0][index][1] else 'no'} |")
    print(f"\n| {args.writes} writes piped, then EOF | this checkout | other |\n|---|---|---|")
    for label, index in (("answered with a result", 0), ("answered with an error", 1), ("memories stored", 2)):
        print(f"| {label} | {rows['this'][1][index]} | {rows['other'][1][index]} |")


if __name__ == "__main__":
    main()
