"""Where the tests' helpers, fixtures and the checkout are, for tests that start `mem` in a child process."""

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
ROOT = SUPPORT.parent.parent
FIXTURES = SUPPORT / "fixtures"
FAKE_MEM = SUPPORT / "fake_mem.py"
