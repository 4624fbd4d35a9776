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


main(obj=dataclasses.replace(providers(), embedder=load_embedder))
