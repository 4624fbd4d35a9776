"""The capture folder of a store, `.capture/`: the queue of redacted events, the sessions' state, the
counts `mem status` shows, the context a new session is handed, and the drain's lock.

It is not a cache (the events are not yet anywhere else), so it lives outside `.index/`, which mem may
rebuild from the files at any time; and it is never committed (it ignores itself with its own
`.gitignore`). An event is one file named by its key, created with an exclusive link: two deliveries of
one event, even at the same instant, leave one file. After the drain has used it, it moves to `done/`,
which keeps a late duplicate out too.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from memcli.util.locks import flock_held

FOLDER = ".capture"
CONTEXT = "context.md"


class Spool:
    def __init__(self, store_root: Path):
        self.root = Path(store_root) / FOLDER
        self.queue = self.root / "queue"
        self.done = self.root / "done"
        self.sessions = self.root / "sessions"
        self.state_path = self.root / "state.json"
        self.context_path = self.root / CONTEXT

    # -- the hook's side: quick, stdlib only --------------------------------------------------------

    def enqueue(self, key: str, record: dict) -> bool:
        """Add one event; False when it is already queued or used (a duplicate delivery)."""
        if (self.done / f"{key}.json").exists():
            return False
        self.ensure()
        final = self.queue / f"{key}.json"
        tmp = self.queue / f".{key}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as out:
            json.dump(record, out, ensure_ascii=False)
        try:
            os.link(tmp, final)
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        return True

    def ensure(self) -> None:
        if not self.queue.is_dir():
            for folder in (self.root, self.queue, self.done, self.sessions):
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

    def context(self) -> str:
        try:
            return self.context_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def drain_running(self) -> bool:
        """Whether a drain holds the lock now (a look, not a wait)."""
        return self._held("drain.lock")

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

    def drain_lock(self):
        """Held by the one drain of this store; yields False (at once) when another drain has it."""
        return self._try_lock("drain.lock")

    def serve_lock(self):
        """Held by the one hook server of this store."""
        return self._try_lock("serve.lock")

    @contextlib.contextmanager
    def _try_lock(self, name: str):
        self.ensure()
        with open(self.root / name, "a") as handle, flock_held(handle) as held:
            yield held

    def summary(self) -> dict | None:
        """For `mem status`: events waiting, when the last one came, what the drains did, the problems."""
        if not self.root.is_dir():
            return None
        state = self.state()
        stamps = [os.stat(folder).st_mtime for folder in (self.queue, self.done) if folder.is_dir()]
        return {"waiting": len(self.waiting()), "last_event": max(stamps) if stamps else None,
                "last_drain": state.get("last_drain"), "serving": self.serving(), "draining": self.drain_running(),
                "counts": state.get("counts", {}),
                "errors": state.get("errors", {}), "last_error": state.get("last_error")}

    def waiting(self) -> list[Path]:
        if not self.queue.is_dir():
            return []
        return [p for p in self.queue.iterdir() if p.suffix == ".json" and not p.name.startswith(".")]

    def read(self, path: Path) -> dict | None:
        """An event of the queue, None when it cannot be read (counted, set aside in `bad/`)."""
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(record, dict):
                return record
        except (OSError, ValueError):
            pass
        self.count("unreadable queue file", path.name)
        bad = self.root / "bad"
        bad.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            os.replace(path, bad / path.name)
        return None

    def used(self, path: Path) -> None:
        """The event has been turned into what it makes: keep its key in `done/`, so a late twin is dropped."""
        target = self.done / path.name
        if target.exists():
            path.unlink(missing_ok=True)
        else:
            os.replace(path, target)

    def forget(self, age_s: float) -> int:
        """Drop the keys of events used more than `age_s` ago: a duplicate delivery comes within seconds,
        and `done/` would otherwise grow with every event ever captured."""
        if not self.done.is_dir():
            return 0
        before, dropped = time.time() - age_s, 0
        for path in self.done.iterdir():
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < before:
                    path.unlink()
                    dropped += 1
        return dropped

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
