"""Running `mem` in-process the way a user would, and reading what it left on disk."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import fakes
import yaml
from click.testing import CliRunner

from memcli.cli import main


def run(*args, input=None, env=None):
    """Invoke the CLI; a Python exception that escaped the CLI's error mapping fails the test."""
    result = CliRunner().invoke(main, [str(a) for a in args], input=input, env=env, obj=fakes.current)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def ok(*args, input=None, env=None):
    result = run(*args, input=input, env=env)
    assert result.exit_code == 0, f"mem {' '.join(map(str, args))} failed: {result.stderr}"
    return result


def add(text, *args) -> str:
    """Add a memory from the command line and return the id it printed."""
    return ok("add", text, *args).stdout.strip()


def open_mem():
    """The library on the current store, with the providers the test's CLI gets."""
    from memcli.core.mem import Mem

    return Mem.open(providers=fakes.current)


def short_id(memory_id: str) -> str:
    """The short id that listings and messages show for a memory."""
    return open_mem().catalog.short_id(memory_id)


def store_root() -> Path:
    return Path(os.environ["MEM_DIR"])


def memory_files(root: Path | None = None) -> list[Path]:
    return sorted((root or store_root()).glob("memories/*/*/*.yaml"))


def load_file(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    """Create files (text or bytes) under root, with their folders."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def on_a_terminal(*args: str, env: dict | None = None) -> str:
    """What `mem ARGS` (a child process on the fake models) writes to a terminal."""
    import pty
    import subprocess
    import sys

    from locations import FAKE_MEM

    primary, secondary = pty.openpty()
    try:
        done = subprocess.run([sys.executable, str(FAKE_MEM), *args], stdout=secondary, stderr=subprocess.PIPE,
                              env={**os.environ, **(env or {})}, timeout=120)
        assert done.returncode == 0, done.stderr
        return os.read(primary, 1 << 16).decode()
    finally:
        os.close(primary)
        os.close(secondary)


def ctrl_c_reaches() -> None:
    """A child's `preexec_fn`: SIGINT handled as under a terminal. A suite started in the background (`make
    test &`, a job without a terminal) has SIGINT ignored, an ignored signal stays ignored across exec, and
    the child would never see the Ctrl-C a test sends it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
