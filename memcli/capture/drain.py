"""The drain: turns queued hook events into memories, where model work may take its time.

Tool events become observations (tags `observation` and the tool, source `session/<id>#<n>`, written by
the client) through the one write path, so each is redacted again, compressed by kind, embedded and
searchable like any memory. Consecutive edits of the same file in a session are merged into one
observation; routine tools, paths the denylist ignores and repeated reads of an unchanged file are
skipped with their reason counted. Prompts and the assistant's last messages become the session's
thread; Stop, PreCompact and SessionEnd write the session's summary. One drain runs per store (a lock);
the hook starts it detached, `mem capture drain` runs it by hand, `mem mcp` runs it when idle.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from typing import Callable

from memcli.capture import sessions
from memcli.capture.briefing import digest
from memcli.capture.observe import EDIT, READ, SHELL, Observation, _output_text, observe, paths_of, read_digest
from memcli.capture.options import CaptureOptions
from memcli.capture.spool import Spool
from memcli.errors import MemError, describe

log = logging.getLogger("memcli")

SUMMARY_EVENTS = ("stop", "compact", "session_end")
KEEP_KEYS_S = 7 * 24 * 3600  # how long a used event's key keeps a late duplicate out


def drain(mem, *, linger: float = 0.0, sleep: Callable[[float], None] = time.sleep) -> Counter | None:
    """Use every queued event; with `linger`, wait that long after the last event for more before
    returning. None when another drain holds the store's capture lock. Returns the counts of this run
    (stored, merged, skipped: ...)."""
    spool = Spool(mem.store.root)
    options = CaptureOptions.from_settings(mem.settings.capture)
    totals: Counter = Counter()
    with spool.drain_lock() as held:
        if not held:
            return None
        quiet_since = time.monotonic()
        while True:
            paths = spool.waiting()
            if not paths:
                if time.monotonic() - quiet_since >= linger:
                    break
                sleep(0.2)
                continue
            counts = Batch(mem, spool, options).run(paths)
            _record(spool, counts)
            spool.save_context(digest(spool.all_sessions(), options.inject_tokens, _counter(mem)))
            totals.update(counts)
            quiet_since = time.monotonic()
        spool.forget(KEEP_KEYS_S)
    return totals


class QueuedEvents:
    """A source of jobs for the idle worker of `mem mcp` (memcli.core.idle): drain the captured events
    when some wait and no other drain runs. `on_mem(fn)` runs fn where the library may touch the store."""

    def __init__(self, mem, on_mem: Callable):
        self.mem, self.on_mem = mem, on_mem

    def __call__(self):
        spool = Spool(self.mem.store.root)
        if not spool.waiting() or spool.drain_running():
            return None
        return lambda: self.on_mem(lambda: drain(self.mem))


def _counter(mem) -> Callable[[str], int]:
    """The compression model's token count (loaded anyway to compress); without it, a cautious estimate
    of three characters a token."""
    count = mem.cheap_counter(batch=True)
    return count or (lambda text: -(-len(text) // 3))


def _record(spool: Spool, totals: Counter) -> None:
    def change(state: dict) -> None:
        counts = state.setdefault("counts", {})
        for key, value in totals.items():
            counts[key] = counts.get(key, 0) + value
        state["last_drain"] = time.time()

    spool.update_state(change)


class Batch:
    """The events waiting now, used in the order they happened."""

    def __init__(self, mem, spool: Spool, options: CaptureOptions):
        self.mem, self.spool, self.options = mem, spool, options
        self.counts: Counter = Counter()
        self.states: dict[str, dict] = {}
        self.observations: list[tuple[Observation, dict, int]] = []
        self.turns: dict[str, list[dict]] = {}
        self.due: set[str] = set()
        self._rules = None

    def run(self, paths) -> Counter:
        records = [(p, r) for p in paths if (r := self.spool.read(p)) is not None]
        records.sort(key=lambda pr: pr[1].get("at", 0))
        for _, record in records:
            self.counts["events"] += 1
            try:
                self._use(record)
            except (MemError, OSError, ValueError, TypeError, KeyError) as exc:
                self.counts["errors"] += 1
                self.spool.count("drain error", describe(exc))
        self._write()
        for path, _ in records:
            self.spool.used(path)
        return self.counts

    def _state(self, record: dict) -> dict:
        sid = record["session"]
        if sid not in self.states:
            self.states[sid] = self.spool.session(sid) or sessions.new_state(record)
        state = self.states[sid]
        state["seq"] += 1
        state["last"] = max(state.get("last", 0), record.get("at", 0))
        if record.get("cwd"):
            state["cwd"] = record["cwd"]
        return state

    def _use(self, record: dict) -> None:
        state = self._state(record)
        if record.get("private"):
            self.counts["private spans removed"] += record["private"]
        kind = record.get("event")
        if kind == "prompt" and record.get("prompt", "").strip():
            sessions.note_prompt(state, record["prompt"])
            self.turns.setdefault(state["id"], []).append({"role": "user", "content": record["prompt"]})
        elif kind == "stop" and record.get("message", "").strip():
            sessions.note_message(state, record["message"])
            self.turns.setdefault(state["id"], []).append({"role": "assistant", "content": record["message"]})
        elif kind == "tool":
            self._tool(record, state)
        if kind in SUMMARY_EVENTS:
            self.due.add(state["id"])

    def _tool(self, record: dict, state: dict) -> None:
        tool = record.get("tool", "unknown")
        if tool in self.options.skip_tools:
            self.counts["skipped: routine tool"] += 1
            return
        paths = paths_of(record)
        if any(self._ignored(path, record.get("cwd") or state["cwd"]) for path in paths):
            self.counts["skipped: ignored path"] += 1
            return
        if tool in READ and paths and not record.get("failed"):
            seen = read_digest(record)
            if all(state["read"].get(p) == seen for p in paths):
                self.counts["skipped: unchanged read"] += 1
                return
            state["read"].update(dict.fromkeys(paths, seen))
        found = observe(record, self.options.max_output_chars)
        if tool in SHELL and found.command:
            sessions.note_command(state, found.command, found.failed,
                                  record.get("error") or _output_text(record.get("output")))
        if tool in EDIT:
            sessions.note_changed(state, found.files_changed)
        last = self.observations[-1] if self.observations else None
        if (last and tool in EDIT and last[0].tool == tool and last[1]["id"] == state["id"]
                and last[0].files_changed == found.files_changed):
            body = found.text.split("\n", 1)[1] if "\n" in found.text else ""
            last[0].text = f"{last[0].text}\n{body}" if body else last[0].text
            self.counts["merged"] += 1
            return
        self.observations.append((found, state, state["seq"]))

    def _ignored(self, path: str, cwd: str) -> bool:
        if self._rules is None:
            self._rules = self.mem.gate.ignore_rules()
        target = path if os.path.isabs(path) or not cwd else os.path.join(cwd, path)
        found = self._rules.match(target)
        return found is not None and found.ignored

    def _write(self) -> None:
        from memcli.core import writing

        for found, state, seq in self.observations:
            written = writing.write(self.mem, found.text, tags=["observation", found.tool],
                                    source=f"session/{state['id']}#{seq}", written_by=state["client"],
                                    check_source=False)
            self.counts["merged" if written.duplicate else "stored"] += 1
            state["observations"] += 0 if written.duplicate else 1
        for sid, turns in self.turns.items():
            self._thread(self.states[sid], turns)
        for sid in self.due:
            self._summary(self.states[sid])
        for sid, state in self.states.items():
            self.spool.save_session(sid, state)

    def _thread(self, state: dict, turns: list[dict]) -> None:
        from memcli.threads.storage import Threads

        threads = Threads(self.mem)
        if not state.get("thread"):
            state["thread"] = threads.create(f"{state['client']} session {state['id'][:8]}").id
        threads.append(state["thread"], turns)

    def _summary(self, state: dict) -> None:
        from memcli.core import writing

        text = sessions.summary_text(state)
        if text == state.get("summary_text"):
            return
        tags = ["session", state["client"]]
        if state.get("summary_id"):
            try:
                written = writing.update(self.mem, state["summary_id"], text, written_by=state["client"])
            except MemError:  # the old summary was removed by hand: start again
                written = None
        else:
            written = None
        if written is None:
            written = writing.write(self.mem, text, tags=tags, source=f"session/{state['id']}",
                                    written_by=state["client"], check_source=False, allow_duplicate=True)
        state["summary_id"], state["summary_text"] = written.memory.id, text
        self.counts["summaries"] += 1
