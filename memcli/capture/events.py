"""One event record from whatever a client's hook sends: Claude Code, Codex CLI, Gemini CLI, or a generic
`{event, session, cwd, tool, input, output}`. Unknown fields are ignored; nothing here touches the disk.

The record: `event` (one of KINDS), `client`, `session`, `cwd`, and what the kind carries: `tool`,
`input`, `output`, `error`, `failed` for a tool; `prompt`; `message` (the assistant's last words);
`source`/`reason`; `tool_use_id`/`turn_id` when the client names the call.
"""

from __future__ import annotations

import hashlib
import json
import re

# The event names of each client, mapped to the kinds mem handles.
KINDS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "prompt", "BeforeAgent": "prompt", "prompt": "prompt",
    "PostToolUse": "tool", "PostToolUseFailure": "tool", "AfterTool": "tool", "tool": "tool",
    "Stop": "stop", "SubagentStop": "stop", "AfterAgent": "stop", "stop": "stop",
    "PreCompact": "compact", "PreCompress": "compact", "compact": "compact",
    "SessionEnd": "session_end", "session_end": "session_end",
    "session_start": "session_start",
}
GEMINI_EVENTS = {"BeforeAgent", "AfterAgent", "AfterTool", "PreCompress", "BeforeTool", "BeforeModel", "AfterModel"}
EXIT = re.compile(r"(?:Error: )?Exit code (\d+)")
CODEX_EXEC = re.compile(r"Exit code: (\d+)\nWall time: [^\n]*\n(?:[^\n]*\n){0,3}?Output:\n"
                        r"|(?:Chunk ID: [^\n]*\n)?Wall time: [^\n]*\nProcess exited with code (\d+)\n(?:[^\n]*\n){0,3}?Output:\n")
GEMINI_EXIT = re.compile(r"Command exited with code:? (\d+)\.?")
GEMINI_TRAILER = re.compile(r"(Exit Code|Signal|Background PIDs|Process Group PGID): (\S.*)")
PRIVATE_TAG = re.compile(r"<[ \t]*(/?)[ \t]*private[ \t]*>", re.IGNORECASE)

EVENT_JOB = "event"  # the kind of a captured event in the work queue
CAPTURE_SCOPE = "capture"  # every capture job shares it: one runner at a time, in the order of the events


class BadPayload(ValueError):
    """A payload mem cannot read as an event (named in `mem status`, never raised to the client)."""


def normalise(payload, event: str | None = None, client: str | None = None) -> dict:
    """The event record of one hook payload; BadPayload when it is not one."""
    if not isinstance(payload, dict):
        raise BadPayload("the payload is not a JSON object")
    name = str(event or payload.get("hook_event_name") or payload.get("event") or "")
    kind = KINDS.get(name)
    if kind is None:
        raise BadPayload(f"unknown hook event {name!r}" if name else "no hook event named")
    record = {
        "event": kind,
        "name": name,
        "client": client or _client(payload, name),
        "session": str(payload.get("session_id") or payload.get("session") or "unknown"),
        "cwd": str(payload.get("cwd") or ""),
    }
    for key in ("tool_use_id", "turn_id", "prompt_id", "transcript_path", "timestamp"):
        if isinstance(payload.get(key), str):
            record[key] = payload[key]
    if kind == "tool":
        record.update(_tool(payload, name))
    elif kind == "prompt":
        record["prompt"] = _text(payload.get("prompt") or payload.get("input"))
    elif kind == "stop":
        record["message"] = _text(payload.get("last_assistant_message") or payload.get("prompt_response")
                                  or payload.get("output"))
    else:
        reason = payload.get("source") or payload.get("reason") or payload.get("trigger")
        if reason:
            record["reason"] = str(reason)
    return record


def _client(payload: dict, name: str) -> str:
    if name in GEMINI_EVENTS or "timestamp" in payload:  # every Gemini payload carries its timestamp
        return "gemini"
    if "turn_id" in payload or "model" in payload:
        return "codex"
    if "transcript_path" in payload or "permission_mode" in payload:
        return "claude-code"
    return "hook"


