"""One hook event from a coding assistant, in and out fast, never in the assistant's way: the work of
`mem hook` (memcli.capture.relay), here or in the store's warm hook server (memcli.capture.serve).

It reads one JSON payload, redacts it (the only redaction its texts get), removes what the user marked
`<private>`, queues it as a job of the work queue of the store that the payload's `cwd` resolves to,
answers SessionStart with the digest the last run prepared, starts what is not running (the hook server,
a background runner of the queue), and returns. Whatever happens it prints nothing but the event's
protocol JSON; a problem is counted in the store's capture state (`mem status`). Imports stay light (no
click, no models, no index): the assistant waits for every synchronous hook.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from memcli.capture.events import BadPayload, clipped, normalise, queue_event, strip_private
from memcli.capture.options import CaptureOptions
from memcli.capture.spool import Spool
from memcli.store.queue import WorkQueue, start_runner

ANSWERED = ("session_start",)  # the events whose output the client reads
CLIP_ROOM = 2  # a tool's text is cut, before redaction, to this many times what an observation keeps


def run(data: str, *, event: str | None = None, client: str | None = None, store_dir: Path | None = None,
        served: bool = False, recall=None) -> str:
    """What to print for one payload (often nothing). Never raises. `served`: called by the hook server
    (memcli.capture.serve) rather than in a hook's own process; `recall(prompt, options)`: the server's
    memories for a prompt (capture.prompt_context), which only a warm process can afford."""
    spool = None
    try:
        try:
            payload = json.loads(data)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than any client sends
            payload = None
        try:
            record = normalise(payload, event, client)
        except BadPayload as exc:
            spool = _spool(store_dir, payload.get("cwd") if isinstance(payload, dict) else None)
            if spool is not None:  # the reason may quote the payload: redacted like everything kept
                root = spool.root.parent
                detail = _redacted({"detail": str(exc)}, root, store_settings(root).get("redact")) or {}
                spool.count("bad payload", detail.get("detail", "") if payload is not None else "not JSON")
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
        _place_in_transcript(record)
        stored = kept(record, gate_of(root, settings), time.time(), options.max_output_chars * CLIP_ROOM)
        if stored is None:
            spool.count("refused: a private key survived redaction")
            return answer
        queue_event(WorkQueue(root), stored)
        spool.seen(stored.get("client", ""))
        if stored["event"] == "prompt" and recall is not None and options.prompt_context:
            answer = _protocol("UserPromptSubmit", recall(stored["prompt"], options))
        if options.drain == "auto" and not served:  # a server starts the runner after it has answered
            start_background(root, served)
        return answer
    except Exception as exc:  # noqa: BLE001 - a hook never fails the assistant; the count says what happened
        if spool is not None:
            spool.count("hook error", f"{type(exc).__name__}: {exc}")
        return ""


def _place_in_transcript(record: dict) -> None:
    """A prompt or an answer that the client names by no id is told apart from the same words said again
    later in the session by how long the session's transcript was when it came: two deliveries of one
    event see the same length, a later one a longer transcript. Only the file's size is looked at."""
    if record["event"] not in ("prompt", "stop") or any(k in record for k in ("tool_use_id", "turn_id", "prompt_id")):
        return
    path = record.get("transcript_path")
    if isinstance(path, str) and os.path.isabs(path):
        try:
            record["transcript_size"] = os.stat(path).st_size
        except (OSError, ValueError):
            pass


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


def kept(record: dict, gate, at: float, room: int) -> dict | None:
    """The event as it may be written, stamped `at`: what the user marked `<private>` removed (and
    counted), a tool's texts cut to `room` characters (memcli.capture.events.clipped), every string
    redacted; None when a private key survives redaction. The one way an event reaches the queue, from a
    live hook or from a transcript read afterwards (memcli.capture.past)."""
    from memcli.errors import Refused

    record, private = strip_private(record)
    try:
        stored = screened(gate, clipped(record, room))
    except Refused:
        return None
    stored["at"] = at
    if private:
        stored["private"] = private
    return stored


