"""Which store a command (or a hook, from its payload's `cwd`) uses: light on imports, since `mem hook`
decides it on every event an assistant sends."""

from __future__ import annotations

import os
from pathlib import Path

from memcli.util.paths import user_store_dir

SETTINGS_FILE = "mem.yaml"


def find_store(explicit: Path | None = None, cwd: Path | None = None) -> Path:
    """--dir, then $MEM_DIR, then the nearest project store upward, then the user store."""
    return locate_store(explicit, cwd)[0]


def locate_store(explicit: Path | None = None, cwd: Path | None = None) -> tuple[Path, str]:
    """The store find_store picks, and why (for `mem -v path`)."""
    if explicit is not None:
        return Path(explicit).expanduser().resolve(), "given by --dir"
    env = os.environ.get("MEM_DIR")
    if env:
        return Path(env).expanduser().resolve(), "given by $MEM_DIR"
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for root in (folder / ".mem", folder):
            if (root / SETTINGS_FILE).is_file():
                return root, f"the nearest project store upward from {here} (it holds {SETTINGS_FILE})"
    return user_store_dir(), f"the user store: no --dir, no $MEM_DIR, and no .mem/ or {SETTINGS_FILE} above {here}"