def _tool(payload: dict, name: str) -> dict:
    tool_input = payload.get("tool_input", payload.get("input"))
    response = payload.get("tool_response", payload.get("output"))
    error = payload.get("error")
    exit_code = None
    if isinstance(response, dict) and ("llmContent" in response or "returnDisplay" in response):  # Gemini
        error = error or response.get("error")
        response, exit_code = _gemini_response(response)
    if isinstance(response, str) and CODEX_EXEC.match(response):  # Codex: "Exit code: N ... Output:" (apply_patch),
        found = CODEX_EXEC.match(response)  # "Wall time ... Process exited with code N ... Output:" (exec_command)
        response, exit_code = response[found.end():], int(found.group(1) or found.group(2))
    if isinstance(response, dict) and "structuredPatch" in response:  # Claude Code's Edit/Write: the hunks
        response = {k: v for k, v in response.items() if k != "originalFile"}  # say it; the whole file need not
    if isinstance(error, dict):
        error = error.get("message") or json.dumps(error, ensure_ascii=False)
    if isinstance(response, dict) and isinstance(response.get("exit_code"), int):
        exit_code = response["exit_code"]
    if exit_code is None and isinstance(error, str):  # Claude Code's failed Bash: "Exit code 2\n..."
        found = EXIT.match(error)
        exit_code = int(found.group(1)) if found else None
    failed = name == "PostToolUseFailure" or bool(error) or bool(exit_code)
    if isinstance(response, dict) and response.get("is_error") is True:
        failed = True
    record = {"tool": str(payload.get("tool_name") or payload.get("tool") or "unknown"),
              "input": tool_input if isinstance(tool_input, (dict, str)) else {},
              "output": response if isinstance(response, (dict, str, list)) else _text(response),
              "error": _text(error), "failed": failed}
    if exit_code is not None:
        record["exit_code"] = exit_code
    return record


def _gemini_response(response: dict) -> tuple[object, int | None]:
    """What Gemini's {llmContent, returnDisplay, error} says: for an edit, its diff (returnDisplay.fileDiff);
    for a shell command, the output and the exit code from `Output: ...` / `Exit Code: N` (returnDisplay
    holds only "Command exited with code: N" when the output was empty); else the text the model got."""
    display = response.get("returnDisplay")
    if isinstance(display, dict) and isinstance(display.get("fileDiff"), str):
        return {"fileDiff": display["fileDiff"], "isNewFile": bool(display.get("isNewFile"))}, None
    text = _unwrapped(_text(response.get("llmContent")))
    if not text.startswith("Output: "):
        found = GEMINI_EXIT.fullmatch(_text(display).strip())
        return (text or _text(display)), (int(found.group(1)) if found else None)
    lines, exit_code = text[len("Output: "):].split("\n"), None
    while lines and GEMINI_TRAILER.match(lines[-1]):
        found = GEMINI_TRAILER.match(lines.pop())
        if found.group(1) == "Exit Code" and found.group(2).strip().isdigit():
            exit_code = int(found.group(2))
    output = "\n".join(lines)
    return ("" if output == "(empty)" else output), exit_code


