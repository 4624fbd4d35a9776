"""Codex CLI's config.toml, as far as mem's hooks need it: the MCP server `mem`, and whether Codex has
recorded its trust in mem's hooks.

Codex keeps MCP servers as `[mcp_servers.NAME]` tables (`command`, `args`) in `$CODEX_HOME/config.toml`
(`~/.codex` by default) or a trusted project's `.codex/config.toml`; `codex mcp add mem -- mem mcp`
writes the same table. mem adds that table at the end of the file, as text, so every other line, comment
and format stays as the user wrote it, and takes out only a table that is exactly what it added.

Codex runs a non-managed hook only after the user trusts it (in the TUI's /hooks, or for one run with
`--dangerously-bypass-hook-trust`): it records `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]
trusted_hash = ...` in the user's config.toml, a hash of the entry as it was trusted. mem reads whether
such a record exists for each of its entries; it does not compute the hash, so an entry changed since
(another --command) still shows as recorded until Codex itself asks again.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from memcli.errors import InputError

LABELS = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
          "PostToolUse": "post_tool_use", "Stop": "stop"}


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex"))


def config_path(scope: str, project: Path) -> Path:
    return codex_home() / "config.toml" if scope == "user" else Path(project) / ".codex" / "config.toml"


def _table(command: str) -> str:
    return f'[mcp_servers.mem]\ncommand = {_toml_string(command)}\nargs = ["mcp"]\n'


def add_mcp(path: Path, command: str) -> bool:
    """Add `[mcp_servers.mem]` unless a server `mem` is there; whether the file changed."""
    text = _read(path)
    if "mem" in _parse(text, path).get("mcp_servers", {}):
        return False
    joined = text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text.strip() else "")
    new = joined + _table(command)
    if _parse(new, path).get("mcp_servers", {}).get("mem") != {"command": command, "args": ["mcp"]}:
        raise InputError(f"{path}: adding [mcp_servers.mem] would not read back as written; add it by hand")
    _write(path, new)
    return True


def remove_mcp(path: Path, is_mem_command) -> bool:
    """Take out the `[mcp_servers.mem]` table mem added (only when it holds just mem's command and args)."""
    if not path.is_file():
        return False
    text = _read(path)
    server = _parse(text, path).get("mcp_servers", {}).get("mem")
    if not (isinstance(server, dict) and set(server) == {"command", "args"} and server["args"] == ["mcp"]
            and is_mem_command(server["command"])):
        return False
    block = re.compile(r"\n?^" + re.escape(_table(server["command"])), re.MULTILINE)
    new, count = block.subn("", text, count=1)
    if count != 1 or "mem" in _parse(new, path).get("mcp_servers", {}):
        return False
    _write(path, new)
    return True


def trust(hooks_file: Path, entries: list[tuple[str, int, int]]) -> tuple[int, int]:
    """How many of mem's entries (event, group index, handler index) in `hooks_file` Codex has a trust
    record for, of how many."""
    try:
        state = _parse(_read(codex_home() / "config.toml"), codex_home() / "config.toml")
    except InputError:
        state = {}
    records = state.get("hooks", {}).get("state", {}) if isinstance(state.get("hooks"), dict) else {}
    records = records if isinstance(records, dict) else {}
    sources = {os.path.abspath(hooks_file), os.path.realpath(hooks_file)}
    found = 0
    for event, group, handler in entries:
        keys = {f"{source}:{LABELS.get(event, event)}:{group}:{handler}" for source in sources}
        if any(isinstance(records.get(key), dict) and records[key].get("trusted_hash") for key in keys):
            found += 1
    return found, len(entries)


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in escaped) + '"'


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path} ({exc}); mem leaves it as it is") from None


def _parse(text: str, path: Path) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"cannot read {path} as TOML ({exc}); mem leaves it as it is") from None


def _write(path: Path, text: str) -> None:
    from memcli.capture.settings_file import write_text

    write_text(path, text)
