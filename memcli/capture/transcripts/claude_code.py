"""Claude Code's transcripts: `~/.claude/projects/<folder>/<session>.jsonl` (`$CLAUDE_CONFIG_DIR` moves
`~/.claude`), where <folder> is the session's folder with every character but a letter or a digit made
`-`, and a session's sub-agents in `<session>/subagents/agent-*.jsonl`.

Each line is an object with `type`: `user` (a prompt, or the `tool_result` blocks of the tool calls
before it, with the tool's own output in `toolUseResult`, which is what PostToolUse hands a hook as
`tool_response`), `assistant` (text, thinking and `tool_use` blocks, one block a line), `system`
(`compact_boundary` with `compactMetadata.trigger`; `stop_hook_summary` and `turn_duration` where a
turn ended) and others (`progress`, `file-history-snapshot`, `queue-operation`, `summary`) that say
nothing a hook would. Lines of a sub-agent (`isSidechain`) give their tool calls, as PostToolUse does,
but never a prompt or an answer. What Claude Code itself writes as a user line (a slash command's
`<command-name>`, a local command's output, a task notification, "[Request interrupted by user]", the
summary that continues a compacted session) is not a prompt.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Iterator

from memcli.capture.transcripts import Tally, parsed, seconds, texts

CLIENT = "claude-code"
NOT_PROMPTS = ("<command-name>", "<command-message>", "<local-command-", "<bash-input>", "<bash-stdout>",
               "<bash-stderr>", "<task-notification>", "[Request interrupted by user", "Caveat: The messages below")
ERROR_TAG = re.compile(r"</?tool_use_error>")


def home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def folder_name(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def found(project: str) -> list[Path]:
    """The transcripts of sessions run in `project` or a folder below it (a folder whose name only looks
    like one of them is sorted out later, by the cwd its lines give)."""
    root, name = home() / "projects", folder_name(project)
    if not root.is_dir():
        return []
    files: list[Path] = []
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and (folder.name == name or folder.name.startswith(name + "-")):
            files += files_in(folder)
    return files


def files_in(folder: Path) -> list[Path]:
    """A folder's transcripts, each session's sub-agents after it."""
    files = []
    for path in sorted(folder.glob("*.jsonl")):
        files.append(path)
        files += sorted((folder / path.stem / "subagents").glob("*.jsonl"))
    return files


def payloads(lines: Iterable[bytes], path: Path, tally: Tally) -> Iterator[tuple[dict, float]]:
    """The hook payloads one transcript stands for, in order, each with the time it happened."""
    subagent = path.parent.name == "subagents"
    transcript = str(path.parent.parent.parent / f"{path.parent.parent.name}.jsonl") if subagent else str(path)
    base: dict = {}
    calls: dict[str, tuple[str, object]] = {}  # tool_use id -> (tool, input), until its result comes
    turn = {"answer": "", "id": None, "at": 0.0}
    at = 0.0

    def event(name: str, **fields) -> tuple[dict, float]:
        return {**base, "hook_event_name": name, **fields}, at

    def stop():
        if turn["answer"]:
            payload, _ = event("Stop", last_assistant_message=turn["answer"], prompt_id=turn["id"], stop_hook_active=False)
            yield payload, turn["at"]
        turn["answer"], turn["id"] = "", None

    for line in lines:
        record = parsed(line, path, tally)
        if record is None:
            continue
        at = seconds(record.get("timestamp"), at)
        if isinstance(record.get("sessionId"), str) and isinstance(record.get("cwd"), str):
            if not base and not subagent:
                base = {"session_id": record["sessionId"], "transcript_path": transcript, "cwd": record["cwd"],
                        "permission_mode": record.get("permissionMode") or "default"}
                yield event("SessionStart", source="startup")
            base = {**base, "session_id": record["sessionId"], "cwd": record["cwd"], "transcript_path": transcript,
                    "permission_mode": record.get("permissionMode") or base.get("permission_mode", "default")}
        if not base:
            continue
        kind, side = record.get("type"), bool(record.get("isSidechain")) or subagent
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        content = message.get("content")
        if kind == "assistant" and message.get("model") == "<synthetic>":
            continue  # Claude Code's own placeholder ("No response requested." on a resume): no model said it
        if kind == "assistant" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    calls[block["id"]] = (str(block.get("name") or "unknown"), block.get("input"))
                elif block.get("type") == "text" and not side and str(block.get("text") or "").strip():
                    turn["answer"], turn["at"] = block["text"].strip(), at
                    turn["id"] = turn["id"] or record.get("uuid")
        elif kind == "user" and isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                    yield _tool(event, block, calls.pop(block["tool_use_id"]), record.get("toolUseResult"))
        elif kind == "user" and not side and _is_prompt(record, content):
            yield from stop()
            turn["id"] = record.get("uuid")
            yield event("UserPromptSubmit", prompt=texts(content), prompt_id=record.get("uuid"))
        elif kind == "system" and record.get("subtype") == "compact_boundary" and not side:
            meta = record.get("compactMetadata") if isinstance(record.get("compactMetadata"), dict) else {}
            yield event("PreCompact", trigger=str(meta.get("trigger") or "auto"), custom_instructions=None)
        elif kind == "system" and record.get("subtype") in ("stop_hook_summary", "turn_duration") and not side:
            yield from stop()
    yield from stop()


def _is_prompt(record: dict, content) -> bool:
    if record.get("isMeta") or record.get("isCompactSummary") or record.get("isVisibleInTranscriptOnly"):
        return False
    text = texts(content).strip()
    return bool(text) and not text.startswith(NOT_PROMPTS)


def _tool(event, block: dict, call: tuple[str, object], result) -> tuple[dict, float]:
    """PostToolUse with the tool's output as Claude Code hands it to a hook, or PostToolUseFailure with
    the error text the model was shown ("Exit code N", stderr, stdout for a command)."""
    name, tool_input = call
    fields = {"tool_name": name, "tool_input": tool_input if isinstance(tool_input, dict) else {},
              "tool_use_id": block["tool_use_id"]}
    if block.get("is_error"):
        error = ERROR_TAG.sub("", texts(block.get("content"))).strip()
        return event("PostToolUseFailure", **fields, error=error, is_interrupt=False)
    response = result if result is not None and not isinstance(result, str) else texts(block.get("content"))
    return event("PostToolUse", **fields, tool_response=response)
