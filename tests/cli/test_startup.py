"""`mem --help`, `mem ls` and `mem show` must stay fast: they never load the model stack."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import add

HEAVY = ("llama_cpp", "numpy", "hnswlib", "gguf", "safetensors", "mcp", "starlette", "uvicorn", "jinja2")
PROBE = """
import json, sys
from memcli.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(name for name in {heavy!r} if name in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--help"], ["ls"], ["ls", "--json"], ["show", "ID"], ["path"]])
def test_light_commands_do_not_import_the_model_stack(args):
    memory_id = add("a memory to list and show")
    argv = [memory_id if a == "ID" else a for a in args]
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv], capture_output=True, text=True)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
