"""What a store's hooks have captured so far, read in one place so the tests do not depend on where the queue
lives (today `.capture/queue/*.json` of the store)."""

from __future__ import annotations

import json
from pathlib import Path


def queued_events(store: Path) -> list[dict]:
    """The events waiting in the store's capture queue (the records the hook wrote)."""
    return [json.loads(path.read_text()) for path in sorted((Path(store) / ".capture" / "queue").glob("*.json"))]


def capture_problems(store: Path) -> dict:
    """The problems the hooks counted (bad payloads, hook errors), {} when none."""
    path = Path(store) / ".capture" / "state.json"
    return json.loads(path.read_text()).get("errors", {}) if path.is_file() else {}