def gate_of(root: Path, settings: dict):
    """The gate that redacts the events of the store at `root`: the built-in secret shapes and mem.yaml's
    `redact` patterns."""
    from memcli.privacy.gate import Gate

    patterns = settings.get("redact")
    return Gate(root.parent if root.name == ".mem" else root, patterns if isinstance(patterns, list) else [])


def _redacted(record: dict, root: Path, patterns) -> dict | None:
    from memcli.errors import Refused

    try:
        return screened(gate_of(root, {"redact": patterns}), record)
    except Refused:
        return None


SEP = "\n\u241e\n"  # between the strings of a record redacted as one text (a symbol no payload uses)


def screened(gate, record: dict) -> dict:
    """What `gate.screen(record)` gives, in one redaction pass instead of two per string (a tool's event
    holds dozens of strings, and each pass runs every detector): every string, after the name of the key
    that holds it (as screen's second pass reads it), joined into one text, redacted, split back; a string
    a detector left alone but held under a secret-named key goes whole. When the text does not split back
    cleanly (a marker across a separator, the separator in a payload) or a number sits under a
    secret-named key, gate.screen does it the long way."""
    from memcli.privacy.detectors import held_secret

    leaves: list[tuple[str, str]] = []

    def collect(value, key: str) -> bool:
        if isinstance(value, str):
            leaves.append((key, value))
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(k, str):
                    leaves.append(("", k))
                if not collect(v, k if isinstance(k, str) else ""):
                    return False
        elif isinstance(value, list):
            return all(collect(item, key) for item in value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and held_secret(key, str(value)):
            return False
        return True

    if not collect(record, ""):
        return gate.screen(record)[0]
    heads = [f"{key}: " if key else "" for key, _ in leaves]
    parts = gate.redact(SEP.join(head + value for head, (_, value) in zip(heads, leaves))).text.split(SEP)
    if len(parts) != len(leaves) or not all(part.startswith(head) for part, head in zip(parts, heads)):
        return gate.screen(record)[0]
    cleaned = []
    for (key, value), head, part in zip(leaves, heads, parts):
        text = part[len(head):]
        kind = held_secret(key, value) if key and text == value else None
        cleaned.append(f"[REDACTED:{kind}]" if kind else text)
    texts = iter(cleaned)

    def rebuild(value):
        if isinstance(value, str):
            return next(texts)
        if isinstance(value, dict):
            return {(next(texts) if isinstance(k, str) else k): rebuild(v) for k, v in value.items()}
        if isinstance(value, list):
            return [rebuild(item) for item in value]
        return value

    return rebuild(record)


def _answer(record: dict, spool: Spool, options: CaptureOptions) -> str:
    if record["event"] not in ANSWERED:
        return ""
    from memcli.capture.projects import project_of

    return _protocol("SessionStart", trim(spool.context(project_of(record["cwd"])), options.inject_chars))


def _protocol(event: str, context: str) -> str:
    """The JSON a client reads from a hook that adds context (nothing when there is none)."""
    if not context:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}},
                      ensure_ascii=False)


def trim(text: str, room: int) -> str:
    """At most `room` characters, cut at a line end."""
    if len(text) <= room:
        return text.strip()
    cut = text.rfind("\n", 0, room)
    return text[: cut if cut > 0 else room].strip()


def start_background(root: Path, served: bool) -> None:
    """Start what is not running: the hook server (when this is a hook's own process), which later hooks
    relay to, and a runner of the store's work queue, which turns the events into memories. Both
    detached from the client."""
    if not served and not Spool(root).serving():
        import subprocess

        subprocess.Popen([sys.executable, "-m", "memcli", "--dir", str(root), "capture", "serve"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True, cwd=str(root))
    else:
        start_runner(root)
