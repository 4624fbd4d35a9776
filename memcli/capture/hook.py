"""`mem hook`: one event from a coding assistant, in and out fast, never in the assistant's way.

It reads one JSON payload, redacts it, removes what the user marked `<private>`, appends it to the queue
of the store that the payload's `cwd` resolves to, answers SessionStart with the context the last drain
prepared, starts a detached drain when none runs, and returns. Whatever happens it exits 0 and prints
nothing but the event's protocol JSON; a problem is counted in the store's capture state (`mem status`).
Imports stay light (no click, no models, no index): the assistant waits for every synchronous hook.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from memcli.capture.events import BadPayload, event_key, normalise, strip_private
from memcli.capture.options import CaptureOptions
from memcli.capture.spool import Spool

ANSWERED = ("session_start",)  # the events whose output the client reads


def run(data: str, *, event: str | None = None, client: str | None = None, store_dir: Path | None = None,
        served: bool = False) -> str:
    """What to print for one payload (often nothing). Never raises. `served`: called by the hook server
    (memcli.capture.serve) rather than in a hook's own process."""
    if os.environ.get("MEM_CAPTURE", "1") == "0":
        return ""
    spool = None
    try:
        try:
            payload = json.loads(data)
        except ValueError:
            payload = None
        try:
            record = normalise(payload, event, client)
        except BadPayload as exc:
            spool = _spool(store_dir, payload.get("cwd") if isinstance(payload, dict) else None)
            if spool is not None:
                spool.count("bad payload", str(exc) if payload is not None else "not JSON")
            return ""
        spool = _spool(store_dir, record["cwd"])
        if spool is None:
            return ""
        root = spool.root.parent
        settings = store_settings(root)
        options = CaptureOptions.from_settings(settings.get("capture"))
        if not options.enabled:
            return ""
        answer = _answer(record, spool, options)
        record, private = strip_private(record)
        stored = _redacted(record, root, settings.get("redact"))
        if stored is None:
            spool.count("refused: a private key survived redaction")
            return answer
        stored["at"] = time.time()
        if private:
            stored["private"] = private
        spool.enqueue(event_key(stored), stored)
        if options.drain == "auto" and not served:  # a server starts the drain after it has answered
            start_background(spool, served)
        return answer
    except Exception as exc:  # noqa: BLE001 - a hook never fails the assistant; the count says what happened
        if spool is not None:
            spool.count("hook error", f"{type(exc).__name__}: {exc}")
        return ""


def _spool(store_dir: Path | None, cwd: str | None) -> Spool | None:
    """The capture folder of the store `cwd` resolves to (a project's .mem/ first), None without a store."""
    from memcli.store.where import find_store

    here = Path(cwd) if cwd and os.path.isabs(cwd) and os.path.isdir(cwd) else None
    root = find_store(store_dir, here)
    return Spool(root) if root.is_dir() else None


def store_settings(root: Path) -> dict:
    """mem.yaml's mapping; YAML is parsed only when the file holds a `capture:` or `redact:` entry worth it."""
    from memcli.store.where import SETTINGS_FILE

    try:
        text = (root / SETTINGS_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    if "capture:" not in text and "regex" not in text:
        return {}
    from memcli.store.yamlfile import load

    data = load(text)
    return data if isinstance(data, dict) else {}


def _redacted(record: dict, root: Path, patterns) -> dict | None:
    from memcli.errors import Refused
    from memcli.privacy.gate import Gate

    home = root.parent if root.name == ".mem" else root
    try:
        return Gate(home, patterns if isinstance(patterns, list) else []).screen(record)[0]
    except Refused:
        return None


def _answer(record: dict, spool: Spool, options: CaptureOptions) -> str:
    if record["event"] not in ANSWERED:
        return ""
    context = trim(spool.context(), options.inject_chars)
    if not context:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}},
                      ensure_ascii=False)


def trim(text: str, room: int) -> str:
    """At most `room` characters, cut at a line end."""
    if len(text) <= room:
        return text.strip()
    cut = text.rfind("\n", 0, room)
    return text[: cut if cut > 0 else room].strip()


def start_background(spool: Spool, served: bool) -> None:
    """Start what is not running: the hook server (when this is a hook's own process), which later hooks
    relay to, and the drain, which turns the queue into memories. Both detached from the client."""
    if not served and not spool.serving():
        _spawn(spool.root.parent, "serve")
    elif not spool.drain_running():
        _spawn(spool.root.parent, "drain", "--linger", "15", "--background")


def _spawn(root: Path, *command: str) -> None:
    import subprocess

    subprocess.Popen([sys.executable, "-m", "memcli", "--dir", str(root), "capture", *command],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True, cwd=str(root))