def _unwrapped(text: str) -> str:
    """Gemini wraps tool output for the model in <untrusted_context> tags: the text inside."""
    start, end = "<untrusted_context>\n", "\n</untrusted_context>"
    return text[len(start):-len(end)] if text.startswith(start) and text.endswith(end) else text


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content blocks: [{"type": "text", "text": ...}]
        return "\n".join(_text(v.get("text") if isinstance(v, dict) else v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def strip_private(value) -> tuple[object, int]:
    """The record as it may be written: every `<private>…</private>` span removed, and how many there
    were (what the user marked private is never written anywhere), every string well-formed.

    Strings are read in the record's order, values after their keys, and a span runs on from one string
    into the next until it closes: a span opened in one field and closed in a later one takes the fields
    between too, and one never closed takes the rest of the record. A `</private>` with no opening
    before it means the text began inside a span (a tool output cut at its start), so all before it in
    its string goes. A mapping key loses only the spans in it, never the record's structure: a span it
    leaves open takes its value."""
    count = 0

    def text(item: str, depth: int) -> tuple[str, int]:
        nonlocal count
        item = well_formed(item)
        if not depth and "private" not in item.lower():
            return item, depth
        cleaned, spans, depth = _without_private(item, depth)
        count += spans
        return cleaned, depth

    def walk(item, depth: int):
        if isinstance(item, str):
            return text(item, depth)
        if isinstance(item, dict):
            out = {}
            for key, value in item.items():
                if isinstance(key, str):
                    key, opened = text(key, 0)
                    depth = max(depth, opened)
                out[key], depth = walk(value, depth)
            return out, depth
        if isinstance(item, list):
            out = []
            for value in item:
                value, depth = walk(value, depth)
                out.append(value)
            return out, depth
        return item, depth

    return walk(value, 0)[0], count


_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")  # C0 controls but tab, newline, carriage return


def well_formed(text: str) -> str:
    """Text that can be written as UTF-8 and kept in a memory: a lone surrogate (an emoji cut in half by a
    client's truncation, sent as a `\\ud83d` escape), a byte that was not UTF-8 (read with
    surrogateescape) or a C0 control character (a NUL in a binary file's output; tab, newline and carriage
    return aside) becomes U+FFFD, a surrogate pair the character it stands for, so one bad character
    never loses a whole event."""
    text = _CONTROL.sub("\ufffd", text)
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


CLIPPED_FIELDS = ("input", "output", "error")
PEM_BEGIN, PEM_END = "-----BEGIN", "-----END"


def clipped(record: dict, room: int) -> dict:
    """The record with every string of a tool's input, output and error cut to its head and tail within
    `room` characters: done before redaction, so a tool that prints gigabytes costs the hook no more time
    or memory than one that prints a screen (an observation keeps less than this anyway)."""
    def cut(value):
        if isinstance(value, str):
            return head_and_tail(value, room)
        if isinstance(value, dict):
            return {key: cut(item) for key, item in value.items()}
        if isinstance(value, list):
            return [cut(item) for item in value]
        return value

    return {key: cut(value) if key in CLIPPED_FIELDS else value for key, value in record.items()}


def head_and_tail(text: str, room: int) -> str:
    """Head and tail of a long output: a test run's verdict and a traceback's last line are at the end.
    Cut at line ends, and never inside a PEM block (a key's BEGIN line without its END is refused whole
    by redaction, its body without BEGIN is not recognised): the part of a block a cut would split goes."""
    if len(text) <= room:
        return text  # whole, as sent: a diff's context line keeps its leading space
    text = text.strip()
    head = text[: room * 2 // 5].rsplit("\n", 1)[0]
    tail = text[-(room * 3 // 5):].split("\n", 1)[-1]
    opened = head.rfind(PEM_BEGIN)
    if opened >= 0 and head.find(PEM_END, opened) < 0:
        head = head[:opened].rstrip()
    closed = tail.find(PEM_END)
    if closed >= 0 and tail.rfind(PEM_BEGIN, 0, closed) < 0:
        after = tail.find("\n", closed)
        tail = tail[after + 1:] if after >= 0 else ""
    skipped = text.count("\n") - head.count("\n") - tail.count("\n")
    return f"{head}\n[... {skipped} lines left out ...]\n{tail}"


def _without_private(text: str, depth: int = 0) -> tuple[str, int, int]:
    """The text outside private spans (nested ones close with their outermost tag), given the depth of
    spans open at its start: (text, spans met, depth open at its end)."""
    kept: list[str] = []
    pos = spans = 0
    for tag in PRIVATE_TAG.finditer(text):
        if not tag.group(1):
            if depth == 0:
                kept.append(text[pos:tag.start()])
                spans += 1
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                pos = tag.end()
        else:
            kept, pos = [], tag.end()
            spans += 1
    if depth == 0:
        kept.append(text[pos:])
    return "".join(kept), spans, depth


def queue_event(queue, record: dict) -> bool:
    """Queue one redacted event as an `event` job of the store's work queue (memcli.store.queue; what it
    becomes: memcli.capture.event_jobs); False for a duplicate delivery (same key, waiting or done)."""
    return queue.put(EVENT_JOB, event_key(record), record, scope=CAPTURE_SCOPE, at=record.get("at"), once=True)


def event_key(record: dict) -> str:
    """The same event delivered twice (two hooks of one event, a retry, a hook and an import of its
    transcript) has the same key: the client's own call id when it gives one, else the record's content
    but when it came and whether an import read it."""
    if record.get("tool_use_id"):
        basis = [record["client"], record["session"], record["tool_use_id"]]
    else:
        basis = {k: v for k, v in record.items() if k not in ("at", "imported")}
    data = json.dumps(basis, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:32]
