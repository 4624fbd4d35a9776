"""What a tool event says, as the text of an observation: the tool, the files it read or changed, the
command and whether it failed, and its output (head and tail), so that compression by kind sees a diff,
a test run or a traceback for what it is. Or why it says nothing worth keeping (a skip reason)."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field

SHELL = {"Bash", "shell", "exec_command", "run_shell_command", "local_shell", "container.exec"}
READ = {"Read", "read_file", "read_many_files", "NotebookRead", "view"}
EDIT = {"Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch", "replace", "write_file", "edit_file"}
SEARCH = {"Grep", "search_file_content", "grep", "rg"}
# What a shell output says when the command failed though the client reported no exit status.
FAILURE = re.compile(r"(?m)\b\d+ failed\b|^FAILED |^ERROR |Traceback \(most recent call last\)|^error(?:\[\w+\])?: |"
                     r"command not found|No such file or directory|exit (?:code|status) [1-9]")
PATH_KEYS = ("file_path", "path", "notebook_path", "absolute_path", "dir_path", "filename")


@dataclass
class Observation:
    tool: str
    text: str
    files_read: list[str] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    command: str | None = None
    failed: bool = False


def paths_of(record: dict) -> list[str]:
    """The file paths a tool event names (its input's path fields, and the files an apply_patch touches),
    relative to the session's folder when inside it."""
    tool_input = record.get("input")
    found = []
    if isinstance(tool_input, dict):
        for key in PATH_KEYS:
            if isinstance(tool_input.get(key), str) and tool_input[key]:
                found.append(tool_input[key])
        for key in ("paths", "file_paths"):
            if isinstance(tool_input.get(key), list):
                found += [p for p in tool_input[key] if isinstance(p, str)]
        patch = tool_input.get("patch") or tool_input.get("input")
        if isinstance(patch, str):
            found += _patched_files(patch)
    elif isinstance(tool_input, str) and record.get("tool") == "apply_patch":
        found += _patched_files(tool_input)
    return [_relative(p, record.get("cwd") or "") for p in dict.fromkeys(found)]


def observe(record: dict, max_chars: int) -> Observation:
    tool, tool_input = record.get("tool", "unknown"), record.get("input")
    fields = tool_input if isinstance(tool_input, dict) else {}
    output = _output_text(record.get("output"))
    error = record.get("error") or ""
    failed = bool(record.get("failed"))
    paths = paths_of(record)
    status = "failed" if failed else "ok"
    if tool in SHELL:
        failed = failed or bool(FAILURE.search(error or output))
        status = "failed" if failed else "ok"
        command = fields.get("command") if isinstance(fields.get("command"), str) else _text(fields.get("command"))
        head = f"{tool}: ran `{command}` ({status})"
        if isinstance(fields.get("description"), str):
            head += f": {fields['description']}"
        return Observation(tool, _join(head, _clip(error or output, max_chars)), command=command, failed=failed)
    if tool in EDIT:
        body = _edit_diff(fields, paths)
        head = f"{tool}: changed {', '.join(paths) or 'a file'}" + (f" ({status}: {error})" if failed else "")
        return Observation(tool, _join(head, _clip(body, max_chars)), files_changed=paths, failed=failed)
    if tool in READ:
        lines = output.count("\n") + 1 if output else 0
        return Observation(tool, f"{tool}: read {', '.join(paths) or 'a file'} ({lines} lines)"
                           + (f"; failed: {error}" if failed else ""), files_read=paths, failed=failed)
    if tool in SEARCH:
        pattern = fields.get("pattern") or fields.get("query") or ""
        where = f" in {', '.join(paths)}" if paths else ""
        return Observation(tool, _join(f"{tool}: searched for `{pattern}`{where}", _clip(output, max_chars // 3)),
                           files_read=paths)
    described = json.dumps(tool_input, ensure_ascii=False)[:400] if tool_input else ""
    return Observation(tool, _join(f"{tool} ({status}) {described}".strip(), _clip(error or output, max_chars // 2)),
                       files_read=paths, failed=failed)


def read_digest(record: dict) -> str:
    """What a read returned, as a short hash: the same file read again unchanged has the same one."""
    return hashlib.sha256(_output_text(record.get("output")).encode("utf-8", "replace")).hexdigest()[:16]


def _edit_diff(fields: dict, paths: list[str]) -> str:
    name = paths[0] if paths else "file"
    edits = fields.get("edits") if isinstance(fields.get("edits"), list) else [fields]
    parts = []
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        old, new = edit.get("old_string", edit.get("old_str")), edit.get("new_string", edit.get("new_str"))
        if isinstance(old, str) and isinstance(new, str):
            parts.append("".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                      f"a/{name}", f"b/{name}", n=1)))
    if parts:
        return "\n".join(p if p.endswith("\n") else p + "\n" for p in parts).rstrip("\n")
    for key in ("patch", "input", "content", "new_source"):
        if isinstance(fields.get(key), str):
            return fields[key]
    return ""


def _patched_files(patch: str) -> list[str]:
    files = []
    for line in patch.splitlines():
        for mark in ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "+++ b/"):
            if line.startswith(mark):
                files.append(line[len(mark):].strip())
    return files


def _relative(path: str, cwd: str) -> str:
    if cwd and os.path.isabs(path):
        rel = os.path.relpath(path, cwd)
        if not rel.startswith(".."):
            return rel
    return path


def _output_text(output) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        parts = []
        for key in ("stdout", "output", "content", "result", "text", "stderr"):
            value = output.get(key)
            if isinstance(value, dict):  # Claude Code's Read: {"file": {"content": ...}}
                value = value.get("content")
            if isinstance(value, str) and value:
                parts.append(value)
        if isinstance(output.get("file"), dict):
            parts.append(_output_text(output["file"]))
        return "\n".join(parts) if parts else json.dumps(output, ensure_ascii=False)
    return _text(output)


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(_text(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _clip(text: str, room: int) -> str:
    """Head and tail of a long output: a test run's verdict and a traceback's last line are at the end."""
    text = text.strip()
    if len(text) <= room:
        return text
    head = text[: room * 2 // 5].rsplit("\n", 1)[0]
    tail = text[-(room * 3 // 5):].split("\n", 1)[-1]
    skipped = text.count("\n") - head.count("\n") - tail.count("\n")
    return f"{head}\n[... {skipped} lines left out ...]\n{tail}"


def _join(head: str, body: str) -> str:
    return f"{head}\n{body}" if body else head
