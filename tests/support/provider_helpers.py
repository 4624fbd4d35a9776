"""A store whose mem.yaml sends compression to a test server, and texts that a facts line can serve."""

from __future__ import annotations

import json

import yaml
from helpers import load_file, memory_files, ok, store_root

NOTE = ("We moved the billing service from Heroku to Fly.io in March 2024 because the monthly bill had become "
        "far too high for what we were getting, and the old dynos kept going to sleep during the quiet hours "
        "of the night. Alice made the decision after the team had compared several of the options that were "
        "available to us at the time. We will not move the database this year, and the team would like to "
        "look at that question again once the current contract has come to its end.")
# A line the guard accepts for NOTE: shorter, every protected span kept, nothing invented.
GOOD_FACTS = [("TOPIC", "billing service moved from Heroku to Fly.io"), ("DATE", "March 2024"),
              ("PROBLEM", "monthly bill too high, dynos sleep at night"), ("PERSON", "Alice decided"),
              ("DECISION", "will not move the database this year")]
GOOD_LINE = " | ".join(f"{k}={v}" for k, v in GOOD_FACTS)
GOOD_JSON = json.dumps({"facts": [{"key": k, "value": v} for k, v in GOOD_FACTS]})


def use_server(base_url: str, store: dict | None = None, **provider) -> dict:
    """Point the test store's provider at base_url (fast worker settings unless overridden); `store`
    holds other mem.yaml settings."""
    ok("init")
    path = store_root() / "mem.yaml"
    settings = yaml.safe_load(path.read_text()) | (store or {})
    settings["provider"] = {"name": "openai-compatible", "base_url": base_url, "model": "scripted",
                            "timeout_seconds": 2, "max_retries": 0, "backoff_seconds": 0.05,
                            "max_backoff_seconds": 0.2, "on_write": "wait", **provider}
    path.write_text(yaml.safe_dump(settings, sort_keys=False))
    return settings


def stored(memory_id: str) -> dict:
    """The memory's file, as a dict."""
    return next(load_file(path) for path in memory_files() if path.stem == memory_id)


def state_file() -> dict:
    return json.loads((store_root() / ".index" / "provider.json").read_text())
