"""The store's work queue: what a write or a hook leaves for later, kept on disk until it is done.

A write stores its text at once; the slow parts (compression by a model or a server, embedding, folding
a thread, turning a hook event into an observation, a session summary) are jobs here. One file per job
under `.queue/jobs/`, named by its kind and key: putting a job is one exclusive link (two deliveries of
one hook event, even at the same instant, leave one file) and needs no database, so a hook pays a file
write and nothing else. A job is taken out only when its work is done, so a kill at any instant leaves
it to the next run; every handler is written to be run again safely (docs/architecture.md).

One lock rule: a job names a scope (the memory, thread or capture state it touches), and a runner works
on a job only while it holds that scope's flock, so two runners never work on one thing; a runner that
finds a scope busy leaves that job to its holder. One retry rule: a job that raises is tried again after
a pause that doubles (BACKOFF_S, 2x, ... up to MAX_BACKOFF_S) and, after MAX_TRIES, or at once when its
input can never pass (`permanent`), parked under `.queue/parked/` with its reason: a parked job never
stops the others, `mem queue retry` puts it back, `mem queue drop` forgets it.

The folder is this machine's, never committed (it ignores itself), and kept out of `.index/`, which mem
may rebuild from the memory files at any time. Every job file is sealed by this machine
(memcli.util.own_files): one committed into a repository, or planted through a link, is set aside,
never run. Standard library only: the hook imports it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
from pathlib import Path
from collections import Counter
from typing import Callable, Iterable, Iterator

from memcli.util.locks import flock_held
from memcli.util.own_files import (held_elsewhere, is_own_file, open_lock, ours, own_folder, own_root, read_sealed,
                                   sealed, write_new)

FOLDER = ".queue"
MAX_TRIES = 5
BACKOFF_S = 2.0
MAX_BACKOFF_S = 900.0
KEEP_DONE_S = 7 * 24 * 3600  # how long a done job's key keeps a late duplicate out (jobs put `once`)
SAFE = "-_."
DONE_NAME = re.compile(r"[a-z_]+-[0-9a-f]{16,64}")  # a done marker's name: kind-hexkey (events.event_key)


class Job:
    """One unit of work: `kind` says which handler runs it, `data` what it works on."""

    __slots__ = ("kind", "key", "data", "at", "scope", "tries", "not_before", "error", "once")

    def __init__(self, kind: str, key: str, data: dict, *, at: float, scope: str, tries: int = 0,
                 not_before: float = 0.0, error: str | None = None, once: bool = False):
        self.kind, self.key, self.data, self.at, self.scope = kind, key, data, at, scope
        self.tries, self.not_before, self.error, self.once = tries, not_before, error, once

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.key}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "key": self.key, "at": self.at, "scope": self.scope, "tries": self.tries,
                "not_before": self.not_before, "error": self.error, "once": self.once, "data": self.data}

    @classmethod
    def from_dict(cls, record: dict) -> "Job":
        if not isinstance(record, dict) or not isinstance(record.get("data"), dict):
            raise ValueError("not a job")
        return cls(str(record["kind"]), str(record["key"]), record["data"], at=float(record["at"]),
                   scope=str(record["scope"]), tries=int(record.get("tries") or 0),
                   not_before=float(record.get("not_before") or 0.0), error=record.get("error"),
                   once=bool(record.get("once")))


def set_aside_why(count: int) -> str:
    """What `mem status` and `mem doctor` say of the files a runner set aside in bad/."""
    from memcli.util.own_files import KEY_FILE

    return (f"{count} job{'s' if count != 1 else ''} set aside in {FOLDER}/bad/: not sealed by this machine "
            f"(committed or copied in, damaged, or sealed under a {KEY_FILE} since lost or replaced); never run")


def safe_name(text: str) -> str:
    """A key as a file name: what is not a letter, digit or -_. becomes _, at most 120 characters."""
    return "".join(c if c.isalnum() or c in SAFE else "_" for c in text)[:120].lstrip(".") or "_"


class WorkQueue:
    def __init__(self, store_root: Path, clock: Callable[[], float] = time.time):
        self.root = Path(store_root) / FOLDER
        self.jobs_dir = self.root / "jobs"
        self.parked_dir = self.root / "parked"
        self.done_dir = self.root / "done"
        self.locks_dir = self.root / "locks"
        self.clock = clock

    # -- putting ------------------------------------------------------------------------------------

    def put(self, kind: str, key: str, data: dict, *, scope: str, at: float | None = None, once: bool = False,
            replace: bool = False) -> bool:
        """Queue a job; False when a job of this kind and key already waits (or, `once`, was done within
        KEEP_DONE_S: a duplicate delivery). `replace` writes over a waiting job of the same key instead
        (its tries start again)."""
        job = Job(kind, safe_name(key), data, at=self.clock() if at is None else at, scope=scope, once=once)
        self.ensure()
        if once and os.path.lexists(self.done_dir / job.name):
            return False
        final = self.jobs_dir / f"{job.name}.json"
        if replace:
            _write_atomic(final, job.to_dict())
            return True
        tmp = self.jobs_dir / f".{job.name}.{os.getpid()}.tmp"
        _write(tmp, job.to_dict())
        try:
            os.link(tmp, final)
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        return True

    def ensure(self) -> None:
        """The store's folder and the queue's, this user's and no links, checked on every use (a link
        committed after the first run must not carry a write outside the store); NotOurs otherwise."""
        own_root(self.root.parent)
        for folder in (self.root, self.jobs_dir, self.parked_dir, self.done_dir, self.locks_dir):
            own_folder(folder)
        ignore = self.root / ".gitignore"
        if not os.path.lexists(ignore):
            write_new(ignore, b"# mem's work queue: this machine's, never committed\n*\n")

    # -- reading ------------------------------------------------------------------------------------

    def waiting(self, kinds: Iterable[str] | None = None, *, tidy: bool = False) -> list[Job]:
        """The jobs not yet done (parked ones aside), oldest first. A file that is not a job of this
        machine's is left out; `tidy` (a runner) also sets it aside in bad/. A listing changes nothing."""
        return self._read_all(self.jobs_dir, kinds, tidy)

    def parked(self, kinds: Iterable[str] | None = None) -> list[Job]:
        return self._read_all(self.parked_dir, kinds, False)

    def get(self, kind: str, key: str) -> Job | None:
        return self._read(self.jobs_dir / f"{kind}-{safe_name(key)}.json")

    def has(self, kind: str, key: str) -> bool:
        return (self.jobs_dir / f"{kind}-{safe_name(key)}.json").exists()

    def known(self, kind: str, key: str) -> bool:
        """Whether `put(..., once=True)` would refuse this job: one waits, or was done within KEEP_DONE_S."""
        return self.has(kind, key) or (self.done_dir / f"{kind}-{safe_name(key)}").exists()

    def counts(self) -> dict:
        """For `mem status`: jobs waiting and parked, by kind."""
        waiting, parked = {}, {}
        for folder, out in ((self.jobs_dir, waiting), (self.parked_dir, parked)):
            for name in _names(folder):
                kind = name.split("-", 1)[0]
                out[kind] = out.get(kind, 0) + 1
        return {"waiting": waiting, "parked": parked, "bad": len(_names(self.root / "bad"))}

    def _read_all(self, folder: Path, kinds: Iterable[str] | None, tidy: bool) -> list[Job]:
        wanted = set(kinds) if kinds is not None else None
        jobs = []
        for name in _names(folder):
            if wanted is not None and name.split("-", 1)[0] not in wanted:
                continue
            job = self._read(folder / name, tidy)
            if job is not None:
                jobs.append(job)
        return sorted(jobs, key=lambda job: (job.at, job.name))

    def _read(self, path: Path, tidy: bool = False) -> Job | None:
        """A job file, or None when it is gone (done meanwhile) or cannot be trusted or read: not sealed by
        this machine, a link, not JSON (and then, `tidy`, set aside in bad/)."""
        if not os.path.lexists(path):
            return None
        text = read_sealed(path)
        try:
            if text is None:
                raise ValueError("not sealed by this machine")
            return Job.from_dict(json.loads(text))
        except (ValueError, KeyError, TypeError):
            if tidy:
                self._set_aside(path)
            return None

    def _set_aside(self, path: Path) -> None:
        """Move a file that is no job of this machine's into bad/ (`mem status` counts them): only within
        folders checked to be this user's, so a linked folder never makes this a move outside the store."""
        bad = self.root / "bad"
        with contextlib.suppress(OSError):
            self.ensure()
            own_folder(bad)
            os.replace(path, bad / path.name)

    # -- the outcome of a run -----------------------------------------------------------------------

    def finish(self, job: Job) -> None:
        """The job's work is done: take it out (and keep its key a while when it was put `once`)."""
        self.ensure()
        if job.once:
            with contextlib.suppress(OSError):
                write_new(self.done_dir / job.name, b"")
        with contextlib.suppress(FileNotFoundError):
            (self.jobs_dir / f"{job.name}.json").unlink()

    def later(self, job: Job, seconds: float, reason: str) -> None:
        """Not done, and no fault of the job's (a server that is down): try again in `seconds`."""
        job.not_before, job.error = self.clock() + seconds, reason
        self._rewrite(job)

    def fail(self, job: Job, reason: str, *, permanent: bool = False) -> bool:
        """The job raised: tried again after a pause that doubles, or parked (True) after MAX_TRIES or
        at once when `permanent`."""
        self.ensure()
        job.tries += 1
        job.error = reason[:500]
        if permanent or job.tries >= MAX_TRIES:
            job.not_before = self.clock()
            _write_atomic(self.parked_dir / f"{job.name}.json", job.to_dict())
            with contextlib.suppress(FileNotFoundError):
                (self.jobs_dir / f"{job.name}.json").unlink()
            return True
        job.not_before = self.clock() + min(BACKOFF_S * 2 ** (job.tries - 1), MAX_BACKOFF_S)
        self._rewrite(job)
        return False

    def _rewrite(self, job: Job) -> None:
        """Save a waiting job's new state, unless it was done or replaced meanwhile."""
        self.ensure()
        path = self.jobs_dir / f"{job.name}.json"
        if os.path.lexists(path):
            _write_atomic(path, job.to_dict())

    def retry(self, names: Iterable[str] | None = None) -> int:
        """Put parked jobs (all, or those named) back in the queue with their tries at 0."""
        moved = 0
        for job in self._chosen(names):
            job.tries, job.not_before = 0, 0.0
            _write_atomic(self.jobs_dir / f"{job.name}.json", job.to_dict())
            (self.parked_dir / f"{job.name}.json").unlink(missing_ok=True)
            moved += 1
        return moved

    def drop(self, names: Iterable[str] | None = None) -> int:
        """Forget parked jobs (all, or those named)."""
        dropped = 0
        for job in self._chosen(names):
            (self.parked_dir / f"{job.name}.json").unlink(missing_ok=True)
            dropped += 1
        return dropped

    def _chosen(self, names: Iterable[str] | None) -> list[Job]:
        self.ensure()
        parked = self.parked()
        if names is None:
            return parked
        wanted = {name for name in names if name.strip()}  # a blank name begins every name: it names none
        return [job for job in parked if job.name in wanted or any(job.name.startswith(n) for n in wanted)]

    def forget_done(self, age_s: float = KEEP_DONE_S) -> int:
        """Drop the keys of `once` jobs done more than `age_s` ago: a duplicate comes within seconds."""
        before, dropped = self.clock() - age_s, 0
        try:
            self.ensure()
        except OSError:
            return 0
        for name in _names(self.done_dir, suffix=""):
            path = self.done_dir / name
            with contextlib.suppress(OSError):  # only an empty marker of mem's shape, never a link
                if DONE_NAME.fullmatch(name) and is_own_file(path, empty=True) and os.lstat(path).st_mtime < before:
                    path.unlink()
                    dropped += 1
        return dropped

    # -- locks --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def scope(self, scope: str, *, wait: bool = False) -> Iterator[bool]:
        """Yields True while this process holds the scope's lock; False at once where another holds it,
        unless `wait`. The lock file goes with its last holder (a scope per memory would otherwise leave a
        file per memory): a process that got the lock of a file unlinked meanwhile takes the new one."""
        self.ensure()
        path = self.locks_dir / f"scope-{safe_name(scope)}.lock"
        while True:
            fd = open_lock(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                yield False
                return
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        try:
            yield True
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            os.close(fd)

    @contextlib.contextmanager
    def runner(self) -> Iterator[bool]:
        """Held by the one background runner of this store (`mem queue run --background`)."""
        with self._lock("runner", False) as held:
            yield held

    def runner_active(self) -> bool:
        """Whether a background runner holds its lock now (a look, not a wait)."""
        return held_elsewhere(self.locks_dir / "runner.lock")

    @contextlib.contextmanager
    def _lock(self, name: str, wait: bool) -> Iterator[bool]:
        self.ensure()
        fd = open_lock(self.locks_dir / f"{name}.lock")
        with os.fdopen(fd, "r+") as handle, flock_held(handle, wait) as held:
            yield held


def start_runner(store_root: Path, linger: float = 15) -> None:
    """Start a runner of this store's queue detached from the caller (a hook's client, a shell), at a lower
    priority, unless one runs; it waits `linger` seconds for more work after its last job. MEM_BACKGROUND=0
    starts none (the work waits for `mem queue run` or `mem mcp`)."""
    if os.environ.get("MEM_BACKGROUND") == "0" or WorkQueue(store_root).runner_active():
        return
    import subprocess
    import sys

    subprocess.Popen([sys.executable, "-m", "memcli", "--dir", str(store_root), "queue", "run", "--background",
                      "--linger", str(linger)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, cwd=str(store_root))


class Later(Exception):
    """Raised by a handler whose job cannot be done now through no fault of its own (a server that is
    down, a circuit that is open): the job waits `seconds` and is not counted as a failure."""

    def __init__(self, seconds: float, reason: str):
        super().__init__(reason)
        self.seconds, self.reason = seconds, reason


Handler = Callable[[Job], None]


def run_jobs(queue: WorkQueue, handlers: dict[str, Handler], *, names: Iterable[str] | None = None,
             wait: bool = False, limit: int | None = None, permanent: Callable[[BaseException], bool] = lambda exc: False,
             describe: Callable[[BaseException], str] = str) -> Counter:
    """One pass over the waiting jobs that `handlers` know (or only those `names` names), oldest first:
    each run under its scope's lock, then taken out; a job whose handler raises is retried or parked
    (WorkQueue.fail), and the pass goes on. A job not due yet, or whose scope another runner holds, is
    left for later, unless `wait` (a command that wants its own jobs done now): then it waits for the
    scope and runs the job whatever its pause. At most `limit` jobs are run (a server that must stay free
    for requests runs one at a time). Returns what happened, by kind and outcome."""
    import logging

    counts: Counter = Counter()
    wanted = set(names) if names is not None else None
    for job in queue.waiting(handlers, tidy=True):
        if limit is not None and sum(counts.values()) - counts["busy"] >= limit:
            break
        if wanted is not None and job.name not in wanted:
            continue
        if not wait and job.not_before > queue.clock():
            continue
        with queue.scope(job.scope, wait=wait) as held:
            if not held:
                counts["busy"] += 1
                continue
            current = queue.get(job.kind, job.key)  # done or changed while this runner waited
            if current is None or (not wait and current.not_before > queue.clock()):
                continue
            try:
                handlers[current.kind](current)
            except Later as later:
                queue.later(current, later.seconds, later.reason)
                counts["later"] += 1
                continue
            except Exception as exc:  # noqa: BLE001 - one job's fault never stops the others
                reason = describe(exc)
                parked = queue.fail(current, reason, permanent=permanent(exc))
                counts["parked" if parked else "retried later"] += 1
                logging.getLogger("memcli").warning("%s job %s %s: %s", current.kind, current.key[:16],
                            "parked" if parked else "failed, to be retried", reason)
                continue
            queue.finish(current)
            counts[current.kind] += 1
    return counts


def _names(folder: Path, suffix: str = ".json") -> list[str]:
    """The names in one of the queue's folders; none when the folder is not this user's (a link)."""
    if not ours(folder) or not ours(folder.parent):
        return []
    try:
        return [name for name in os.listdir(folder) if name.endswith(suffix) and not name.startswith(".")]
    except OSError:
        return []


def _write(path: Path, record: dict) -> None:
    write_new(path, sealed(json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass")))


def _write_atomic(path: Path, record: dict) -> None:
    """Through a temp file beside `path`, renamed into place: a reader sees the old job or the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    _write(tmp, record)
    os.replace(tmp, path)
