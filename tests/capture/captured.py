"""What a store's hooks have captured so far, read in one place so the tests do not depend on where the queue
lives (today: `event` jobs of the store's work queue, memcli.store.queue)."""

from __future__ import annotations

import json
from pathlib import Path


def queued_events(store: Path) -> list[dict]:
    """The events waiting in the store's queue (the records the hook wrote), oldest first."""
    from memcli.capture.events import EVENT_JOB
    from memcli.store.queue import WorkQueue

    return [job.data for job in sorted(WorkQueue(Path(store)).waiting([EVENT_JOB]), key=lambda job: job.at)]


def capture_problems(store: Path) -> dict:
    """The problems the hooks counted (bad payloads, hook errors), {} when none."""
    path = Path(store) / ".capture" / "state.json"
    return json.loads(path.read_text()).get("errors", {}) if path.is_file() else {}
