"""Threads as the CLI makes them, shared by the thread tests and the provider tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import ok
from locations import ROOT


def new_thread(*args) -> str:
    return ok("thread", "new", *args).stdout.strip()


def replay(thread_id: str, messages: list[dict]) -> list[str]:
    body = "".join(json.dumps(m) + "\n" for m in messages)
    return ok("thread", "append", thread_id, "--jsonl", input=body).stdout.split()


def chat(n: int) -> list[dict]:
    """A conversation of n turns between Ana (user) and the assistant, each with a fact to keep."""
    out = []
    for i in range(1, n + 1):
        if i % 2:
            out.append({"role": "user", "name": "Ana", "content": f"Turn {i}: Ana decided to visit Sintra on day {i} "
                        f"and she loves pastel de nata."})
        else:
            out.append({"role": "assistant", "content": f"Turn {i}: the train from Rossio takes {i + 30} minutes."})
    return out


def real_mem(models):
    """`mem` as its own process on the real models in `models`: `mem(*args, input=None)` gives the finished
    process (and raises when it fails)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEM_MODELS_DIR": str(models)}

    def mem(*args, input=None):
        return subprocess.run([sys.executable, "-m", "memcli", *map(str, args)], input=input, env=env,
                              capture_output=True, text=True, check=True)

    return mem
