"""`mem hook`'s one front door: the payload goes to the warm hook server of its store when one listens
(memcli.capture.hook_socket), else this process does the work (memcli.capture.hook).

Redaction compiles some ninety patterns, which costs a fresh process more than the rest of the hook. A
hook server started by a hook stays up a while after the last event (`capture.serve_seconds`) with those
patterns compiled, so most hooks here only find the store, connect, send the raw bytes and print the
answer. Imports until then: os, sys, json, _socket.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    """`mem hook [EVENT] [--client NAME] [--dir PATH]`, the payload on stdin; always 0."""
    event, client, store_dir = _arguments(argv)
    try:  # bytes, whatever the locale says stdin is: a byte that is not UTF-8 must not lose the event
        raw = getattr(sys.stdin, "buffer", None)
        data = "" if sys.stdin.isatty() else decoded(raw.read()) if raw is not None else sys.stdin.read()
    except (OSError, UnicodeDecodeError):
        data = ""
    answer = handle(data, event, client, store_dir)
    if answer:
        sys.stdout.write(answer + "\n")
    return 0


def decoded(raw: bytes) -> str:
    """A payload's text: UTF-8 (a byte that is not kept as an escape, memcli.capture.events.well_formed
    marks it), or UTF-16/32 when a byte-order mark says so (a Windows shell's pipe); the mark itself goes."""
    import codecs

    for mark, encoding in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                           (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if raw.startswith(mark):
            return raw.decode(encoding, "replace")
    return raw.removeprefix(codecs.BOM_UTF8).decode("utf-8", "surrogateescape")


def handle(data: str, event: str | None, client: str | None, store_dir: str | None) -> str:
    """What to print for one payload (often nothing), by the store's server or by this process."""
    if os.environ.get("MEM_CAPTURE", "1") == "0":
        return ""
    from memcli.capture.hook_socket import ask
    from memcli.store.where import locate

    try:
        payload = json.loads(data)
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
    except (ValueError, RecursionError):  # the hook counts it
        cwd = None
    cwd = cwd if isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd) else None
    root = locate(store_dir, cwd)[0]
    answer = ask(root, data, event, client) if root is not None else None
    if answer is None:
        from pathlib import Path

        from memcli.capture.hook import run

        answer = run(data, event=event, client=client, store_dir=Path(store_dir) if store_dir else None)
    return answer


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
