"""`python tests/fake_mem.py ARGS...` runs the real CLI in its own process with the fake models."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from fakes import providers  # noqa: E402

from memcli.cli import main  # noqa: E402

main(obj=providers())
