"""The capture folder of a store, `.capture/`: the sessions' state, the counts `mem status` shows, the
context a new session is handed, and the hook server's socket and lock. The events themselves wait in
the store's work queue (memcli.store.queue, memcli.capture.event_jobs).

It is not a cache (the sessions' state is nowhere else), so it lives outside `.index/`, which mem may
rebuild from the files at any time; and it is never committed (it ignores itself with its own
`.gitignore`).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from memcli.store.queue import safe_name
from memcli.util.locks import flock_held

FOLDER = ".capture"
CONTEXT = "context.md"


class Spool:
    def __init__(self, store_root: Path):
        self.root = Path(store_root) / FOLDER
        self.sessions = self.root / "sessions"
        self.state_path = self.root / "state.json"
        self.context_path = self.root / CONTEXT

    # -- the hook's side: quick, stdlib only --------------------------------------------------------

    def ensure(self) -> None:
        if not self.sessions.is_dir():
            for folder in (self.root, self.sessions):
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            ignore = self.root / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# mem's capture queue and state: this machine's, never committed\n*\n")

    def count(self, reason: str, detail: str | None = None) -> None:
        """Count a problem or a skip in the state file (`mem status`), under its lock; never raises."""
        with contextlib.suppress(OSError, ValueError):
            self.ensure()
            with self._locked(self.root / "state.lock"):
                state = self.state()
                counts = state.setdefault("errors", {})
                counts[reason] = counts.get(reason, 0) + 1
                if detail:
                    state["last_error"] = detail[:300]
                self._write_state(state)

    def seen(self, client: str) -> None:
        """Stamp the time an event of this client arrived (a file's mtime: no lock, no read), so `mem status`
        tells "installed but never runs" from "runs"."""
        path = self.root / "seen" / safe_name(client or "hook")
        with contextlib.suppress(OSError):
            try:
                os.utime(path)
            except FileNotFoundError:
                self.ensure()  # the first event of a store: .capture/ (and its .gitignore) may not exist yet
                path.parent.mkdir(exist_ok=True, mode=0o700)
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))

    def last_seen(self) -> dict[str, float]:
        """When each client's last event arrived."""
        folder = self.root / "seen"
        try:
            return {name: (folder / name).stat().st_mtime for name in sorted(os.listdir(folder))}
        except OSError:
            return {}

    def context(self) -> str:
        try:
            return self.context_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def serving(self) -> bool:
        """Whether a hook server holds its lock now."""
        return self._held("serve.lock")

    def _held(self, name: str) -> bool:
        path = self.root / name
        if not path.exists():
            return False
        with open(path, "a") as handle, flock_held(handle) as free:
            return not free

    # -- the drain's side ----------------------------------------------------------------------------

    def serve_lock(self):
        """Held by the one hook server of this store."""
        return self._try_lock("serve.lock")

    @contextlib.contextmanager
    def _try_lock(self, name: str):
        self.ensure()
        with open(self.root / name, "a") as handle, flock_held(handle) as held:
            yield held

    def summary(self) -> dict | None:
        """For `mem status`: when the last event came, what the runs did, the problems."""
        if not self.root.is_dir():
            return None
        state, seen = self.state(), self.last_seen()
        return {"last_event": max(seen.values(), default=None), "by_client": seen,
                "last_drain": state.get("last_drain"),
                "serving": self.serving(), "counts": state.get("counts", {}),
                "errors": state.get("errors", {}), "last_error": state.get("last_error")}

    def state(self) -> dict:
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def update_state(self, change) -> dict:
        """Apply `change(state)` under the state lock and save it."""
        self.ensure()
        with self._locked(self.root / "state.lock"):
            state = self.state()
            change(state)
            self._write_state(state)
            return state

    def session(self, session_id: str) -> dict:
        try:
            data = json.loads(self._session_path(session_id).read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def save_session(self, session_id: str, data: dict) -> None:
        self.ensure()
        self._atomic(self._session_path(session_id), json.dumps(data, ensure_ascii=False, indent=1))

    def all_sessions(self) -> list[dict]:
        if not self.sessions.is_dir():
            return []
        out = []
        for path in self.sessions.glob("*.json"):
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    out.append(data)
        return out

    def save_context(self, text: str) -> None:
        self.ensure()
        self._atomic(self.context_path, text)

    def _session_path(self, session_id: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:120] or "unknown"
        return self.sessions / f"{safe}.json"

    def _write_state(self, state: dict) -> None:
        self._atomic(self.state_path, json.dumps(state, ensure_ascii=False, indent=1))

    @staticmethod
    def _atomic(path: Path, text: str) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)

    @staticmethod
    @contextlib.contextmanager
    def _locked(path: Path):
        with open(path, "a") as handle, flock_held(handle, wait=True):
            yield
