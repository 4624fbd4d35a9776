"""`mem hooks install|uninstall|status`: mem's entries in each client's hook settings, in the client's own
names and units, merged so that everything else in the file stays as it was.

All three clients read the nesting `{"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command",
"command": ..., "timeout"?}]}]}}`, in `.claude/settings.json`, `.codex/hooks.json`, `.gemini/settings.json`
(or the same under the home folder), and differ in the rest (docs/capture.md has a table per client,
checked against the versions named there):
- the timeout's unit: seconds for Claude Code and Codex, milliseconds for Gemini CLI (10 there would kill
  every hook after 10 ms, as mem's entries once did: that value is taken for the mistake and corrected);
- the events: Codex has no PostToolUseFailure, PreCompact or SessionEnd; Gemini names its own;
- none runs in the background: Claude Code's `"async": true` hooks are cancelled when `claude -p` ends its
  turn (with 2.1.332 the turn's last tool event and its Stop were lost), so mem's hooks run in line in
  every client, which is why `mem hook` only queues and returns. An `"async": true` that older mem wrote
  on its own entries is taken out.

mem's entry is an entry whose command is `<mem> hook --client <client> <Event>` under that same event,
where <mem> is the command being installed or ends in a program named mem: another tool's hook that only
looks alike is never touched. An entry already there keeps whatever the user tuned on it (a timeout, a
status message); only its command follows --command. Nothing is written when nothing of mem's changes,
and the file is written back as its owner keeps it (memcli.capture.settings_file).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from memcli.capture import codex_config
from memcli.capture.settings_file import Settings, dumps
from memcli.errors import InputError

CLIENTS = {
    "claude-code": {
        "file": (".claude/settings.json", "~/.claude/settings.json"),
        "events": ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "PreCompact",
                   "SessionEnd"),
        "tools": ("PostToolUse", "PostToolUseFailure"), "matcher": "*", "timeout": 10,
        "mcp": (".mcp.json", "~/.claude.json"),
        "stale": {"async": True},  # what older mem wrote, and Claude Code cancels at the end of a -p turn
    },
    "codex": {
        "file": (".codex/hooks.json", "~/.codex/hooks.json"),
        "events": ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"),
        "tools": (), "matcher": None, "timeout": 10,
    },
    "gemini": {
        "file": (".gemini/settings.json", "~/.gemini/settings.json"),
        "events": ("SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"),
        "tools": ("AfterTool",), "matcher": "*", "timeout": 10_000,
        "mcp": (".gemini/settings.json", "~/.gemini/settings.json"),
        "stale": {"timeout": 10},  # what older mem wrote, in seconds, where Gemini reads milliseconds
    },
}
ENTRY = re.compile(r"(?P<program>.+) hook --client (?P<client>[\w-]+) (?P<event>\w+)")


@dataclass
class Change:
    """What an install or uninstall did to one file."""

    path: Path
    changed: bool
    skipped: list[str] = field(default_factory=list)  # events left alone (not a list there)


def settings_path(client: str, scope: str, project: Path) -> Path:
    project_file, user_file = CLIENTS[client]["file"]
    if client == "codex" and scope == "user":
        return codex_config.codex_home() / "hooks.json"
    return Path(os.path.expanduser(user_file)) if scope == "user" else Path(project) / project_file


def _kept_in(path: Path, scope: str, project: Path) -> Path:
    """The file a project install may write: one inside the project, whatever links lead there. A
    repository can commit `.claude/settings.json` as a link to the user's own settings (or `.mcp.json` to
    `~/.claude.json`); a project install then refuses, so a clone never has mem change files outside it."""
    if scope != "project":
        return path
    target, root = os.path.realpath(path), os.path.realpath(project)
    if os.path.commonpath([target, root]) != root:
        raise InputError(f"{path} leads to {target}, outside this project: a project install writes only inside "
                         "it (remove the link, or install with --user to change your own settings)")
    return path


def is_mem_program(program: str) -> bool:
    """Whether a command line starts mem: its program is named mem (mem, /x/bin/mem, uvx mem, mem-0.2) or
    runs the memcli package."""
    words = program.split()
    return bool(words) and (re.fullmatch(r"mem(?:[-.][\w.-]*)?", os.path.basename(words[-1])) is not None
                            or "memcli" in words)


def install(client: str, scope: str, project: Path, command: str = "mem") -> Change:
    """Merge mem's entries into the client's settings. InputError (and nothing written) when the file is
    not JSON, its `hooks` is not a mapping, or an event mem listens to holds something other than a list."""
    spec = CLIENTS[client]
    settings = Settings(_kept_in(settings_path(client, scope, project), scope, project))
    before = dumps(settings.data)
    hooks = _hooks(settings)
    for event in spec["events"]:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InputError(f"{settings.path}: hooks.{event} is not a list; mem leaves the file as it is "
                             "(fix it by hand first)")
        mine = _mine(groups, client, event, command)
        if mine:
            entry = mine[0]
            entry["command"] = f"{command} hook --client {client} {event}"
            for key, value in spec.get("stale", {}).items():
                if entry.get(key) == value:
                    if key == "timeout":
                        entry[key] = spec["timeout"]
                    else:
                        del entry[key]
            _drop(groups, [id(e) for e in mine[1:]])
        else:
            groups.append(_group(spec, client, event, command))
    for event, groups in list(hooks.items()):  # events mem no longer listens to
        if event not in spec["events"] and isinstance(groups, list):
            _drop(groups, [id(e) for e in _mine(groups, client, event, command)])
            if not groups:
                del hooks[event]
    changed = dumps(settings.data) != before
    if changed:
        settings.save()
    return Change(settings.path, changed)


def uninstall(client: str, scope: str, project: Path) -> Change:
    """Take mem's entries out (and the groups and events only they filled); the rest stays, byte for byte
    when nothing of mem's was there."""
    path = _kept_in(settings_path(client, scope, project), scope, project)
    if not path.is_file():
        return Change(path, False)
    settings = Settings(path)
    if not isinstance(settings.data.get("hooks"), dict):
        return Change(path, False)
    before = dumps(settings.data)
    hooks = settings.data["hooks"]
    skipped, removed = [], False
    for event, groups in list(hooks.items()):
        if not isinstance(groups, list):
            skipped.append(event)
            continue
        mine = _mine(groups, client, event, None)
        if mine:
            removed = True
            _drop(groups, [id(e) for e in mine])
            if not groups:
                del hooks[event]
    if removed and not hooks:
        del settings.data["hooks"]
    changed = dumps(settings.data) != before
    if changed and not settings.data:
        settings.remove()
    elif changed:
        settings.save()
    return Change(path, changed, skipped)


