"""The capture folder of a store, `.capture/`: the sessions' state, the counts `mem status` shows, the
context a new session of each project is handed, and the hook server's socket and lock. The events themselves wait in
the store's work queue (memcli.store.queue, memcli.capture.event_jobs).

It is not a cache (the sessions' state is nowhere else), so it lives outside `.index/`, which mem may
rebuild from the files at any time; and it is never committed (it ignores itself with its own
`.gitignore`). Nothing in it is read from git: every file is sealed by this machine
(memcli.util.own_files), so a committed or planted `context.md`, session or state file is ignored, and no
file there is read or written through a link.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from memcli.capture.projects import project_key
from memcli.store.queue import safe_name
from memcli.util.locks import flock_held
from memcli.util.own_files import (held_elsewhere, open_lock, ours, own_folder, own_root, read_sealed, write_new,
                                   write_sealed)

FOLDER = ".capture"
CONTEXTS = "context"  # one digest a project: <project_key>.md


class Spool:
    def __init__(self, store_root: Path):
        self.root = Path(store_root) / FOLDER
        self.sessions = self.root / "sessions"
        self.state_path = self.root / "state.json"
        self.contexts = self.root / CONTEXTS

    # -- the hook's side: quick, stdlib only --------------------------------------------------------

    def ensure(self) -> None:
        """The store's folder and the capture folders, this user's and no links, checked on every use (a
        link committed after the first run must not carry a write outside the store);
        memcli.errors.NotOurs otherwise."""
        own_root(self.root.parent)
        for folder in (self.root, self.sessions, self.root / "seen"):
            own_folder(folder)
        ignore = self.root / ".gitignore"
        if not os.path.lexists(ignore):
            write_new(ignore, b"# mem's capture state: this machine's, never committed\n*\n")

    def count(self, reason: str, detail: str | None = None) -> None:
        """Count a problem or a skip in the state file (`mem status`), under its lock; never raises."""
        def change(state: dict) -> None:
            counts = state.setdefault("errors", {})
            counts[reason] = counts.get(reason, 0) + 1
            if detail:
                state["last_error"] = detail[:300]

        with contextlib.suppress(OSError, ValueError):
            self.update_state(change)

    def seen(self, client: str) -> None:
        """Stamp the time an event of this client arrived (a file's mtime: no lock, no read), so `mem status`
        tells "installed but never runs" from "runs"."""
        with contextlib.suppress(OSError):
            self.ensure()
            path = self.root / "seen" / safe_name(client or "hook")
            try:
                os.utime(path, follow_symlinks=False)
            except FileNotFoundError:
                write_new(path, b"")

    def last_seen(self) -> dict[str, float]:
        """When each client's last event arrived."""
        folder = self.root / "seen"
        if not (ours(self.root) and ours(folder)):
            return {}
        try:
            return {name: os.lstat(folder / name).st_mtime for name in sorted(os.listdir(folder))}
        except OSError:
            return {}

    def context(self, project: str) -> str:
        """The digest prepared for a new session of `project` (memcli.capture.projects), as this machine's
        last run wrote it; "" when none is (or the file is not one this machine sealed)."""
        if not project or not (ours(self.root) and ours(self.contexts)):
            return ""
        return read_sealed(self.contexts / f"{project_key(project)}.md") or ""

    def serving(self) -> bool:
        """Whether a hook server holds its lock now."""
        return held_elsewhere(self.root / "serve.lock")

    # -- the runner's side ---------------------------------------------------------------------------

    def serve_lock(self):
        """Held by the one hook server of this store."""
        return self._try_lock("serve.lock")

    @contextlib.contextmanager
    def _try_lock(self, name: str):
        self.ensure()
        with os.fdopen(open_lock(self.root / name), "r+") as handle, flock_held(handle) as held:
            yield held

    def summary(self) -> dict | None:
        """For `mem status`: when the last event came, what the runs did, the problems."""
        if not ours(self.root):
            return None
        state, seen = self.state(), self.last_seen()
        return {"last_event": max(seen.values(), default=None), "by_client": seen,
                "last_drain": state.get("last_drain"),
                "serving": self.serving(), "counts": state.get("counts", {}),
                "errors": state.get("errors", {}), "last_error": state.get("last_error")}

    def state(self) -> dict:
        if not ours(self.root):
            return {}
        return _mapping(read_sealed(self.state_path))

    def update_state(self, change) -> dict:
        """Apply `change(state)` under the state lock and save it."""
        self.ensure()
        with os.fdopen(open_lock(self.root / "state.lock"), "r+") as handle, flock_held(handle, wait=True):
            state = self.state()
            change(state)
            write_sealed(self.state_path, json.dumps(state, ensure_ascii=False, indent=1))
            return state

    def session(self, session_id: str) -> dict:
        if not (ours(self.root) and ours(self.sessions)):
            return {}
        return _mapping(read_sealed(self._session_path(session_id)))

    def save_session(self, session_id: str, data: dict) -> None:
        self.ensure()
        write_sealed(self._session_path(session_id), json.dumps(data, ensure_ascii=False, indent=1))

    def all_sessions(self) -> list[dict]:
        if not (ours(self.root) and ours(self.sessions)):
            return []
        found = (_mapping(read_sealed(path)) for path in self.sessions.glob("*.json"))
        return [data for data in found if data]

    def save_context(self, project: str, text: str) -> None:
        self.ensure()
        own_folder(self.contexts)
        write_sealed(self.contexts / f"{project_key(project)}.md", text)

    def _session_path(self, session_id: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:120].lstrip(".") or "unknown"
        return self.sessions / f"{safe}.json"


def _mapping(text: str | None) -> dict:
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
