"""Codex CLI's transcripts: the rollout files `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`
(`~/.codex` by default), one a session, as codex-rs/protocol's RolloutLine writes them:
`{"timestamp", "type", "payload"}` with type `session_meta` (the session's id and cwd), `turn_context`
(the turn's cwd and model), `response_item` (messages; `function_call`/`custom_tool_call` and their
`*_output` by `call_id`) and `event_msg` (the prompt as typed: `user_message` in earlier versions,
`item_completed` of a `UserMessage` item in 0.171; `task_complete`: the turn's last answer;
`agent_message`).

Codex's hooks name a shell call `Bash` with `{"command": <the command line>}` and an apply_patch
`apply_patch` with `{"command": <the patch>}`. A shell call's hook output is the command's output alone,
while the rollout keeps what the model got, under a header ("Chunk ID", "Wall time", "Process exited
with code N", "Output:"): the header is dropped, so an import stores what the hook stored (a real
session's hook payloads and rollout, tests/capture/fixtures/transcripts). An apply_patch's output is
the same string in both.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Iterable, Iterator

from memcli.capture.events import CODEX_EXEC
from memcli.capture.transcripts import Tally, parsed, seconds, texts

CLIENT = "codex"
SHELLS = {"shell", "exec_command", "shell_command", "container.exec", "local_shell", "unified_exec"}


def home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def found(project: str) -> list[Path]:
    """Every rollout file (which project a session ran in is in its first line, read as it streams)."""
    root = home() / "sessions"
    return sorted(root.rglob("rollout-*.jsonl")) if root.is_dir() else []


def files_in(folder: Path) -> list[Path]:
    return sorted(folder.rglob("rollout-*.jsonl"))


def payloads(lines: Iterable[bytes], path: Path, tally: Tally) -> Iterator[tuple[dict, float]]:
    base: dict = {}
    calls: dict[str, tuple[str, object]] = {}
    turn = {"answer": "", "at": 0.0, "prompt": None}
    at = 0.0

    def event(name: str, **fields) -> tuple[dict, float]:
        return {**base, "hook_event_name": name, **fields}, at

    def stop(answer: str | None = None):
        """Stop, when the turn ended (task_complete, stamped then) or the next prompt came (stamped at the
        turn's last answer)."""
        done = isinstance(answer, str) and answer.strip()
        answer = (answer if done else turn["answer"]).strip()
        if answer:
            payload, _ = event("Stop", last_assistant_message=answer, stop_hook_active=False)
            yield payload, at if done else turn["at"]
        turn["answer"] = ""

    for line in lines:
        record = parsed(line, path, tally)
        if record is None:
            continue
        at = seconds(record.get("timestamp"), at)
        kind, payload = record.get("type"), record.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta" and isinstance(payload.get("id"), str):
            first = not base
            base = {**base, "session_id": payload["id"], "transcript_path": str(path),
                    "cwd": str(payload.get("cwd") or base.get("cwd") or "")}
            if first:
                yield event("SessionStart", source="startup")
            continue
        if not base:
            continue
        if kind == "turn_context":
            base = {**base, "cwd": str(payload.get("cwd") or base["cwd"])}
            if isinstance(payload.get("model"), str):
                base["model"] = payload["model"]
            if isinstance(payload.get("turn_id"), str):
                base["turn_id"] = payload["turn_id"]
        elif kind == "event_msg":
            what = payload.get("type")
            if what == "task_started" and isinstance(payload.get("turn_id"), str):
                base["turn_id"] = payload["turn_id"]
            elif what in ("user_message", "item_completed") and (prompt := _prompt(payload)).strip():
                if turn["prompt"] != (base.get("turn_id"), prompt):  # a version that writes both says it twice
                    yield from stop()
                    yield event("UserPromptSubmit", prompt=prompt)
                    turn["prompt"] = (base.get("turn_id"), prompt)
            elif what == "agent_message" and str(payload.get("message") or "").strip():
                turn["answer"], turn["at"] = payload["message"], at
            elif what == "task_complete":
                yield from stop(payload.get("last_agent_message"))
            elif what == "turn_aborted":
                turn["answer"] = ""
        elif kind == "response_item":
            what = payload.get("type")
            if what in ("function_call", "custom_tool_call", "local_shell_call") and payload.get("call_id"):
                calls[str(payload["call_id"])] = (str(payload.get("name") or "local_shell"), _arguments(payload))
            elif what in ("function_call_output", "custom_tool_call_output") and str(payload.get("call_id")) in calls:
                call_id = str(payload["call_id"])
                yield _tool(event, call_id, calls.pop(call_id), payload.get("output"))
            elif what == "message" and payload.get("role") == "assistant" and texts(payload.get("content")).strip():
                turn["answer"], turn["at"] = texts(payload["content"]), at
    yield from stop()


def _prompt(payload: dict) -> str:
    """The prompt an `event_msg` holds: `user_message`'s message, or an `item_completed` UserMessage's text."""
    if payload.get("type") == "user_message":
        return str(payload.get("message") or "")
    item = payload.get("item")
    return texts(item.get("content")) if isinstance(item, dict) and item.get("type") == "UserMessage" else ""


def _arguments(payload: dict):
    if "input" in payload and payload.get("type") == "custom_tool_call":
        return payload["input"]
    if isinstance(payload.get("action"), dict):  # local_shell_call
        return payload["action"]
    try:
        return json.loads(payload.get("arguments") or "{}")
    except (TypeError, ValueError):
        return payload.get("arguments")


def _tool(event, call_id: str, call: tuple[str, object], output) -> tuple[dict, float]:
    name, args = call
    fields = args if isinstance(args, dict) else {}
    if name == "apply_patch":
        patch = args if isinstance(args, str) else fields.get("input") or fields.get("patch") or ""
        tool, tool_input = "apply_patch", {"command": patch}
    elif name in SHELLS:
        command = fields.get("cmd", fields.get("command"))
        if isinstance(command, list):
            command = command[-1] if command[:2] in (["bash", "-lc"], ["sh", "-c"]) else shlex.join(map(str, command))
        tool, tool_input = "Bash", {"command": str(command or "")}
        found = CODEX_EXEC.match(output) if isinstance(output, str) else None
        output = output[found.end():] if found else output
    else:
        tool, tool_input = name, fields
    if isinstance(output, dict):
        output = output.get("content") if isinstance(output.get("content"), str) else texts(output.get("content")) or json.dumps(output)
    return event("PostToolUse", tool_name=tool, tool_input=tool_input, tool_response=texts(output) if isinstance(output, list) else str(output or ""),
                 tool_use_id=call_id)
