"""When each client's last hook event reached a store: `.capture/seen/<client>`, whose modification time is
the answer. It makes "installed but never runs" visible (`mem status`, `mem hooks status`): a client whose
hooks are written but skipped (Codex before its hooks are trusted, a command not on the client's PATH, a
timeout in the wrong unit) has no file here, or an old one.

Touching a file is the cheapest record a hook can leave (no lock, no JSON); stdlib only, never raises.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

FOLDER = "seen"
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")


def saw(capture_root: Path, client: str) -> None:
    """Record that an event from `client` arrived now (a name that is not a plain client name counts as
    `other`: the name comes from a settings file or a payload)."""
    name = client if NAME.fullmatch(str(client)) else "other"
    try:
        folder = Path(capture_root) / FOLDER
        folder.mkdir(mode=0o700, exist_ok=True)
        path = folder / name
        with open(path, "a"):
            pass
        os.utime(path)
    except OSError:
        pass


def last_seen(capture_root: Path) -> dict[str, float]:
    """{client: epoch seconds of its last event}, for the clients that ever sent one."""
    folder = Path(capture_root) / FOLDER
    out = {}
    try:
        for path in folder.iterdir():
            if NAME.fullmatch(path.name) and path.is_file() and not path.is_symlink():
                out[path.name] = path.stat().st_mtime
    except OSError:
        return {}
    return dict(sorted(out.items()))
