"""Coding sessions that ran before mem was installed (or without its hooks), imported from the
transcripts their client kept on disk (memcli.capture.transcripts): `mem import --from CLIENT`.

Each transcript line becomes the hook payload the client would have sent while the session ran, and
from there takes the hooks' own path: `normalise`, `<private>` removal and redaction
(memcli.capture.hook.kept), the store's work queue as `event` jobs keyed as the hooks key them
(memcli.capture.events), then the capture jobs (memcli.capture.event_jobs) that make observations,
threads, summaries and the digest a new session is handed. So what is skipped, merged, ignored
(.memignore/.gitignore) or redacted is decided by the code that decides it for a live session, and
nothing is decided twice in two places.

Stored once: an event folded into its session's state before (its key is in the state), or waiting or
done in the queue, is not queued again, so an import run twice, or over a session that grew since, adds
only what is new; a session the hooks captured (its state was not made by an import) is left as it is.
Files are streamed line by line, a line longer than LINE_LIMIT or that is not a JSON object is counted
and skipped, and the file goes on. The events of a file are given strictly increasing times in the
order they happened, so the queue runs them in that order (a sub-agent's file among its session's).
"""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from memcli.capture.events import EVENT_JOB, BadPayload, event_key, normalise, queue_event
from memcli.capture.projects import project_of
from memcli.capture.transcripts import Tally

if TYPE_CHECKING:
    from memcli.core.mem import Mem

CLIENTS = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini"}
LINE_LIMIT = 64 << 20  # a transcript line longer than this is skipped (counted), never held whole
PROGRESS_BYTES = 1 << 20
TICK = 0.001  # seconds between two events of a session that the transcript stamps with the same time


@dataclass
class Session:
    """One session as the import met it."""

    client: str
    id: str
    path: str
    cwd: str = ""
    first: float = 0.0
    last: float = 0.0
    state: str = "new"  # new, more (some of it was imported before), stored (all of it), hooks, elsewhere
    events: Counter = field(default_factory=Counter)  # new events by kind: prompt, tool, stop, ...
    known: int = 0  # events already stored
    before: int = 0  # events before --since

    def to_dict(self) -> dict:
        return {"client": self.client, "session": self.id, "path": self.path, "cwd": self.cwd,
                "first": self.first, "last": self.last, "state": self.state, "new": dict(self.events),
                "already_stored": self.known, "before_since": self.before}


@dataclass
class Imported:
    dry_run: bool
    files: int = 0
    bytes: int = 0
    sessions: dict[str, Session] = field(default_factory=dict)
    queued: int = 0  # events queued (with dry_run: that would be)
    refused: int = 0
    bad_lines: int = 0
    bad_files: list[str] = field(default_factory=list)
    stored: Counter = field(default_factory=Counter)  # what the capture jobs did with them

    def count(self, state: str) -> int:
        return sum(1 for session in self.sessions.values() if session.state == state)

    def to_dict(self) -> dict:
        return {"dry_run": self.dry_run, "files": self.files, "bytes": self.bytes, "queued": self.queued,
                "refused": self.refused, "bad_lines": self.bad_lines, "bad_files": self.bad_files,
                "stored": dict(self.stored), "sessions": [s.to_dict() for s in self.sessions.values()]}


def reader(client: str):
    from memcli.errors import InputError

    if client not in CLIENTS:
        raise InputError(f"no transcripts of {client!r}: one of {', '.join(CLIENTS)}")
    return importlib.import_module(f"memcli.capture.transcripts.{CLIENTS[client]}")


def transcripts(client: str, paths: Iterable[Path], project: str) -> list[Path]:
    """The files to read: those under each PATH (a file, or a folder walked for the client's files), or,
    with no PATH, the sessions of `project` where the client keeps them."""
    module = reader(client)
    paths = list(paths)
    if not paths:
        return module.found(project)
    files: list[Path] = []
    for path in paths:
        files += module.files_in(path) if path.is_dir() else [path]
    return list(dict.fromkeys(files))


