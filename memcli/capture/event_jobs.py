"""What a captured hook event becomes, as jobs of the store's work queue (memcli.store.queue).

The hook queues each event, redacted, as an `event` job (memcli.capture.events.queue_event). Its handler folds the event into
the session's state (memcli.capture.sessions: prompts and their rulings, commands and how they ended,
files changed, names renamed, what was read, what the last answer left open) and queues what it makes: an
`observe` job (a tool event as an observation; consecutive edits of one file merge into the job still
waiting, up to MERGE_CHARS), a `turn` job (a prompt or the assistant's last message, for the session's
thread) and, at Stop, PreCompact and SessionEnd, a `summary` job: the session's summary, and its thread's
turns before the latest prompt folded into a memory that holds them as written, then taken out of the
thread (so search finds every prompt and answer, each stored once; the latest exchange is in the summary).
Routine tools, paths the denylist ignores and repeated reads of an unchanged file are skipped with their
reason counted; an event whose command or URLs can reach an ignored file is kept as a note of why, never
with its output (memcli.capture.ignored_content). After a run, the digest of each project whose sessions
it touched is written (memcli.capture.briefing), for the next SessionStart in that project.

Every capture job shares one scope, so one runner at a time works on a store's capture, in the order the
events happened; and each is made to be run again after a kill at any instant: an event already folded
into its session's state (its key is there) adds nothing; an observation has an id fixed by its event,
so it is stored once; a turn has a message id fixed by its event; a summary is compared with the
session's current one (found by its source) and written only when it says something new; a fold of turns
has an id fixed by its range, and the turns it holds are taken out of the thread only after it is stored
(taking them out again takes nothing). A job that
fails is retried and then parked with its reason (`mem status`), and the others go on. An event's texts
are redacted once, by the hook; what a run reads from disk itself (the lines an edit is widened to) is
redacted here.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from memcli.capture import diffs, sessions
from memcli.capture.briefing import digest
from memcli.capture.events import CAPTURE_SCOPE, EVENT_JOB
from memcli.capture.knowledge import project_of_state
from memcli.capture.ignored_content import (BACKGROUND, CAPS, IgnoredContent, IgnoredFiles, background_tasks,
                                            input_strings, runs_a_command, searches, withheld)
from memcli.capture.observe import EDIT, READ, SEARCH, SHELL, Observation, _output_text, observe, paths_of, read_digest
from memcli.capture.options import CaptureOptions
from memcli.capture.spool import Spool
from memcli.core.compressing import CompressOptions
from memcli.store import ids
from memcli.store.queue import Job, Later, WorkQueue

if TYPE_CHECKING:
    from memcli.core.mem import Mem

EVENT, OBSERVE, TURN, SUMMARY = EVENT_JOB, "observe", "turn", "summary"
KINDS = (EVENT, OBSERVE, TURN, SUMMARY)
SCOPE = CAPTURE_SCOPE
SUMMARY_EVENTS = ("stop", "compact", "session_end")
# The events an event's place in its session (`session/ID#N`) counts: what the session did, which its
# transcript holds too. A start, an end or a compaction check a client fires on its own (Claude Code
# starts a resumed session again and ends each `-p` run; Gemini CLI fires PreCompress before every
# model call) would number an import's events differently from the hooks' (memcli.capture.past).
COUNTED = ("prompt", "tool", "stop")
MERGE_CHARS = 12_000  # consecutive edits of one file merge into one observation up to about this size
EXPOSED_WAIT_S = 60.0  # how long a job waits when local data would reach git (then tried again)
TEXT_FIELDS = ("prompt", "message", "input", "output", "error")  # what an event carries from the session
REDACTED_VALUES = "redacted: values of ignored files"
KEEP_APPLIED = 4000  # event keys a session's state remembers (a session of more events forgets the oldest)


class CaptureJobs:
    """The handlers of the capture kinds for one run; `counts` is what they did, which `close` records
    in the capture state (`mem status`) with the new SessionStart digest."""

    def __init__(self, mem: Mem, library: Callable[[Callable[[], Any]], Any] = lambda step: step(),
                 compressing: CompressOptions | None = None):
        """`compressing`: how an observation is compressed (an import queues it: memcli.capture.past);
        by default as any write."""
        self.mem, self.library = mem, library
        self.compressing = compressing or CompressOptions()
        self.queue = WorkQueue(mem.store.root)
        self.spool = Spool(mem.store.root)
        self.options = self._agreed(CaptureOptions.from_settings(mem.settings.capture))
        self.counts: Counter = Counter()
        self.projects: set[str] = set()  # whose sessions this run touched
        self._rules = None
        self._contents: dict[str, IgnoredContent] = {}
        self._files: dict[str, IgnoredFiles] = {}  # by project top: kept for the runner's life, fresh per event

    def _kept_if_exposed(self, handler: Callable[[Job], None], job: Job) -> None:
        """Run a handler; when what stays on this machine would reach git (memcli.store.folder), the job
        waits in the queue (this machine's, never committed) with a warning, and nothing is lost."""
        from memcli.errors import LocalDataExposed

        try:
            handler(job)
        except LocalDataExposed as exc:
            import logging

            logging.getLogger("memcli").warning("capture kept in the queue: %s", exc)
            self.spool.count("kept in the queue: local data would reach git", str(exc))
            raise Later(EXPOSED_WAIT_S, str(exc)) from None

    def _kept_here(self, state: dict, *, summary: bool = False) -> bool:
        """Whether what a session makes stays on this machine: unless `capture.share` says otherwise
        (`summaries` shares the summaries), or the developer shared the session (`mem share --session`),
        after which what it makes next is shared too."""
        if state.get("shared"):
            return False
        return self.options.share == "none" if summary else self.options.share != "all"

    def _agreed(self, options: CaptureOptions) -> CaptureOptions:
        """`capture.share` as the store says, once the developer agreed to it (a committed mem.yaml is
        anyone's who can push); until then captured work stays on this machine, and status says why."""
        if options.share == "none":
            return options
        import dataclasses

        from memcli.providers.consent import untrusted_share

        why = untrusted_share(self.mem.store.root)
        if why is None:
            return options
        self.spool.count("capture.share not agreed", why)
        return dataclasses.replace(options, share="none")

    @property
    def handlers(self) -> dict[str, Callable[[Job], None]]:
        def on_library(handler):
            return lambda job: self.library(lambda: self._kept_if_exposed(handler, job))

        return {EVENT: on_library(self._event), OBSERVE: on_library(self._observe), TURN: on_library(self._turn),
                SUMMARY: on_library(self._summary)}

    def close(self) -> None:
        """Record what this run did and write the digest a new session of each project it touched is
        handed, when it did anything."""
        if not self.counts:
            return
        totals = dict(self.counts)

        def change(state: dict) -> None:
            counts = state.setdefault("counts", {})
            for key, value in totals.items():
                counts[key] = counts.get(key, 0) + value
            state["last_drain"] = time.time()

        self.spool.update_state(change)
        if self.projects:
            states, count = self.spool.all_sessions(), self._counter()
            for project in sorted(self.projects):
                self.spool.save_context(project, digest(states, project, self.options.inject_tokens, count))
        self.counts.clear()
        self.projects.clear()

    # -- an event into the session's state ------------------------------------------------------------

    def _event(self, job: Job) -> None:
        record = job.data
        state = self.spool.session(record["session"]) or sessions.new_state(record)
        applied = state.setdefault("applied", [])
        if job.key in applied:
            return  # folded in before a kill: what it queued is queued
        self.counts["events"] += 1
        if record.get("event") in COUNTED:
            state["seq"] += 1
        state["last"] = max(state.get("last", 0), record.get("at", 0))
        if record.get("cwd"):
            state["cwd"] = record["cwd"]
        record = self._without_values(record, state.get("cwd") or "", record.get("at") or job.at)
        self.projects.add(project_of_state(state))
        if record.get("private"):
            self.counts["private spans removed"] += record["private"]
        kind, at = record.get("event"), record.get("at")
        if kind == "prompt" and record.get("prompt", "").strip():
            sessions.note_prompt(state, record["prompt"], job.at)
            self._put_turn(state, job, "user", record["prompt"])
        elif kind == "stop" and record.get("message", "").strip():
            sessions.note_message(state, record["message"])
            self._put_turn(state, job, "assistant", record["message"])
        elif kind == "tool":
            self._tool(record, state, job)
        if kind in SUMMARY_EVENTS:
            self.queue.put(SUMMARY, state["id"], {"session": state["id"]}, scope=SCOPE, at=at, replace=True)
        applied.append(job.key)
        del applied[:-KEEP_APPLIED]
        self.spool.save_session(state["id"], state)

    def _without_values(self, record: dict, cwd: str, at: float) -> dict:
        """The event with every value an ignored file of its project holds replaced in what it carries (a
        prompt, an answer, a tool's input, output and error), whichever way the value got there: the
        backstop to deciding by names (memcli.capture.ignored_values). The project's files are looked at
        as of the event (`at`), so a long-lived runner sees a `.env` made since its last walk."""
        if not cwd:
            return record
        files = self._content(cwd).files
        files.as_of(at)
        if not any(record.get(field) for field in TEXT_FIELDS):
            return record
        values = files.values()
        for cap in files.caps():
            self.counts[f"{CAPS}: {cap}"] += 1
        if not values:
            return record
        replaced, count = dict(record), 0
        for field in TEXT_FIELDS:
            if record.get(field):
                replaced[field], n = _replaced_in(record[field], values)
                count += n
        if not count:
            return record
        self.counts[REDACTED_VALUES] += count
        return replaced

    def _put_turn(self, state: dict, job: Job, role: str, content: str) -> None:
        self.queue.put(TURN, job.key, {"session": state["id"], "role": role, "content": content,
                                       "id": ids.keyed_id(_ms(job.at), job.key)}, scope=SCOPE, at=job.at)

    def _tool(self, record: dict, state: dict, job: Job) -> None:
        tool = record.get("tool", "unknown")
        if tool in self.options.skip_tools:
            self.counts["skipped: routine tool"] += 1
            return
        state["tools"] = state.get("tools", 0) + 1
        paths, cwd = paths_of(record), record.get("cwd") or state["cwd"]
        if any(self._ignored(path, cwd) for path in paths):
            self.counts["skipped: ignored path"] += 1
            return
        content = self._content(cwd)
        named = content.named(record, tool in SHELL or (tool not in EDIT and runs_a_command(record.get("input"))))
        held = state.setdefault("withheld_tasks", [])
        if not named and held and set(held) & set(input_strings(record.get("input"))):
            named = [BACKGROUND]  # the output of a command withheld when it went to the background
        if named:  # what the event carries may be an ignored file's content: said, never kept
            self.counts["withheld: names an ignored file"] += 1
            held += background_tasks(record.get("output"))
            del held[:-KEEP_APPLIED]
            self._put_observation(state, job, Observation(tool, withheld(tool, named)))
            return
        if tool in SEARCH or tool in SHELL:
            search = tool in SEARCH or searches(record.get("input"))
            kept, dropped = content.kept_lines(_output_text(record.get("output")), search)
            if dropped:
                record = {**record, "output": kept}
                self.counts["removed: lines of ignored files"] += dropped
        if tool in READ and paths and not record.get("failed"):
            seen = read_digest(record)
            if all(state["read"].get(p) == seen for p in paths):
                self.counts["skipped: unchanged read"] += 1
                return
            state["read"].update(dict.fromkeys(paths, seen))
        found = observe(record, self.options.max_output_chars, self._file_text)
        if tool in SHELL and found.command:
            sessions.note_command(state, found.command, found.failed,
                                  record.get("error") or _output_text(record.get("output")), job.at)
        if tool in EDIT:
            sessions.note_edit(state, found.files_changed, record.get("input"))
            if self._merged(state, job, found):
                return
        self._put_observation(state, job, found)

    def _put_observation(self, state: dict, job: Job, found: Observation) -> None:
        data = {"session": state["id"], "client": state["client"], "tool": found.tool, "text": found.text,
                "files": found.files_changed, "seq": state["seq"], "id": ids.keyed_id(_ms(job.at), job.key),
                "events": [job.key]}
        self.queue.put(OBSERVE, job.key, data, scope=SCOPE, at=job.at)
        state["last_observe"] = job.key

    def _merged(self, state: dict, job: Job, found) -> bool:
        """Add an edit to the observation still waiting for the previous edit of the same file(s)."""
        waiting = self.queue.get(OBSERVE, state.get("last_observe") or "")
        if waiting is None or waiting.data["tool"] != found.tool or waiting.data["files"] != found.files_changed:
            return False
        if job.key in waiting.data["events"]:
            return True
        body = found.text.split("\n", 1)[1] if "\n" in found.text else ""
        if len(waiting.data["text"]) + len(body) > MERGE_CHARS:
            return False
        waiting.data["text"] = f"{waiting.data['text']}\n{body}" if body else waiting.data["text"]
        waiting.data["events"].append(job.key)
        self.queue.put(OBSERVE, waiting.key, waiting.data, scope=SCOPE, at=waiting.at, replace=True)
        self.counts["merged"] += 1
        return True

    def _content(self, cwd: str) -> IgnoredContent:
        """The denylist's view of a session folder (memcli.capture.ignored_content), one per folder a run;
        the ignored files it holds are its project's, one walk for every folder of a project."""
        if cwd not in self._contents:
            top = self._top(cwd)
            if top not in self._files:
                self._files[top] = IgnoredFiles(top, lambda root: self.mem.gate.ignore_rules(Path(root)),
                                                lambda path: self._ignored(path, top))
            self._contents[cwd] = IgnoredContent(cwd, lambda path: self._ignored(path, cwd), self._files[top])
        return self._contents[cwd]

    def _top(self, cwd: str) -> str:
        """The folder a session folder's project starts at: the top of the git work tree holding it (the
        denylist's own), else the project around a `.mem/` store when it holds the folder (never the home
        folder itself), else the folder."""
        from memcli.util.paths import work_tree_top

        if not cwd or not os.path.isabs(cwd):
            return cwd
        git = work_tree_top(Path(cwd))
        if git is not None:
            return str(git)
        home = str(self.mem.home)
        inside = cwd == home or cwd.startswith(home.rstrip("/") + "/")
        return home if self.mem.store.root.name == ".mem" and inside and home != str(Path.home()) else cwd

    def _file_text(self, cwd: str, path: str) -> str | None:
        """A file's text to place and widen an edit's hunks with: never an ignored file's, and redacted (what
        it adds to the diff, whole lines around the change, was never through the hook's redaction)."""
        from memcli.errors import Refused

        if self._ignored(path, cwd):
            return None
        text = diffs.read_inside(cwd, path)
        if text is not None:
            text, count = self._content(cwd).files.values().replaced(text)
            if count:
                self.counts[REDACTED_VALUES] += count
        try:
            return None if text is None else self.mem.gate.redact(text).text
        except Refused:  # a private key's remains: no line of this file is worth that
            return None

    def _ignored(self, path: str, cwd: str) -> bool:
        if self._rules is None:
            self._rules = self.mem.gate.ignore_rules()
        target = path if os.path.isabs(path) or not cwd else os.path.join(cwd, path)
        found = self._rules.match(target)
        return found is not None and found.ignored

    # -- what the events make -----------------------------------------------------------------------

    def _observe(self, job: Job) -> None:
        from memcli.core.writing import Text, write

        data = job.data
        text = Text(data["text"], ["observation", data["tool"]], f"session/{data['session']}#{data['seq']}",
                    data["client"], check_source=False, screened=True, memory_id=data["id"],
                    kept_here=self._kept_here(self.spool.session(data["session"])))
        written = write(self.mem, text, compressing=self.compressing, look_for_similar=False)  # never replaced by a near one
        self.counts["merged" if written.duplicate else "stored"] += 1

    def _turn(self, job: Job) -> None:
        from memcli.threads.storage import Threads

        data = job.data
        state = self.spool.session(data["session"]) or {"id": data["session"], "client": "hook", "started": job.at}
        threads = Threads(self.mem)
        thread_id = sessions.thread_id(state)
        threads.ensure(thread_id, f"{state['client']} session {state['id'][:8]}", local=self._kept_here(state))
        room = max(64, self.mem.settings.max_input_bytes - 64)  # a folded turn is "role: " and the turn
        content = data["content"].encode("utf-8", "replace")[:room]
        threads.append(thread_id, [{"role": data["role"], "content": content.decode("utf-8", "ignore")}],
                       screened=True, fixed_ids=[data["id"]])

    def _summary(self, job: Job) -> None:
        """The session's summary, stored whole (never pruned: memcli.capture.sessions), then its thread's
        earlier turns folded."""
        from memcli.core.writing import Text, write

        state = self.spool.session(job.data["session"])
        if not state:
            return
        source = f"session/{state['id']}"
        text = sessions.summary_text(state)
        now = _current(self.mem, source)
        if not any(memory.raw == text for memory in now):
            written = write(self.mem, Text(text, ["session", state["client"]], source, state["client"],
                                           check_source=False, screened=True,
                                           kept_here=self._kept_here(state, summary=True)),
                            compressing=CompressOptions(enabled=False), allow_duplicate=True,
                            supersedes=now[0].id if now else None)
            self.counts["summaries"] += 0 if written.unchanged else 1
        self._fold_turns(state)

    def _fold_turns(self, state: dict) -> None:
        """The thread's turns before its latest prompt, as written, in one memory (tag `thread`, source
        `thread/<id>#<first>-<last>`, as any thread's fold), then taken out of the thread: each prompt and
        answer is stored once, and search finds it. The latest prompt and answer stay in the thread (and
        in the summary) until the next summary."""
        from memcli.core.writing import Text, write
        from memcli.errors import NotFound
        from memcli.threads.storage import Threads, summary_source

        threads, thread = Threads(self.mem), sessions.thread_id(state)
        try:
            messages, folds = threads.messages(thread), threads.folds(thread)
        except NotFound:
            return  # no turn yet, or the thread was removed
        folded_to = max((fold.last for fold in folds), default=0)
        latest = max((m.seq for m in messages if m.role == "user"), default=0)
        span = [m for m in messages if folded_to < m.seq < latest]
        for part in _within(span, self.mem.settings.max_input_bytes):
            first, last = part[0].seq, part[-1].seq
            text = "\n".join(_turn_line(m) for m in part)
            write(self.mem, Text(text, ["thread", state["client"]], summary_source(thread, first, last), state["client"],
                                 check_source=False, screened=True, kept_here=self._kept_here(state),
                                 memory_id=ids.keyed_id(_ms(state.get("started", 0)) + first, f"turns:{thread}#{first}-{last}")),
                  compressing=CompressOptions(enabled=False), allow_duplicate=True)
            self.counts["turns folded"] += len(part)
        if folded_to or span:
            threads.prune(thread)

    def _counter(self) -> Callable[[str], int]:
        """The compression model's token count (loaded anyway to compress); without it, a cautious estimate
        of three characters a token."""
        count = self.mem.cheap_counter(batch=True)
        return count or (lambda text: -(-len(text) // 3))




def _replaced_in(value, values, depth: int = 0):
    """A tool's input or output (text, or JSON made of dicts and lists) with the values replaced, keys too
    (a vault's listing is keyed by its secrets), and how many replacements were made; what is not text is
    left as it is."""
    if isinstance(value, str):
        return values.replaced(value)
    if not isinstance(value, (dict, list)):
        return value, 0
    if depth > 32:  # deeper than any tool's JSON: replaced as its text
        import json

        return values.replaced(json.dumps(value, ensure_ascii=False, default=str))
    items = value.items() if isinstance(value, dict) else enumerate(value)
    done, count = {} if isinstance(value, dict) else [], 0
    for key, item in items:
        item, n = _replaced_in(item, values, depth + 1)
        count += n
        if isinstance(done, dict):
            if isinstance(key, str):
                key, n = values.replaced(key)
                count += n
            done[key] = item
        else:
            done.append(item)
    return done, count


def _current(mem: Mem, source: str) -> list:
    """The current memories whose source is exactly `source` (a session's summary)."""
    from memcli.core.reading import listing
    from memcli.index.filters import Filters

    exact = "".join(f"[{c}]" if c in "*?[" else c for c in source)
    return [m for m in listing(mem, Filters(tags=("session",), source=exact)) if m.source == source]


def _turn_line(message) -> str:
    return f"{message.name or message.role}: {message.content}"


def _within(span: list, limit: int) -> list[list]:
    """Consecutive turns in parts whose text stays within `limit` bytes (the size a memory may have); a
    turn is cut below the limit when it arrives (_turn), so each fits a part of its own."""
    parts: list[list] = []
    size = 0
    for message in span:
        cost = len(_turn_line(message).encode("utf-8", "surrogatepass")) + 1
        if not parts or size + cost > limit:
            parts.append([])
            size = 0
        parts[-1].append(message)
        size += cost
    return parts


def _ms(at: float) -> int:
    return int(at * 1000)
