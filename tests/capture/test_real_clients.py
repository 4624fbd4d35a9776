"""The hooks `mem hooks install` writes, run by the real clients: Claude Code, Codex CLI and Gemini CLI from npm
(pinned in the Makefile, installed by `make clients`), each started offline in a scratch project with a
prompt. None can reach a model: Claude Code stops at "Not logged in", Codex and Gemini are pointed at a
server on the loopback that refuses every request. Before that, each loads its settings and runs the
SessionStart and prompt hooks, which must reach the store's capture queue without a hook error in the
client's debug output. For tool events the same server plays a model that asks for scripted tool calls
(scripted_model.py): each client runs them itself and sends its own payloads to mem's hooks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import calc_session
from calc_session import codex_home, gemini_env
from captured import capture_problems, queued_events, stored_memories
from helpers import ok, open_mem
from work_helpers import drain
from scripted_model import ScriptedModel

from memcli.capture.observe import observe

pytestmark = pytest.mark.clients

PROMPT = "say hi"


@pytest.fixture
def clients_bin() -> Path:
    named = os.environ.get("MEM_TEST_CLIENTS_DIR")
    folder = Path(named) / "node_modules" / ".bin" if named else None
    if folder is None or not all((folder / name).exists() for name in ("claude", "codex", "gemini")):
        pytest.fail("the real clients are not installed: run these tests through `make test` (or `make clients` "
                    "and set MEM_TEST_CLIENTS_DIR to the folder it names)")
    return folder


@pytest.fixture
def model():
    """The model the clients talk to: refuses everything until a test scripts tool calls (scripted_model)."""
    with ScriptedModel() as server:
        yield server


@pytest.fixture
def scratch(project, tmp_path, clients_bin, monkeypatch):
    """The project (with its store in .mem/) as the cwd, a home of its own, mem and the clients on the PATH."""
    venv_bin = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ['PATH']}")
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.pathsep.join([str(venv_bin), str(clients_bin), "/usr/local/bin", "/usr/bin", "/bin"]),
           "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb", "MEM_CAPTURE_DRAIN": "0", "MEM_BACKGROUND": "0",
           # the user's config folder, as the test's own process has it: the queue's seal is this user's
           "MEM_CONFIG_DIR": os.environ["MEM_CONFIG_DIR"]}
    return project, home, env


def client(command: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)


def started_and_prompted(store: Path, name: str) -> None:
    """SessionStart and the prompt reached the queue as `name`'s events, and no hook counted a problem."""
    events = [e for e in queued_events(store) if e["client"] == name]
    assert "session_start" in [e["event"] for e in events]
    assert [e["prompt"] for e in events if e["event"] == "prompt"] == [PROMPT]
    assert capture_problems(store) == {}


def test_claude_code_runs_mem_hooks_and_they_are_queued(scratch):
    project, home, env = scratch
    ok("hooks", "install", "claude-code")
    debug = home / "claude-debug.txt"
    done = client(["claude", "-p", PROMPT, "--debug-file", str(debug)], env, project)
    assert "Not logged in" in done.stdout + done.stderr  # it got as far as asking a model, and no further
    started_and_prompted(project / ".mem", "claude-code")
    log = debug.read_text()
    ran = [line for line in log.splitlines() if "mem hook --client claude-code" in line]
    assert any("SessionStart" in line and "finished with status 0" in line for line in ran)
    assert any("UserPromptSubmit" in line and "finished with status 0" in line for line in ran)
    assert not [line for line in log.splitlines() if line.count("Hook ") and " error: " in line]


def test_codex_runs_mem_hooks_only_once_trusted_and_status_says_which(scratch, model, monkeypatch):
    project, home, env = scratch
    asked = model.asked
    env = {**env, "CODEX_HOME": str(codex_home(home, project, model.url)), "OPENAI_API_KEY": "dummy"}
    monkeypatch.setenv("CODEX_HOME", env["CODEX_HOME"])
    ok("hooks", "install", "codex", "--mcp")
    exec_ = ["codex", "exec", "--skip-git-repo-check", PROMPT]

    untrusted = client(exec_, env, project)
    assert untrusted.returncode == 1 and asked  # it asked the model, and was refused
    assert queued_events(project / ".mem") == []
    row = next(r for r in json.loads(ok("hooks", "status", "--json").stdout)
               if r["client"] == "codex" and r["scope"] == "project")
    assert row["trusted"] == "0/4" and row["last_event"] is None

    trusted = client(exec_[:2] + ["--dangerously-bypass-hook-trust"] + exec_[2:], env, project)
    for event in ("SessionStart", "UserPromptSubmit"):
        assert f"hook: {event} Completed" in trusted.stderr
    assert "Failed" not in "\n".join(line for line in trusted.stderr.splitlines() if line.startswith("hook: "))
    started_and_prompted(project / ".mem", "codex")

    servers = json.loads(client(["codex", "mcp", "list", "--json"], env, project).stdout)
    assert [(s["name"], s["transport"]["command"], s["transport"]["args"]) for s in servers] == [("mem", "mem", ["mcp"])]


def test_gemini_runs_mem_hooks_within_their_timeout_and_they_are_queued(scratch, model):
    project, home, env = scratch
    asked = model.asked
    env = gemini_env(home, env, model.url)
    ok("hooks", "install", "gemini", "--mcp")
    done = client(["gemini", "-p", PROMPT, "--debug"], env, project)
    assert done.returncode != 0 and asked  # it asked the model, and was refused
    started_and_prompted(project / ".mem", "gemini")
    log = done.stdout + done.stderr
    for event in ("SessionStart", "BeforeAgent"):
        assert f"Hook execution for {event}: 1 hooks executed successfully" in log
    assert "Hook execution error" not in log and "failed for event" not in log
    servers = client(["gemini", "mcp", "list"], env, project)
    assert "✓ mem: mem mcp (stdio) - Connected" in servers.stdout + servers.stderr


