"""The store's work queue as tests look at it: the captured events waiting, and a run of the capture jobs
(what `mem capture drain` does)."""

from __future__ import annotations

from pathlib import Path

from memcli.capture.event_jobs import KINDS
from memcli.features.work import Work
from memcli.store.queue import WorkQueue


def drain(mem, **options):
    """Run every capture job that is due, as `mem capture drain` does; its counts."""
    return Work(mem, KINDS).run(**options)


def waiting_events(store: Path) -> list:
    """The captured events still in the queue of the store at `store` (a .mem folder or a store root)."""
    return WorkQueue(store).waiting(["event"])
