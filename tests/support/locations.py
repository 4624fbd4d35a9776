"""Where the tests' helpers, fixtures and the checkout are, for tests that start `mem` in a child process."""

import os
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
ROOT = SUPPORT.parent.parent
FIXTURES = SUPPORT / "fixtures"
FAKE_MEM = SUPPORT / "fake_mem.py"



def _real_models_dir() -> Path:
    named = os.environ.get("MEM_TEST_MODELS_DIR") or os.environ.get("MEM_MODELS_DIR")
    if named:
        return Path(named)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mem")) / "models"


# The real default models, as pulled by `make test`: read when the run starts, before the autouse fixture
# points MEM_MODELS_DIR at a temporary folder.
REAL_MODELS_DIR = _real_models_dir()
