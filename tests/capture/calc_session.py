"""The two-turn session the real clients run for the import tests and fixtures: a small git project whose
add() subtracts, a prompt to fix it (the model asks for a failing test run, the fix, a passing run), then
the session resumed with a ruling (one more run). The model is scripted_model.ScriptedModel; each client
runs the tools itself, writes its own transcript and sends its own hook payloads.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

PROMPTS = ("add() in src/calc.py returns the wrong sum; fix it and run the tests.",
           "From now on run the tests with python -m pytest -q.")
ANSWERS = ("Fixed add() in src/calc.py: it subtracted b instead of adding it. The first run of python -m pytest -q "
           "failed on test_add (assert -1 == 5); after the fix both tests pass.",
           "Noted: the tests run with python -m pytest -q from now on. Both pass. Not done: mul() has no test for "
           "negative numbers yet.")
CALC = '"""Small arithmetic helpers."""\n\n\ndef add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n'
TESTS = "from src.calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
PATCH = "*** Begin Patch\n*** Update File: src/calc.py\n@@\n def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n"


# Where each client keeps its transcripts, from the home it runs with: the environment variable that moves
# that folder, and the folder's name under the home.
CLIENT_HOMES = {"claude-code": ("CLAUDE_CONFIG_DIR", ".claude"), "codex": ("CODEX_HOME", ".codex"),
                "gemini": ("GEMINI_CLI_HOME", "")}


def transcripts(home: Path) -> list[Path]:
    """The session files the clients wrote under `home` (Claude Code's projects/, Codex's sessions/,
    Gemini's chats/)."""
    return sorted(p for p in home.rglob("*.json*") if {"sessions", "projects", "chats"} & set(p.parent.parts))


def write_project(project: Path, home: Path, python_bin: Path) -> None:
    """The project, its files committed (a store already in it stays out of git); the home's login profile puts `python_bin` first (Codex runs commands in a
    login shell, which resets PATH)."""
    (project / "src").mkdir(parents=True)
    (project / "src" / "calc.py").write_text(CALC)
    (project / "test_calc.py").write_text(TESTS)
    (home / ".profile").write_text(f"export PATH={python_bin}:$PATH\n")
    git = ["git", "-c", "user.name=dev", "-c", "user.email=dev@example.com"]
    for step in (["init", "-q"], ["add", "src", "test_calc.py"], ["commit", "-qm", "calc"]):
        subprocess.run(git + step, cwd=project, check=True, capture_output=True)


def calls(client: str, project: Path) -> list[tuple[str, dict]]:
    """The first turn's three calls (a failing test run, the fix, a passing run) and the second turn's one,
    in the client's own tool names."""
    calc = str(project / "src" / "calc.py")
    if client == "codex":
        run = "exec_command"
        return [(run, {"cmd": "python -m pytest -q"}), ("apply_patch", {"patch": PATCH}),
                (run, {"cmd": "python -m pytest -q"}), (run, {"cmd": "python -m pytest -q test_calc.py"})]
    if client == "claude-code":
        fix = ("Edit", {"file_path": calc, "old_string": "    return a - b", "new_string": "    return a + b"})
        return [("Bash", {"command": "python -m pytest -q", "description": "Run the tests"}), fix,
                ("Bash", {"command": "python -m pytest -q", "description": "Run the tests again"}),
                ("Bash", {"command": "python -m pytest -q test_calc.py", "description": "Run the calc tests"})]
    fix = ("replace", {"file_path": calc, "instruction": "add, not subtract", "old_string": "    return a - b",
                       "new_string": "    return a + b"})
    return [("run_shell_command", {"command": "python -m pytest -q"}), fix,
            ("run_shell_command", {"command": "python -m pytest -q"}),
            ("run_shell_command", {"command": "python -m pytest -q test_calc.py"})]


def codex_home(home: Path, project: Path, url: str) -> Path:
    """Codex's own folder for the run: a model provider at `url`, the project trusted (Codex reads a
    project's .codex/ only then)."""
    folder = home / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "offline"\n\n[model_providers.offline]\nname = "offline"\n'
        f'base_url = "{url}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        f'request_max_retries = 0\nstream_max_retries = 0\n\n[projects."{project}"]\ntrust_level = "trusted"\n')
    return folder


def gemini_env(home: Path, env: dict, url: str) -> dict:
    """An API key that is no key, the model at `url`, the folder trusted for a headless run."""
    (home / ".gemini").mkdir()
    (home / ".gemini/settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    return {**env, "GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}


def turns(client: str, home: Path, project: Path, url: str, env: dict) -> tuple[dict, list[list[str]]]:
    """The client's environment and its two commands: the first prompt, then the session resumed."""
    if client == "codex":
        env = {**env, "CODEX_HOME": str(codex_home(home, project, url)), "OPENAI_API_KEY": "dummy"}
        run = ["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
               "--dangerously-bypass-approvals-and-sandbox"]
        return env, [[*run, PROMPTS[0]], [*run, "resume", "--last", PROMPTS[1]]]
    if client == "claude-code":
        env = {**env, "ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_BASE_URL": url, "IS_SANDBOX": "1"}
        return env, [["claude", "-p", PROMPTS[0], "--dangerously-skip-permissions"],
                     ["claude", "-p", "--continue", PROMPTS[1], "--dangerously-skip-permissions"]]
    return gemini_env(home, env, url), [["gemini", "-p", PROMPTS[0], "--yolo"],
                                        ["gemini", "--resume", "latest", "-p", PROMPTS[1], "--yolo"]]


def run(client: str, model, home: Path, project: Path, env: dict) -> list[subprocess.CompletedProcess]:
    """Both turns, the model scripted for each: three calls and the first answer, then the fourth call
    (the conversation already holds three results) and the second answer."""
    env, commands = turns(client, home, project, model.url, env)
    script, done = calls(client, project), []
    for n, command in enumerate(commands):
        model.calls, model.answer = (script[:3] if n == 0 else script), ANSWERS[n]
        done.append(subprocess.run(command, env=env, cwd=project, capture_output=True, text=True, timeout=300,
                                   stdin=subprocess.DEVNULL))
    return done