def mcp_path(client: str, scope: str, project: Path) -> Path:
    if client == "codex":
        return codex_config.config_path(scope, project)
    project_file, user_file = CLIENTS[client]["mcp"]
    return Path(os.path.expanduser(user_file)) if scope == "user" else Path(project) / project_file


def install_mcp(client: str, scope: str, project: Path, command: str = "mem") -> Change:
    """Register `<command> mcp` as the client's MCP server `mem`, unless a server of that name is there."""
    path = _kept_in(mcp_path(client, scope, project), scope, project)
    if client == "codex":
        return Change(path, codex_config.add_mcp(path, command))
    settings = Settings(path)
    servers = settings.data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InputError(f"{path}: 'mcpServers' is not a mapping; fix it by hand first")
    if "mem" in servers:
        return Change(path, False)
    servers["mem"] = {"command": command, "args": ["mcp"]}
    settings.save()
    return Change(path, True)


def uninstall_mcp(client: str, scope: str, project: Path) -> Change:
    """Take out the MCP server `mem` when it is the one install registers (mem's command, args `mcp`)."""
    path = _kept_in(mcp_path(client, scope, project), scope, project)
    if client == "codex":
        return Change(path, codex_config.remove_mcp(path, is_mem_program))
    if not path.is_file():
        return Change(path, False)
    settings = Settings(path)
    servers = settings.data.get("mcpServers")
    server = servers.get("mem") if isinstance(servers, dict) else None
    if not (isinstance(server, dict) and set(server) == {"command", "args"} and server["args"] == ["mcp"]
            and isinstance(server["command"], str) and is_mem_program(server["command"])):
        return Change(path, False)
    del servers["mem"]
    if not servers:  # the clients read no key as no servers; an empty one is only mem's leftover
        del settings.data["mcpServers"]
    if not settings.data:
        settings.remove()
    else:
        settings.save()
    return Change(path, True)


