"""The first thing `mem hook` runs: hand the payload to the drain that serves this store, if one is up.

Redaction compiles some ninety patterns, which costs a fresh process more than the rest of the hook. A
drain started by a hook stays up a while after the last event (`capture.serve_seconds`), listening on
`.capture/hook.sock`, with those patterns compiled: this relay only finds the store, connects, sends the
raw bytes and prints the answer. The payload goes through a socket only this user can open, and is
redacted in the drain before anything is written. With no drain listening, the hook does the whole work
in this process (memcli.capture.hook). Imports: os, sys, json, _socket.
"""

from __future__ import annotations

import _socket  # the C module: socket.py costs a fresh process a few milliseconds more
import json
import os
import sys

SOCKET = os.path.join(".capture", "hook.sock")  # relative to the store: a unix socket path is short
TIMEOUT_S = 5.0


def main(argv: list[str]) -> int:
    event, client, store_dir = _arguments(argv)
    try:
        data = sys.stdin.read()
    except (OSError, UnicodeDecodeError):
        data = ""
    if os.environ.get("MEM_CAPTURE", "1") == "0":
        return 0
    answer = relay(data, event, client, store_dir)
    if answer is None:
        from pathlib import Path

        from memcli.capture.hook import run

        answer = run(data, event=event, client=client, store_dir=Path(store_dir) if store_dir else None)
    if answer:
        sys.stdout.write(answer + "\n")
    return 0


def relay(data: str, event: str | None, client: str | None, store_dir: str | None) -> str | None:
    """The drain's answer for this payload, or None when no drain serves the store (or it failed)."""
    from memcli.store.where import locate

    try:
        payload = json.loads(data)
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
    except ValueError:
        cwd = None
    cwd = cwd if isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd) else None
    root = locate(store_dir, cwd)[0]
    if root is None or not os.path.exists(os.path.join(root, SOCKET)):
        return None
    request = json.dumps({"data": data, "event": event, "client": client}).encode("utf-8", "surrogatepass")
    here = os.getcwd()
    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(TIMEOUT_S)
            os.chdir(root)
            try:
                conn.connect(SOCKET)
            finally:
                os.chdir(here)
            conn.sendall(request)
            conn.shutdown(_socket.SHUT_WR)
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
        finally:
            conn.close()
        reply = json.loads(b"".join(chunks) or b"null")
    except (OSError, ValueError):
        return None
    return reply.get("answer", "") if isinstance(reply, dict) else None


def _arguments(argv: list[str]) -> tuple[str | None, str | None, str | None]:
    """`[EVENT] [--client NAME] [--dir PATH]`."""
    event = client = store_dir = None
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--client" and args:
            client = args.pop(0)
        elif arg == "--dir" and args:
            store_dir = args.pop(0)
        elif not arg.startswith("-"):
            event = arg
    return event, client, store_dir
