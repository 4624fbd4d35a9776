"""File-system helpers for writes that must never leave a half file under the final name."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def sibling_temp(dest: Path) -> Path:
    """A fresh name beside dest (same file system, so os.replace is atomic); nothing is created."""
    return dest.with_name(f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
