"""Which project a coding session belongs to: the git work tree its folder is in, else the folder itself.

A store can hold the sessions of several projects (a user store that `--user` hooks fill from every
folder), so what a new session is handed is chosen by project, never by store: a session in a folder
with no earlier session of its own gets nothing, not another project's history. Standard library only:
the SessionStart hook asks it on every session.
"""

from __future__ import annotations

import hashlib
import os

MAX_DEPTH = 64  # folders walked up looking for a work tree


def project_of(cwd: str) -> str:
    """The root of the git work tree holding `cwd` (a `.git` folder or file there), else `cwd` itself,
    normalised; "" for no folder."""
    if not cwd or not os.path.isabs(cwd):
        return ""
    folder = os.path.normpath(cwd)
    here = folder
    for _ in range(MAX_DEPTH):
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return folder


def project_key(project: str) -> str:
    """A file name for a project's digest: a hash of its path (the path itself may be any length and hold
    any character)."""
    return hashlib.sha256(project.encode("utf-8", "surrogatepass")).hexdigest()[:24]
