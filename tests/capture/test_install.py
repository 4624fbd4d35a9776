"""`mem hooks install` writes each client's own names and units, changes nothing else about the settings file
(its other hooks, its link, its mode, its numbers, what the user tuned), and uninstall takes out all it added."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from helpers import ok, run

FOREIGN = {"permissions": {"allow": ["Bash"]},
           "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}]}}
FILES = [("claude-code", ".claude/settings.json"), ("codex", ".codex/hooks.json"), ("gemini", ".gemini/settings.json")]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder as the cwd, a home of its own, and mem on the PATH as a user who installed it has."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def entries(path: Path) -> dict:
    """{event: [mem's entry, ...]} of a settings file."""
    hooks = json.loads(path.read_text())["hooks"]
    return {event: [h for g in groups for h in g["hooks"] if " hook --client " in h["command"]]
            for event, groups in hooks.items()}


@pytest.mark.parametrize("client,path", FILES)
def test_install_twice_changes_nothing_keeps_foreign_hooks_and_uninstall_restores_the_bytes(project, client, path):
    target = project / path
    target.parent.mkdir(parents=True)
    original = json.dumps(FOREIGN, indent=4) + "\n"
    target.write_text(original)
    ok("hooks", "install", client)
    once = target.read_text()
    assert "already installed" in ok("hooks", "install", client).stderr
    assert target.read_text() == once
    data = json.loads(once)
    assert data["permissions"] == FOREIGN["permissions"]
    assert {"type": "command", "command": "prettier --write"} in data["hooks"]["PostToolUse"][0]["hooks"]
    assert '\n    "permissions"' in once  # the file's own indentation
    ok("hooks", "uninstall", client)
    assert target.read_text() == original
    assert "not installed" in ok("hooks", "uninstall", client).stderr


def test_each_client_gets_its_own_events_and_timeout_unit(project):
    for client, _ in FILES:
        ok("hooks", "install", client)
    claude, codex, gemini = (entries(project / path) for _, path in FILES)
    assert {h["timeout"] for hs in claude.values() for h in hs} == {10}  # seconds
    assert {h["timeout"] for hs in codex.values() for h in hs} == {10}  # seconds
    assert {h["timeout"] for hs in gemini.values() for h in hs} == {10_000}  # milliseconds
    assert set(codex) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
    assert set(gemini) == {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"}
    assert not any(h.get("async") for hs in [*claude.values(), *codex.values(), *gemini.values()] for h in hs)


def test_a_background_flag_an_older_mem_put_on_claude_code_entries_is_taken_out(project):
    ok("hooks", "install", "claude-code")
    path = project / ".claude/settings.json"
    data = json.loads(path.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["async"] = True
    path.write_text(json.dumps(data))
    ok("hooks", "install", "claude-code")
    assert "async" not in entries(path)["Stop"][0]


def test_a_gemini_timeout_written_in_seconds_by_an_older_mem_becomes_milliseconds(project):
    ok("hooks", "install", "gemini")
    path = project / ".gemini/settings.json"
    data = json.loads(path.read_text())
    data["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] = 10
    path.write_text(json.dumps(data))
    assert "updated" in ok("hooks", "install", "gemini").stderr
    assert entries(path)["SessionStart"][0]["timeout"] == 10_000


def test_a_timeout_the_user_tuned_survives_reinstall_and_another_command(project):
    ok("hooks", "install", "claude-code")
    path = project / ".claude/settings.json"
    data = json.loads(path.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 45
    path.write_text(json.dumps(data, indent=2) + "\n")
    assert "already installed" in ok("hooks", "install", "claude-code").stderr
    mem = str(Path(sys.executable).parent / "mem")
    ok("hooks", "install", "claude-code", "--command", mem)
    stop = entries(path)["Stop"]
    assert stop == [{"type": "command", "command": f"{mem} hook --client claude-code Stop", "timeout": 45}]


def test_a_settings_file_that_is_a_symlink_stays_a_symlink(project):
    dotfiles = project / "dotfiles/claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps({"model": "x"}))
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").symlink_to(dotfiles)
    ok("hooks", "install", "claude-code")
    assert (project / ".claude/settings.json").is_symlink()
    assert "SessionStart" in json.loads(dotfiles.read_text())["hooks"]


@pytest.mark.parametrize("client,committed,own", [
    ("claude-code", ".claude/settings.json", ".claude/settings.json"),
    ("codex", ".codex/hooks.json", ".codex/hooks.json"),
    ("gemini", ".gemini/settings.json", ".gemini/settings.json"),
])
def test_a_committed_link_to_the_users_own_settings_is_refused_by_a_project_install(project, monkeypatch, client,
                                                                                     committed, own):
    home, repo = project / "home", project / "repo"
    (home / own).parent.mkdir(parents=True)
    (home / own).write_text('{"model": "x"}\n')
    (repo / committed).parent.mkdir(parents=True)
    (repo / committed).symlink_to(home / own)
    monkeypatch.chdir(repo)
    result = run("hooks", "install", client)
    assert result.exit_code == 2 and "outside this project" in result.stderr
    assert (home / own).read_text() == '{"model": "x"}\n'


def test_a_committed_mcp_link_to_claude_json_is_refused_by_a_project_install(project, monkeypatch):
    home, repo = project / "home", project / "repo"
    home.mkdir()
    (home / ".claude.json").write_text('{"userID": "u"}\n')
    repo.mkdir()
    (repo / ".mcp.json").symlink_to(home / ".claude.json")
    monkeypatch.chdir(repo)
    result = run("hooks", "install", "claude-code", "--mcp")
    assert result.exit_code == 2 and "outside this project" in result.stderr
    assert (home / ".claude.json").read_text() == '{"userID": "u"}\n'


def test_look_alike_hooks_and_hooks_written_as_a_mapping_are_not_touched(project):
    path = project / ".claude/settings.json"
    path.parent.mkdir()
    other = {"type": "command", "command": "audit hook --client claude-code SessionStart"}
    data = {"hooks": {"SessionStart": [{"hooks": [other]}],
                      "Notification": {"hooks": [{"type": "command", "command": "notify-send hi"}]},
                      "PreToolUse": [{"matcher": "Bash", "hooks": {"type": "command", "command": "guard"}}]}}
    path.write_text(json.dumps(data))
    ok("hooks", "install", "claude-code")
    ok("hooks", "uninstall", "claude-code")
    assert json.loads(path.read_text()) == data


def test_an_event_mem_needs_written_as_a_mapping_is_refused_and_the_file_left_alone(project):
    path = project / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {"Stop": {"hooks": []}}}')
    result = run("hooks", "install", "claude-code")
    assert result.exit_code == 2 and "hooks.Stop is not a list" in result.stderr
    assert path.read_text() == '{"hooks": {"Stop": {"hooks": []}}}'


def test_a_number_beyond_double_range_is_written_back_as_written(project):
    path = project / ".gemini/settings.json"
    path.parent.mkdir()
    path.write_text('{"ui": {"scale": 1e400, "ratio": 1.50}}\n')
    ok("hooks", "install", "gemini")
    text = path.read_text()
    assert '"scale": 1e400' in text and '"ratio": 1.50' in text and "Infinity" not in text


def test_a_compact_file_that_already_holds_the_hooks_is_left_byte_for_byte(project):
    ok("hooks", "install", "codex")
    path = project / ".codex/hooks.json"
    data = json.loads(path.read_text())
    data["hooks"]["SessionStart"].append({"hooks": [{"type": "command", "command": "direnv export json"}]})
    compact = json.dumps(data, separators=(",", ":"))
    path.write_text(compact)
    ok("hooks", "install", "codex")
    assert path.read_text() == compact


def test_user_install_with_mcp_keeps_claude_json_private_and_uninstall_takes_the_server_out(project):
    home = project / "home"
    home.mkdir()
    account = home / ".claude.json"
    account.write_text(json.dumps({"oauthAccount": {"id": "u"}, "mcpServers": {"other": {"command": "x"}}}))
    account.chmod(0o600)
    ok("hooks", "install", "claude-code", "--user", "--mcp")
    assert stat.S_IMODE(account.stat().st_mode) == 0o600
    assert json.loads(account.read_text())["mcpServers"]["mem"] == {"command": "mem", "args": ["mcp"]}
    assert "MCP server mem removed" in ok("hooks", "uninstall", "claude-code", "--user").stderr
    assert json.loads(account.read_text()) == {"oauthAccount": {"id": "u"}, "mcpServers": {"other": {"command": "x"}}}


def test_uninstall_leaves_claude_json_as_it_was_when_mem_was_its_only_server(project):
    home = project / "home"
    home.mkdir()
    account = home / ".claude.json"
    account.write_text(json.dumps({"oauthAccount": {"id": "u"}}))
    ok("hooks", "install", "claude-code", "--user", "--mcp")
    ok("hooks", "uninstall", "claude-code", "--user")
    assert json.loads(account.read_text()) == {"oauthAccount": {"id": "u"}}


def test_a_mem_server_the_user_configured_differently_stays_on_uninstall(project):
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"mem": {"command": "mem", "args": ["mcp"],
                                                                           "env": {"MEM_DIR": "/x"}}}}))
    before = (project / ".mcp.json").read_text()
    ok("hooks", "install", "claude-code", "--mcp")
    ok("hooks", "uninstall", "claude-code")
    assert (project / ".mcp.json").read_text() == before


def test_a_read_only_settings_file_is_refused(project):
    path = project / ".gemini/settings.json"
    path.parent.mkdir()
    path.write_text("{}\n")
    path.chmod(0o444)
    result = run("hooks", "install", "gemini")
    assert result.exit_code == 2 and "read-only" in result.stderr
    assert path.read_text() == "{}\n"


def test_a_command_that_does_not_run_mem_is_refused_unless_forced(project):
    result = run("hooks", "install", "claude-code", "--command", "/nowhere/mem")
    assert result.exit_code == 2 and "--command" in result.stderr
    assert not (project / ".claude/settings.json").exists()
    forced = ok("hooks", "install", "claude-code", "--command", "/nowhere/mem", "--force")
    assert "does not run mem here" in forced.stderr
    assert entries(project / ".claude/settings.json")["Stop"][0]["command"] == "/nowhere/mem hook --client claude-code Stop"


def test_an_absolute_command_in_a_shared_project_file_is_pointed_out(project):
    mem = str(Path(sys.executable).parent / "mem")
    assert "shared through git" in ok("hooks", "install", "gemini", "--command", mem).stderr
    assert "shared through git" not in ok("hooks", "install", "gemini", "--user", "--command", mem).stderr
    assert "shared through git" not in ok("hooks", "install", "claude-code").stderr


def test_codex_mcp_is_a_config_toml_table_added_and_removed_as_text(project, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(project / "codex"))
    (project / "codex").mkdir()
    config = project / "codex/config.toml"
    original = '# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n'
    config.write_text(original)
    ok("hooks", "install", "codex", "--user", "--mcp")
    import tomllib

    assert tomllib.loads(config.read_text())["mcp_servers"]["mem"] == {"command": "mem", "args": ["mcp"]}
    assert config.read_text().startswith(original)
    assert (project / "codex/hooks.json").is_file()
    ok("hooks", "uninstall", "codex", "--user")
    assert config.read_text() == original


def test_codex_install_and_status_say_whether_codex_trusts_the_hooks(project, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(project / "codex"))
    assert "/hooks" in ok("hooks", "install", "codex").stderr
    row = next(r for r in json.loads(ok("hooks", "status", "--json").stdout)
               if r["client"] == "codex" and r["scope"] == "project")
    assert row["trusted"] == "0/4" and row["command_runs"] is True
    hooks_file = project / ".codex/hooks.json"
    labels = ["session_start", "user_prompt_submit", "post_tool_use", "stop"]
    (project / "codex").mkdir()
    (project / "codex/config.toml").write_text("".join(
        f'[hooks.state."{hooks_file}:{label}:0:0"]\ntrusted_hash = "sha256:0"\n' for label in labels))
    row = next(r for r in json.loads(ok("hooks", "status", "--json").stdout)
               if r["client"] == "codex" and r["scope"] == "project")
    assert row["trusted"] == "4/4"


def test_status_shows_a_command_that_no_longer_runs(project):
    ok("hooks", "install", "claude-code", "--command", "/nowhere/mem", "--force")
    text = ok("hooks", "status").stdout
    assert "command does not run here: /nowhere/mem" in text


def test_status_says_when_each_client_was_last_heard_from(project):
    ok("init")
    ok("hooks", "install", "gemini")
    row = next(r for r in json.loads(ok("hooks", "status", "--json").stdout) if r["client"] == "gemini")
    assert row["last_event"] is None and "last event never" in ok("hooks", "status").stdout
    payload = {"session_id": "g1", "cwd": str(project), "hook_event_name": "SessionStart",
               "timestamp": "2026-12-05T09:00:00Z", "source": "startup"}
    ok("hook", "--client", "gemini", "SessionStart", input=json.dumps(payload), env={"MEM_CAPTURE_DRAIN": "0"})
    row = next(r for r in json.loads(ok("hooks", "status", "--json").stdout) if r["client"] == "gemini")
    assert isinstance(row["last_event"], float)
    assert "last event never" not in ok("hooks", "status").stdout


def test_uninstall_removes_a_file_that_held_only_what_install_wrote(project):
    ok("hooks", "install", "codex")
    ok("hooks", "install", "claude-code", "--mcp")
    ok("hooks", "uninstall", "codex")
    ok("hooks", "uninstall", "claude-code")
    assert not (project / ".codex/hooks.json").exists() and not (project / ".mcp.json").exists()
    assert not (project / ".claude/settings.json").exists()