def check_command(command: str) -> str | None:
    """What `<command> --version` prints when run through a shell as the clients run hooks (mem's own
    version line), None when it does not run or is not mem."""
    try:
        done = subprocess.run(["/bin/sh", "-c", f"{command} --version"], capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
    return line if done.returncode == 0 and line.startswith("mem") else None


def machine_path(command: str) -> str | None:
    """The first word of the command that names a place on this machine (an absolute or home path)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return next((w for w in words if w.startswith(("/", "~")) or "$HOME" in w), None)


def status(project: Path) -> list[dict]:
    """For each client and scope: the settings file, the events mem's hooks are installed for, and their
    commands; for Codex, how many of them Codex has a trust record for."""
    rows = []
    for client in CLIENTS:
        for scope in ("project", "user"):
            path = settings_path(client, scope, project)
            found: dict[str, tuple[int, int, str]] = {}
            if path.is_file():
                try:
                    hooks = Settings(path).data.get("hooks")
                except InputError:
                    hooks = None
                for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
                    for g, group in enumerate(groups if isinstance(groups, list) else []):
                        entries = group.get("hooks") if isinstance(group, dict) else None
                        for h, entry in enumerate(entries if isinstance(entries, list) else []):
                            if _is_mine(entry, client, event, None) and event not in found:
                                found[event] = (g, h, entry["command"])
            row = {"client": client, "scope": scope, "path": str(path), "events": list(found),
                   "commands": sorted({ENTRY.fullmatch(c).group("program") for _, _, c in found.values()})}
            if client == "codex" and found:
                trusted, total = codex_config.trust(path, [(e, g, h) for e, (g, h, _) in found.items()])
                row["trusted"] = f"{trusted}/{total}"
            rows.append(row)
    return rows


def _hooks(settings: Settings) -> dict:
    hooks = settings.data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"{settings.path}: 'hooks' is not a mapping; mem leaves the file as it is")
    return hooks


def _group(spec: dict, client: str, event: str, command: str) -> dict:
    entry = {"type": "command", "command": f"{command} hook --client {client} {event}", "timeout": spec["timeout"]}
    group = {"hooks": [entry]}
    if event in spec["tools"] and spec["matcher"]:
        group = {"matcher": spec["matcher"], **group}
    return group


def _is_mine(entry, client: str, event: str, command: str | None) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    found = ENTRY.fullmatch(entry["command"].strip())
    return bool(found and found["client"] == client and found["event"] == event
                and (found["program"] == command or is_mem_program(found["program"])))


def _mine(groups: list, client: str, event: str, command: str | None) -> list[dict]:
    """mem's entries among an event's groups (only groups of the documented shape are looked into)."""
    return [entry for group in groups if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for entry in group["hooks"] if _is_mine(entry, client, event, command)]


def _drop(groups: list, ids: list[int]) -> None:
    """Remove these entries; a group they leave empty goes too (one that was empty already stays)."""
    if not ids:
        return
    for group in list(groups):
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            kept = [e for e in group["hooks"] if id(e) not in ids]
            if len(kept) != len(group["hooks"]):
                if kept:
                    group["hooks"] = kept
                else:
                    groups.remove(group)
