"""The per-user folders mem uses, each overridable from the environment (tests point them at tmp), and
how a path is shown in a message so the user can type it."""

from __future__ import annotations

import os
from pathlib import Path


def models_dir() -> Path:
    """Where model files live: $MEM_MODELS_DIR, else the user cache dir (shared by every store)."""
    env = os.environ.get("MEM_MODELS_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mem")) / "models"


def user_store_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("mem"))


def user_config_dir() -> Path:
    env = os.environ.get("MEM_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".config" / "mem"


def work_tree_top(path: Path) -> Path | None:
    """The top of the git work tree holding `path` (the nearest folder upward with a `.git` entry,
    a folder or a worktree's file), or None outside one. `path` is taken as it is, links not resolved."""
    folder = Path(os.path.abspath(path))
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def display_path(path: Path) -> str:
    """A path as the user can type it here: from the current folder when it is below it, else whole
    (never "../../tmp/x", whose meaning depends on where the user stands)."""
    whole = os.path.abspath(path)
    try:
        here = os.path.relpath(whole)
    except ValueError:  # another drive
        return whole
    return whole if here == os.pardir or here.startswith(os.pardir + os.sep) else here
