"""What a store's hooks have captured so far, read in one place so the tests do not depend on where the queue
lives (today: `event` jobs of the store's work queue, memcli.store.queue)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import jsonl, ok


def queued_events(store: Path) -> list[dict]:
    """The events waiting in the store's queue (the records the hook wrote), oldest first."""
    from memcli.capture.events import EVENT_JOB
    from memcli.store.queue import WorkQueue

    return [job.data for job in sorted(WorkQueue(Path(store)).waiting([EVENT_JOB]), key=lambda job: job.at)]


def capture_problems(store: Path) -> dict:
    """The problems the hooks counted (bad payloads, hook errors), {} when none."""
    path = Path(store) / ".capture" / "state.json"
    return json.loads(path.read_text()).get("errors", {}) if path.is_file() else {}


def stored_memories(project: Path) -> list[tuple]:
    """Every memory of the current store as (tags, source, raw text), sorted, the project's folder written as
    {cwd} and a thread's id as {thread} (it is made from the clock of the session's first event, which a
    transcript stamps a few milliseconds before the client runs the hook)."""
    rows = jsonl(ok("ls", "--jsonl", "--with-raw", "-n", "0").stdout)
    return sorted((tuple(row["tags"]), re.sub(r"^thread/[0-9A-Z]+#", "thread/{thread}#", row.get("source") or ""),
                   (row.get("content_raw") or row["content"]).replace(str(project), "{cwd}"))
                  for row in rows)
