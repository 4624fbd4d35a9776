"""Which store a command (or a hook, from its payload's `cwd`) uses. Plain os.path, no pathlib: the hook
relay decides it on every event an assistant sends, before anything else is imported."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SETTINGS_FILE = "mem.yaml"


def find_store(explicit: Path | None = None, cwd: Path | None = None) -> Path:
    """--dir, then $MEM_DIR, then the nearest project store upward, then the user store."""
    return locate_store(explicit, cwd)[0]


def locate_store(explicit: Path | None = None, cwd: Path | None = None) -> tuple[Path, str]:
    """The store find_store picks, and why (for `mem -v path`)."""
    from pathlib import Path

    root, why = locate(explicit, cwd)
    if root is None:
        from memcli.util.paths import user_store_dir

        return user_store_dir(), why
    return Path(root), why


def locate(explicit=None, cwd=None) -> tuple[str | None, str]:
    """The store's folder as a string (None: the user store), and why."""
    if explicit is not None:
        return _real(explicit), "given by --dir"
    env = os.environ.get("MEM_DIR")
    if env:
        return _real(env), "given by $MEM_DIR"
    here = os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd())
    folder = here
    while True:
        for root in (os.path.join(folder, ".mem"), folder):
            if os.path.isfile(os.path.join(root, SETTINGS_FILE)):
                return root, f"the nearest project store upward from {here} (it holds {SETTINGS_FILE})"
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None, f"the user store: no --dir, no $MEM_DIR, and no .mem/ or {SETTINGS_FILE} above {here}"


def _real(path) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))
