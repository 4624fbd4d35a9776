"""The hooks `mem hooks install` writes, run by the real clients: Claude Code, Codex CLI and Gemini CLI from npm
(pinned in the Makefile, installed by `make clients`), each started offline in a scratch project with a
prompt. None can reach a model: Claude Code stops at "Not logged in", Codex and Gemini are pointed at a
server on the loopback that refuses every request. Before that, each loads its settings and runs the
SessionStart and prompt hooks, which must reach the store's capture queue without a hook error in the
client's debug output. Tool events need a model; their payloads are recorded fixtures (test_observe.py).
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from captured import capture_problems, queued_events
from helpers import ok

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
def no_model():
    """A server on the loopback that answers every request with 400: the model the clients cannot reach.
    Yields its address and the paths asked for."""
    asked: list[str] = []

    class Refuse(http.server.BaseHTTPRequestHandler):
        def _refuse(self):
            asked.append(self.path)
            body = json.dumps({"error": {"message": "no model here", "type": "invalid_request_error"}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _refuse

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", asked
    server.shutdown()
    server.server_close()


@pytest.fixture
def scratch(project, tmp_path, clients_bin, monkeypatch):
    """The project (with its store in .mem/) as the cwd, a home of its own, mem and the clients on the PATH."""
    venv_bin = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ['PATH']}")
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.pathsep.join([str(venv_bin), str(clients_bin), "/usr/local/bin", "/usr/bin", "/bin"]),
           "HOME": str(home), "LANG": "C.UTF-8", "TERM": "dumb", "MEM_CAPTURE_DRAIN": "0"}
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


def codex_home(home: Path, project: Path, no_model: str) -> Path:
    """Codex's own folder for the run: a model provider at the refusing server, the project trusted (Codex
    reads a project's .codex/ only then)."""
    folder = home / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(
        'model = "gpt-5"\nmodel_provider = "offline"\n\n[model_providers.offline]\nname = "offline"\n'
        f'base_url = "{no_model}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        f'request_max_retries = 0\nstream_max_retries = 0\n\n[projects."{project}"]\ntrust_level = "trusted"\n')
    return folder


def test_codex_runs_mem_hooks_only_once_trusted_and_status_says_which(scratch, no_model, monkeypatch):
    project, home, env = scratch
    url, asked = no_model
    env = {**env, "CODEX_HOME": str(codex_home(home, project, url)), "OPENAI_API_KEY": "dummy"}
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


def test_gemini_runs_mem_hooks_within_their_timeout_and_they_are_queued(scratch, no_model):
    project, home, env = scratch
    url, asked = no_model
    (home / ".gemini").mkdir()
    (home / ".gemini/settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    env = {**env, "GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    ok("hooks", "install", "gemini")
    done = client(["gemini", "-p", PROMPT, "--debug"], env, project)
    assert done.returncode != 0 and asked  # it asked the model, and was refused
    started_and_prompted(project / ".mem", "gemini")
    log = done.stdout + done.stderr
    for event in ("SessionStart", "BeforeAgent"):
        assert f"Hook execution for {event}: 1 hooks executed successfully" in log
    assert "Hook execution error" not in log and "failed for event" not in log