def import_sessions(mem: Mem, client: str, files: list[Path], *, project: str | None, since: float | None = None,
                    dry_run: bool = False, progress: Callable[[str, int, int | None], None] | None = None) -> Imported:
    """Queue the events of `files` as the hooks would have (or, `dry_run`, only say what would be), then
    run the capture jobs with compression queued. `project`: keep only sessions run in it (a discovered
    set of files may hold others'); None keeps all, each in its own project."""
    from memcli.capture.hook import CLIP_ROOM, gate_of, kept, store_settings
    from memcli.capture.options import CaptureOptions
    from memcli.capture.spool import Spool
    from memcli.store.queue import WorkQueue
    from memcli.util.textio import bounded_lines

    module = reader(client)
    root = mem.store.root
    settings = store_settings(root)
    gate, spool, queue = gate_of(root, settings), Spool(root), WorkQueue(root)
    room = CaptureOptions.from_settings(settings.get("capture")).max_output_chars * CLIP_ROOM
    report, tally = Imported(dry_run=dry_run), Tally()
    total = sum(_size(path) for path in files)
    states: dict[str, dict] = {}
    for path in files:
        try:
            if since is not None and path.stat().st_mtime < since:
                continue
            handle = path.open("rb")
        except OSError:
            tally.bad(path)
            continue
        report.files += 1
        with handle:
            lines = _counted(bounded_lines(handle, LINE_LIMIT), report, total, progress)
            extra = {"cwd": project or str(Path.cwd())} if client == "gemini" else {}
            previous = 0.0
            for payload, at in module.payloads(lines, path, tally, **extra):
                try:
                    record = normalise(payload, client=client)
                except BadPayload:
                    tally.bad(path)
                    continue
                record["imported"] = True
                session = _session(report, record, path, states, spool, project)
                if session.state == "elsewhere":
                    break  # a file is one session, run in one folder: another project's is not read on
                if session.state == "hooks":
                    continue
                if since is not None and at < since:
                    session.before += 1
                    continue
                at = previous = max(at, previous + TICK) if previous else at
                session.first, session.last = min(session.first or at, at), max(session.last, at)
                stored = kept(record, gate, at, room)
                if stored is None:
                    report.refused += 1
                    continue
                key = event_key(stored)
                if key in states[session.id].get("applied", ()) or queue.known(EVENT_JOB, key):
                    session.known += 1
                    continue
                if dry_run or queue_event(queue, stored):
                    report.queued += 1
                    session.events[record["event"]] += 1
                else:
                    session.known += 1
    for session in report.sessions.values():
        if session.state == "new" and session.known:
            session.state = "more" if session.events else "stored"
    report.bad_lines, report.bad_files = tally.bad_lines, tally.bad_files
    if report.queued and not dry_run:
        report.stored = _make_memories(mem, report.queued, progress)
    return report


def _session(report: Imported, record: dict, path: Path, states: dict, spool, project: str | None) -> Session:
    """The session an event belongs to, met for the first time: whether it is to be imported (not the
    hooks' own, and of the project asked for)."""
    sid = record["session"]
    session = report.sessions.get(sid)
    if session is None:
        session = report.sessions[sid] = Session(record["client"], sid, str(path), record.get("cwd", ""))
        states[sid] = spool.session(sid)
        if states[sid] and not states[sid].get("imported"):
            session.state = "hooks"
        elif project is not None and project_of(session.cwd) != project:
            session.state = "elsewhere"
    return session


def _make_memories(mem: Mem, events: int, progress) -> Counter:
    """Run the capture jobs now: observations, threads, summaries and the digest, each observation's
    compression queued (`mem compress --pending` or the background runner does it)."""
    from memcli.capture.event_jobs import KINDS
    from memcli.core.compressing import CompressOptions
    from memcli.features.work import Work

    work = Work(mem, KINDS, compressing=CompressOptions(defer=True))
    if progress is not None:
        told = _Told(work, events, progress)
        work.handlers = {kind: told.wrap(kind, handler) for kind, handler in work.handlers.items()}
    return work.run()


class _Told:
    """Tells `progress` of each capture job done: the events folded into their sessions (all of them come
    first, in one pass), then the memories made from them (the jobs that pass queued)."""

    def __init__(self, work, events: int, progress):
        self.work, self.events, self.progress = work, events, progress
        self.folded = self.made = 0
        self.to_make: int | None = None

    def wrap(self, kind: str, handler):
        from memcli.capture.event_jobs import EVENT, KINDS

        def run(job) -> None:
            handler(job)
            if kind == EVENT:
                self.folded += 1
                self.progress("folding events", self.folded, self.events)
                return
            if self.to_make is None:
                self.to_make = len(self.work.queue.waiting([k for k in KINDS if k != EVENT]))
            self.made += 1
            self.progress("storing memories", self.made, max(self.to_make, self.made))

        return run


def _counted(lines, report: Imported, total: int, progress) -> Iterable:
    """The lines, adding their bytes to the report and telling `progress` every PROGRESS_BYTES."""
    told = report.bytes
    for line in lines:
        report.bytes += len(line) if isinstance(line, bytes) else 0
        if progress is not None and report.bytes - told >= PROGRESS_BYTES:
            progress("reading transcripts", min(report.bytes, total), total)
            told = report.bytes
        yield line
    if progress is not None:
        progress("reading transcripts", min(report.bytes, total), total)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
