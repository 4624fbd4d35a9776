"""Gemini CLI's transcripts: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.json`, where <project>
is the SHA-256 of the project's root folder (or, in later versions, a name for it beside a
`.project_root` file that holds the folder). One JSON object a session, as its ChatRecordingService
writes it: `{sessionId, projectHash, startTime, lastUpdated, messages}`, each message `{id, timestamp,
type, content}`, `type` `user` (a prompt), `gemini` (an answer, and its `toolCalls`: `{id, name, args,
result, status, resultDisplay}`, `result` the function response the model got) or `info`/`error`/
`warning` (the CLI's own notices); a message's content is a string or a list of parts (`{"text": ...}`).
A `.jsonl` file (0.61) is a log: a header line (`sessionId`, `projectHash`, `startTime`; again when the
session is resumed), each message as a line when it is written and again, whole, when it changes (a
`gemini` message first without its toolCalls, then with them once they ran), and `{"$set": ...}` /
`{"$rewindTo": id}` lines that change the session's fields or take messages back. The hooks saw every
message as it happened, so an import reads the message lines in order, each prompt and answer once and
each tool call once it has a result, and leaves the `$set`/`$rewindTo` lines (a resume's `$set` repeats
what came before).

The file holds no folder: the session's cwd is the project the file's folder names (the one its hash or
its `.project_root` gives), else the folder `mem import` runs in. A `.json` file is one object, read
whole, one session at a time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path
from typing import Iterable, Iterator

from memcli.capture.transcripts import Tally, parsed, seconds, texts

CLIENT = "gemini"
NOT_PROMPTS = ("<session_context>",)  # the CLI's own first message of a session: the folder, the date
DONE = ("success", "error", "cancelled")  # a tool call's status once it ran


def home() -> Path:
    return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"


def project_hash(project: str) -> str:
    return hashlib.sha256(project.encode("utf-8", "surrogateescape")).hexdigest()


def found(project: str) -> list[Path]:
    root = home() / "tmp"
    if not root.is_dir():
        return []
    folders = [root / project_hash(project)]
    for marker in sorted(root.glob("*/.project_root")):
        try:
            if marker.read_text(encoding="utf-8").strip() == project:
                folders.append(marker.parent)
        except (OSError, UnicodeDecodeError):
            continue
    return [path for folder in dict.fromkeys(folders) for path in files_in(folder)]


def files_in(folder: Path) -> list[Path]:
    chats = folder / "chats" if (folder / "chats").is_dir() else folder
    return sorted(p for p in chats.glob("session-*") if p.suffix in (".json", ".jsonl"))


def project_of_file(path: Path, fallback: str) -> str:
    """The project a session file belongs to: its folder's `.project_root`, else `fallback` (the project
    whose hash named the folder, or the folder the import runs in)."""
    folder = path.parent.parent if path.parent.name == "chats" else path.parent
    try:
        root = (folder / ".project_root").read_text(encoding="utf-8").strip()
        if root:
            return root
    except (OSError, UnicodeDecodeError):
        pass
    return fallback


def messages(lines: Iterable[bytes], path: Path, tally: Tally) -> tuple[dict, Iterator[dict]]:
    """(the session's header, its messages): a `.json` file whole, a `.jsonl` one a line."""
    if path.suffix == ".json":
        data = parsed(b"".join(line for line in lines if not isinstance(line, Exception)), path, tally) or {}
        listed = data.get("messages") if isinstance(data.get("messages"), list) else []
        return data, iter(m for m in listed if isinstance(m, dict))
    iterator = (parsed(line, path, tally) for line in lines)
    header: dict = {}
    for record in iterator:
        if record is not None and "sessionId" in record:
            header = record
            break

    def rest():
        for record in iterator:
            if record is not None and record.get("type") in ("user", "gemini") and "$set" not in record:
                yield record

    return header, rest()


def payloads(lines: Iterable[bytes], path: Path, tally: Tally, cwd: str = "") -> Iterator[tuple[dict, float]]:
    header, said = messages(lines, path, tally)
    if not isinstance(header.get("sessionId"), str):
        return
    cwd = project_of_file(path, cwd)
    at = seconds(header.get("startTime"))
    base = {"session_id": header["sessionId"], "transcript_path": str(path), "cwd": cwd}
    turn = {"prompt": "", "answer": "", "id": None, "at": at}

    def event(name: str, when: float | None = None, **fields) -> tuple[dict, float]:
        when = at if when is None else when
        stamp = dt.datetime.fromtimestamp(when, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        return {**base, "hook_event_name": name, "timestamp": stamp, **fields}, when

    def stop():
        if turn["answer"]:
            yield event("AfterAgent", turn["at"], prompt=turn["prompt"], prompt_response=turn["answer"],
                        stop_hook_active=False, prompt_id=turn["id"])
        turn["answer"] = ""

    yield event("SessionStart", source="startup")
    seen: set = set()  # prompts (by message id) and tool calls (by call id) already told
    for message in said:
        at = seconds(message.get("timestamp"), at)
        said_text = texts(message.get("content")).strip()
        if message.get("type") == "user" and said_text and not said_text.startswith(NOT_PROMPTS):
            if ("prompt", message.get("id")) in seen:
                continue
            seen.add(("prompt", message.get("id")))
            yield from stop()
            turn["prompt"], turn["id"] = texts(message["content"]), message.get("id")
            yield event("BeforeAgent", prompt=turn["prompt"], prompt_id=message.get("id"))
        elif message.get("type") == "gemini":
            for n, call in enumerate(message.get("toolCalls") or []):
                key = ("call", call.get("id") or (message.get("id"), n)) if isinstance(call, dict) else None
                if key and call.get("name") and key not in seen and (call.get("result") or call.get("status") in DONE):
                    seen.add(key)
                    at = seconds(call.get("timestamp"), at)
                    yield _tool(event, call)
            if said_text:
                turn["answer"], turn["at"] = said_text, at
    yield from stop()



def _tool(event, call: dict) -> tuple[dict, float]:
    """AfterTool as Gemini hands it to a hook: the tool's llmContent (what the model got back),
    returnDisplay and error."""
    output, error = "", None
    for part in call.get("result") or []:
        response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict):
            output += str(response.get("output") or "")
            error = response.get("error") or error
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            output += part["text"]
    if call.get("status") in ("error", "cancelled") and not error:
        error = output or str(call.get("status"))
    response = {"llmContent": output, "returnDisplay": call.get("resultDisplay") or ""}
    if error:
        response["error"] = {"message": str(error)}
    return event("AfterTool", tool_name=str(call["name"]), tool_input=call.get("args") if isinstance(call.get("args"), dict) else {},
                 tool_response=response, tool_use_id=call.get("id"))
