"""Where mem runs: Linux and macOS, and Windows only inside WSL. On a system without
POSIX file locks (fcntl, missing on Windows) every command says so in one line instead of dying with
an ImportError traceback; a hook, which must never fail its assistant, says so and exits 0. The missing
module is simulated in a child process (fcntl set to None in sys.modules before mem starts)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from locations import ROOT

WITHOUT_FCNTL = "import sys; sys.modules['fcntl'] = None; sys.argv[0] = 'mem'; from memcli.entry import main; main()"


def mem_without_fcntl(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_FCNTL, *args], input=stdin, capture_output=True,
                          text=True, env=os.environ | {"PYTHONPATH": str(ROOT)}, timeout=120)


@pytest.mark.parametrize("args", [["ls"], ["add", "a note"], ["search", "note"], ["mcp"], ["--help"]], ids=" ".join)
def test_a_system_without_posix_file_locks_gets_one_clear_line_not_a_traceback(args):
    done = mem_without_fcntl(*args)
    assert done.returncode == 3
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("mem: error: ") and "Linux and macOS" in line and "WSL" in line
    assert "Traceback" not in done.stderr


def test_a_hook_on_such_a_system_says_so_and_lets_the_assistant_go_on():
    done = mem_without_fcntl("hook", stdin='{"hook_event_name": "SessionStart", "session_id": "s1"}')
    assert done.returncode == 0
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert "Linux and macOS" in line


def test_the_readme_says_which_systems_mem_runs_on_and_gives_no_native_windows_path():
    readme = (ROOT / "README.md").read_text()
    assert "Linux and macOS" in readme and "WSL" in readme
    assert "%APPDATA%" not in readme