CALC = "".join(f"line {n}\n" for n in range(1, 21)) + "    return a - b\n" + "".join(f"line {n}\n" for n in range(22, 31))
FIXED = CALC.replace("a - b", "a + b")


def observations(store: Path, name: str) -> dict[str, object]:
    """{tool: its observation} of the tool events `name` sent."""
    return {e["tool"]: observe(e, 6000) for e in queued_events(store) if e["event"] == "tool" and e["client"] == name}


def test_claude_code_edits_and_failed_commands_become_placed_diffs_and_kept_output(scratch, model):
    project, home, env = scratch
    (project / "calc.py").write_text(CALC)
    calc = str(project / "calc.py")
    model.calls = [("Read", {"file_path": calc}),
                   ("Edit", {"file_path": calc, "old_string": "    return a - b", "new_string": "    return a + b"}),
                   ("Bash", {"command": "echo why-it-failed >&2; exit 3", "description": "fail on purpose"})]
    env = {**env, "ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_BASE_URL": model.url, "IS_SANDBOX": "1"}
    ok("hooks", "install", "claude-code")
    client(["claude", "-p", "fix calc", "--dangerously-skip-permissions"], env, project)
    assert (project / "calc.py").read_text() == FIXED
    seen = observations(project / ".mem", "claude-code")
    assert "@@ -18,7 +18,7 @@\n line 18\n line 19\n line 20\n-    return a - b\n+    return a + b\n line 22" \
        in seen["Edit"].text
    assert seen["Bash"].failed and "(failed, exit 3)" in seen["Bash"].text and "why-it-failed" in seen["Bash"].text


def test_codex_apply_patch_and_a_failed_command_become_placed_diffs_and_kept_output(scratch, model, monkeypatch):
    project, home, env = scratch
    (project / "calc.py").write_text(CALC)
    patch = ("*** Begin Patch\n*** Update File: calc.py\n@@\n line 20\n-    return a - b\n+    return a + b\n"
             "*** Add File: notes.md\n+add() adds.\n*** End Patch\n")
    model.calls = [("apply_patch", {"patch": patch}), ("exec_command", {"cmd": "ls no-such-folder"})]
    env = {**env, "CODEX_HOME": str(codex_home(home, project, model.url)), "OPENAI_API_KEY": "dummy"}
    ok("hooks", "install", "codex")
    client(["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
            "--dangerously-bypass-approvals-and-sandbox", "fix calc"], env, project)
    assert (project / "calc.py").read_text() == FIXED
    seen = observations(project / ".mem", "codex")
    assert seen["apply_patch"].files_changed == ["calc.py", "notes.md"]
    assert seen["apply_patch"].text.startswith("apply_patch: changed calc.py, added notes.md")
    assert "--- a/calc.py\n+++ b/calc.py\n@@ -20,2 +20,2 @@\n line 20\n-    return a - b\n+    return a + b" \
        in seen["apply_patch"].text
    assert seen["Bash"].failed and "No such file or directory" in seen["Bash"].text


def test_gemini_edits_and_failed_commands_become_placed_diffs_and_kept_output(scratch, model):
    project, home, env = scratch
    (project / "calc.py").write_text(CALC)
    model.calls = [("replace", {"file_path": "calc.py", "instruction": "fix add", "old_string": "    return a - b",
                                "new_string": "    return a + b"}),
                   ("run_shell_command", {"command": "echo why-it-failed >&2; exit 4", "description": "fail on purpose"})]
    ok("hooks", "install", "gemini")
    client(["gemini", "-p", "fix calc", "--yolo"], gemini_env(home, env, model.url), project)
    assert (project / "calc.py").read_text() == FIXED
    seen = observations(project / ".mem", "gemini")
    assert "--- a/calc.py\n+++ b/calc.py\n@@ -18,7 +18,7 @@\n line 18\n line 19\n line 20\n-    return a - b\n" \
        in seen["replace"].text
    shell = seen["run_shell_command"]
    assert shell.failed and "(failed, exit 4)" in shell.text and "why-it-failed" in shell.text


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini"])
def test_importing_the_session_a_client_just_ran_stores_what_its_hooks_stored(scratch, model, monkeypatch, name):
    project, home, env = scratch
    calc_session.write_project(project, home, Path(sys.executable).parent)
    ok("hooks", "install", name)
    done = calc_session.run(name, model, home, project, env)
    assert [d.returncode for d in done] == [0, 0]
    assert "return a + b" in (project / "src" / "calc.py").read_text()
    drain(open_mem())
    from_hooks = stored_memories(project)
    assert {tags[0] for tags, _, _ in from_hooks} == {"observation", "session", "thread"}

    (project / ".mem").rename(project.parent / "hooked-store")  # a new store, and the same sessions from the transcript
    ok("init", ".mem")
    variable, folder = calc_session.CLIENT_HOMES[name]
    monkeypatch.setenv(variable, str(home / folder))
    result = ok("import", "--from", name)
    # Gemini writes a resumed session on in a new file when the minute has changed: one session either way
    files = len(calc_session.transcripts(home))
    assert f"{files} file{'s' * (files > 1)}, 1 session: queued " in result.stderr
    assert stored_memories(project) == from_hooks
