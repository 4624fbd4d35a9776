"""`python tests/support/fake_mem.py ARGS...` runs the real CLI in its own process with the fake models."""

import dataclasses
import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from fakes import FakeEmbedder, HangingEmbedder, providers  # noqa: E402

from memcli.cli import main  # noqa: E402
from memcli.errors import ModelError  # noqa: E402

# MEM_FAKE_HANG_EMBED=1: the embedder hangs once reached, so a test can kill the process mid-write.
EMBEDDER = HangingEmbedder() if os.environ.get("MEM_FAKE_HANG_EMBED") else FakeEmbedder()


def say(line):
    """One write per line: stderr writes through, and print's text and newline are two writes, which
    the parent's lines can fall between (mem's own lines go out whole through click.echo)."""
    sys.stderr.write(line + "\n")


def load_embedder(ref):
    """MEM_FAKE_LOAD=hang: loading the model says so on stderr and never ends (a test interrupts it);
    =fail: the model cannot be loaded (and each try says so)."""
    how = os.environ.get("MEM_FAKE_LOAD")
    if how == "fail":
        say("fake embedder: tried to load")
        raise ModelError("fake embedder: no such model")
    if how == "hang":
        say("fake embedder: loading")
        threading.Event().wait()
    return EMBEDDER


def kill_after(target: str) -> None:
    """MEM_FAKE_KILL_AFTER=module:Class.method[:n]: the process kills itself (SIGKILL, as `kill -9` would)
    right after the n-th call of that function returns (n=1 by default), so a test can stop a run between
    any two of its steps."""
    import importlib
    import signal

    where, _, count = target.partition("@")
    module_name, _, attribute = where.partition(":")
    owner = importlib.import_module(module_name)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original, left = getattr(owner, name), [int(count or 1)]

    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        left[0] -= 1
        if left[0] == 0:
            say(f"fake mem: killed after {attribute}")
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, name, wrapped)


if os.environ.get("MEM_FAKE_KILL_AFTER"):
    kill_after(os.environ["MEM_FAKE_KILL_AFTER"])
main(obj=dataclasses.replace(providers(), embedder=load_embedder))
