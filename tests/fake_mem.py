"""`python tests/fake_mem.py ARGS...` runs the real CLI in its own process with the fake models."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from fakes import HangingEmbedder, providers  # noqa: E402

from memcli.cli import main  # noqa: E402

# MEM_FAKE_HANG_EMBED=1: the embedder hangs once reached, so a test can kill the process mid-write.
main(obj=providers(embedder=HangingEmbedder() if os.environ.get("MEM_FAKE_HANG_EMBED") else None))
