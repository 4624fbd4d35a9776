"""`mem hooks install|uninstall|status`: mem's entries in each client's hook settings, merged so that
other tools' hooks stay, and written again only when something changes (running it twice is a no-op).

All three clients read the same nesting: `{"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command",
"command": ..., "timeout"?}]}]}}`, in `.claude/settings.json`, `.codex/hooks.json`, `.gemini/settings.json`
(or the same under the home folder). Claude Code runs a hook in the background with `"async": true`;
the events whose output nobody reads (PostToolUse, Stop, SessionEnd) use it, while SessionStart and
UserPromptSubmit stay synchronous since their output is the context. Codex and Gemini have no background
mode: every hook runs in line, which is why `mem hook` only queues and returns.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memcli.errors import InputError
from memcli.util.fsutil import atomic_write

MARK = " hook --client "  # what makes a command mem's own (`mem hook --client <name> ...`)

# Per client: its settings file (project, user) and the events mem listens to, with whether each is async.
CLIENTS = {
    "claude-code": {
        "file": (".claude/settings.json", "~/.claude/settings.json"),
        "events": {"SessionStart": False, "UserPromptSubmit": False, "PostToolUse": True,
                   "PostToolUseFailure": True, "Stop": True, "PreCompact": True, "SessionEnd": True},
        "async": True,
    },
    "codex": {
        "file": (".codex/hooks.json", "~/.codex/hooks.json"),
        "events": {"SessionStart": False, "UserPromptSubmit": False, "PostToolUse": False, "Stop": False},
        "async": False,
    },
    "gemini": {
        "file": (".gemini/settings.json", "~/.gemini/settings.json"),
        "events": {"SessionStart": False, "BeforeAgent": False, "AfterTool": False, "AfterAgent": False,
                   "PreCompress": False, "SessionEnd": False},
        "async": False,
    },
}
# Where each client reads its MCP servers (Codex keeps them in config.toml: add `[mcp_servers.mem]` by hand).
MCP_FILES = {"claude-code": (".mcp.json", "~/.claude.json"), "gemini": (".gemini/settings.json", "~/.gemini/settings.json")}
TOOL_EVENTS = {"PostToolUse", "PostToolUseFailure", "AfterTool"}  # these take a tool matcher
TIMEOUT_S = 10


def settings_path(client: str, scope: str, project: Path) -> Path:
    project_file, user_file = CLIENTS[client]["file"]
    return Path(os.path.expanduser(user_file)) if scope == "user" else Path(project) / project_file


def install(client: str, scope: str, project: Path, command: str = "mem") -> tuple[Path, bool]:
    """Merge mem's entries into the client's settings; (the file, whether it changed)."""
    spec = CLIENTS[client]
    path = settings_path(client, scope, project)
    data = _read(path)
    before = json.dumps(data, sort_keys=True)
    hooks = _without_mem(data.setdefault("hooks", {}))
    data["hooks"] = hooks
    for event, background in spec["events"].items():
        entry = {"type": "command", "command": f"{command}{MARK}{client} {event}", "timeout": TIMEOUT_S}
        if background and spec["async"]:
            entry["async"] = True
        group = {"hooks": [entry]}
        if event in TOOL_EVENTS:
            group = {"matcher": "*", **group}
        hooks.setdefault(event, []).append(group)
    changed = json.dumps(data, sort_keys=True) != before
    if changed:
        _write(path, data)
    return path, changed


def install_mcp(client: str, scope: str, project: Path, command: str = "mem") -> tuple[Path, bool]:
    """Register `mem mcp` as the client's MCP server `mem`, unless a server of that name is there already;
    (the file, whether it changed). InputError for a client whose MCP settings are not JSON."""
    if client not in MCP_FILES:
        raise InputError(f"{client} keeps MCP servers in config.toml: add [mcp_servers.mem] with "
                         f'command = "{command}", args = ["mcp"] (README, Connecting an assistant)')
    project_file, user_file = MCP_FILES[client]
    path = Path(os.path.expanduser(user_file)) if scope == "user" else Path(project) / project_file
    data = _read(path)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InputError(f"{path}: 'mcpServers' is not a mapping; fix it by hand first")
    if "mem" in servers:
        return path, False
    servers["mem"] = {"command": command, "args": ["mcp"]}
    _write(path, data)
    return path, True


def uninstall(client: str, scope: str, project: Path) -> tuple[Path, bool]:
    path = settings_path(client, scope, project)
    if not path.is_file():
        return path, False
    data = _read(path)
    before = json.dumps(data, sort_keys=True)
    if isinstance(data.get("hooks"), dict):
        data["hooks"] = _without_mem(data["hooks"])
        if not data["hooks"]:
            del data["hooks"]
    changed = json.dumps(data, sort_keys=True) != before
    if changed:
        _write(path, data)
    return path, changed


def status(project: Path) -> list[dict]:
    """For each client and scope: the settings file and the events mem's hooks are installed for."""
    rows = []
    for client in CLIENTS:
        for scope in ("project", "user"):
            path = settings_path(client, scope, project)
            events = []
            if path.is_file():
                try:
                    hooks = _read(path).get("hooks", {})
                except InputError:
                    hooks = {}
                events = [event for event, groups in (hooks.items() if isinstance(hooks, dict) else [])
                          if any(_is_mem(h) for g in _list(groups) for h in _list(g.get("hooks")))]
            rows.append({"client": client, "scope": scope, "path": str(path), "events": events})
    return rows


def _without_mem(hooks: dict) -> dict:
    """The hooks with mem's own entries taken out (and the groups and events they leave empty)."""
    if not isinstance(hooks, dict):
        raise InputError("the settings' 'hooks' is not a mapping; fix it by hand first")
    out = {}
    for event, groups in hooks.items():
        kept = []
        for group in _list(groups):
            if not isinstance(group, dict):
                kept.append(group)
                continue
            others = [h for h in _list(group.get("hooks")) if not _is_mem(h)]
            if others:
                kept.append({**group, "hooks": others})
            elif not group.get("hooks"):
                kept.append(group)
        if kept:
            out[event] = kept
    return out


def _is_mem(entry) -> bool:
    return isinstance(entry, dict) and MARK in str(entry.get("command", ""))


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _read(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path} as JSON ({exc}); mem leaves it as it is") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} does not hold a JSON object; mem leaves it as it is")
    return data


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
