"""What a tool event says, as the text of an observation: the tool, the files it read or changed, the
command and whether it failed, and its output (head and tail), so that compression by kind sees a diff,
a test run or a traceback for what it is. Or why it says nothing worth keeping (a skip reason)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import Callable

from memcli.capture import diffs
from memcli.capture.events import head_and_tail
from memcli.capture.shell_words import argv_command

SHELL = {"Bash", "shell", "exec_command", "run_shell_command", "local_shell", "container.exec"}
READ = {"Read", "read_file", "read_many_files", "NotebookRead", "view"}
EDIT = {"Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch", "replace", "write_file", "edit_file"}
SEARCH = {"Grep", "search_file_content", "grep_search", "grep", "rg"}
# What a shell output says when the command failed though the client reported no exit status.
# Test runners' own verdicts among them: go test's `--- FAIL:`/`FAIL`, mocha's `N failing`, jest's `Tests: N failed`,
# cargo's `test result: FAILED`.
FAILURE = re.compile(r"(?m)\b[1-9]\d* failed\b|^FAILED |^ERROR |Traceback \(most recent call last\)|^error(?:\[\w+\])?: |"
                     r"^(?:--- FAIL:|FAIL\b)|^\s*[1-9]\d* failing\b|^test result: FAILED\b|"
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
        patch = _patch_text(record)
        if patch:
            found += _patched_files(patch)
    elif _patch_text(record):
        found += _patched_files(_patch_text(record))
    return [_relative(p, record.get("cwd") or "") for p in dict.fromkeys(found)]


def observe(record: dict, max_chars: int, read: Callable[[str, str], str | None] = diffs.read_inside) -> Observation:
    """The observation of a tool event. `read(cwd, path)` is a file's current text for placing an edit's
    hunks and widening them to whole lines (memcli.capture.diffs), or None; what it returns ends up in
    the observation, so it must be text that may be kept (the runner's reader skips ignored files and
    redacts)."""
    tool, tool_input = record.get("tool", "unknown"), record.get("input")
    fields = tool_input if isinstance(tool_input, dict) else {}
    output = _output_text(record.get("output"))
    error = record.get("error") or ""
    failed = bool(record.get("failed"))
    paths = paths_of(record)
    status = "failed" if failed else "ok"
    if tool in SHELL:
        failed = failed or bool(FAILURE.search(error or output))
        command = argv_command(fields.get("command", fields.get("cmd")))  # Codex's exec_command: `cmd`, argv lists
        code = record.get("exit_code")
        head = f"{tool}: ran `{command}` ({'failed' if failed else 'ok'}{f', exit {code}' if code else ''})"
        if isinstance(fields.get("description"), str):
            head += f": {fields['description']}"
        return Observation(tool, _join(head, head_and_tail(_both(error, output), max_chars)), command=command, failed=failed)
    if tool in EDIT:
        body, done = _edit(record, fields, paths, read)
        head = f"{tool}: {done or 'changed ' + (', '.join(paths) or 'a file')}" + (f" ({status}: {error})" if failed else "")
        return Observation(tool, _join(head, head_and_tail(body, max_chars)), files_changed=paths, failed=failed)
    if tool in READ:
        lines = output.count("\n") + 1 if output else 0
        return Observation(tool, f"{tool}: read {', '.join(paths) or 'a file'} ({lines} lines)"
                           + (f"; failed: {error}" if failed else ""), files_read=paths, failed=failed)
    if tool in SEARCH:
        pattern = fields.get("pattern") or fields.get("query") or ""
        where = f" in {', '.join(paths)}" if paths else ""
        return Observation(tool, _join(f"{tool}: searched for `{pattern}`{where}", head_and_tail(output, max_chars // 3)),
                           files_read=paths)
    described = json.dumps(tool_input, ensure_ascii=False)[:400] if tool_input else ""
    return Observation(tool, _join(f"{tool} ({status}) {described}".strip(), head_and_tail(_both(error, output), max_chars // 2)),
                       files_read=paths, failed=failed)


def read_digest(record: dict) -> str:
    """What a read returned, as a short hash: the same file read again unchanged has the same one."""
    return hashlib.sha256(_output_text(record.get("output")).encode("utf-8", "replace")).hexdigest()[:16]


def _edit(record: dict, fields: dict, paths: list[str], read: Callable[[str, str], str | None]) -> tuple[str, str]:
    """The edit as a unified diff with its line numbers (memcli.capture.diffs), and for a patch what it did
    to each file ("changed a, added b"; empty when it only changed files)."""
    name = paths[0] if paths else "file"
    output, cwd = record.get("output"), record.get("cwd") or ""
    patch = _patch_text(record)
    if patch:
        diff, files = diffs.from_codex_patch(patch, lambda path: read(cwd, path))
        verbs = {"add": "added", "delete": "deleted", "update": "changed"}
        done = [f"moved {path} to {dest}" if dest else f"{verbs[action]} {path}" for action, path, dest in files]
        return diff or patch, ", ".join(done) if any(a != "update" or d for a, _, d in files) else ""
    if isinstance(output, dict) and output.get("structuredPatch"):
        return diffs.from_structured(name, output["structuredPatch"]), ""
    if isinstance(output, dict) and isinstance(output.get("fileDiff"), str):
        return diffs.from_file_diff(name, output["fileDiff"]), ""
    edits = fields.get("edits") if isinstance(fields.get("edits"), list) else [fields]
    pairs = [(e.get("old_string", e.get("old_str")), e.get("new_string", e.get("new_str"))) for e in edits
             if isinstance(e, dict)]
    pairs = [(old, new) for old, new in pairs if isinstance(old, str) and isinstance(new, str)]
    if pairs:
        source = next((fields[k] for k in PATH_KEYS if isinstance(fields.get(k), str)), name)
        return diffs.from_replacements(name, pairs, read(cwd, source)), ""
    content = fields.get("content", fields.get("new_source"))
    if isinstance(content, str) and isinstance(output, dict) and output.get("type") == "create":
        return diffs.from_codex_patch(f"*** Add File: {name}\n" + "".join(
            f"+{line}\n" for line in content.splitlines()), lambda path: None)[0], ""
    return (content if isinstance(content, str) else ""), ""


def _patch_text(record: dict) -> str:
    """The patch of a Codex apply_patch (`tool_input.command` in its hooks; `input` or the bare string in
    older payloads), else ""."""
    tool_input = record.get("input")
    if isinstance(tool_input, str):
        return tool_input if record.get("tool") == "apply_patch" else ""
    if not isinstance(tool_input, dict):
        return ""
    keys = ("command", "input", "patch") if record.get("tool") == "apply_patch" else ("patch",)
    text = next((tool_input[k] for k in keys if isinstance(tool_input.get(k), str)), "")
    return text if "*** " in text or record.get("tool") == "apply_patch" else ""


def _both(error: str, output: str) -> str:
    """A failure's cause and its output, both: the client's error line must not replace what explained it."""
    if not error or error.strip() in output:
        return output
    if not output or output.strip() in error:
        return error
    return f"{error}\n{output}"


def _patched_files(patch: str) -> list[str]:
    files = []
    for line in patch.splitlines():
        for mark in ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ", "+++ b/"):
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


def _join(head: str, body: str) -> str:
    return f"{head}\n{body}" if body else head
