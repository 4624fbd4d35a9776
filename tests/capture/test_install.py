"""`mem hooks install` merges mem's entries, keeps other tools' hooks, and a second run changes nothing."""

from __future__ import annotations

import json

import pytest
from helpers import ok

FOREIGN = {"permissions": {"allow": ["Bash"]},
           "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}]}}


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.parametrize("client,path", [("claude-code", ".claude/settings.json"), ("codex", ".codex/hooks.json"),
                                         ("gemini", ".gemini/settings.json")])
def test_install_is_idempotent_keeps_foreign_hooks_and_uninstall_restores(project, client, path):
    target = project / path
    target.parent.mkdir()
    target.write_text(json.dumps(FOREIGN))
    ok("hooks", "install", client)
    once = target.read_text()
    assert "already installed" in ok("hooks", "install", client).stderr
    assert target.read_text() == once
    data = json.loads(once)
    assert data["permissions"] == FOREIGN["permissions"]
    assert {"type": "command", "command": "prettier --write"} in data["hooks"]["PostToolUse"][0]["hooks"]
    commands = [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert sum("mem hook --client" in c for c in commands) >= 4
    ok("hooks", "uninstall", client)
    assert json.loads(target.read_text()) == FOREIGN


def test_claude_code_runs_only_unread_events_in_the_background(project):
    ok("hooks", "install", "claude-code")
    hooks = json.loads((project / ".claude/settings.json").read_text())["hooks"]
    background = {event for event, groups in hooks.items() if groups[0]["hooks"][0].get("async")}
    assert {"PostToolUse", "Stop", "SessionEnd"} <= background
    assert not {"SessionStart", "UserPromptSubmit"} & background


def test_user_scope_writes_in_home_and_status_lists_it(project):
    ok("hooks", "install", "gemini", "--user")
    assert (project / "home/.gemini/settings.json").is_file()
    rows = json.loads(ok("hooks", "status", "--json").stdout)
    row = next(r for r in rows if r["client"] == "gemini" and r["scope"] == "user")
    assert "SessionStart" in row["events"]


def test_a_settings_file_that_is_not_json_is_left_alone(project):
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").write_text("{broken")
    from helpers import run

    result = run("hooks", "install", "claude-code")
    assert result.exit_code != 0 and "leaves it as it is" in result.stderr
    assert (project / ".claude/settings.json").read_text() == "{broken"


def test_install_can_register_mem_mcp_once_and_keeps_other_servers(project):
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    ok("hooks", "install", "claude-code", "--mcp")
    assert "already in" in ok("hooks", "install", "claude-code", "--mcp").stderr
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"other": {"command": "x"}, "mem": {"command": "mem", "args": ["mcp"]}}
    from helpers import run

    result = run("hooks", "install", "codex", "--mcp")
    assert result.exit_code != 0 and "[mcp_servers.mem]" in result.stderr
