"""`mem status`: where compression runs, what the work queue holds (and what it parked, and why), how
the server and capture are doing."""

from __future__ import annotations

QUEUE = ("pending", "failed", "quarantined")


def status(mem) -> dict:
    """Provider and model, the queue (pending / failed / quarantined), and for a server the circuit, when
    it closes, the last error and the requests of the last minute (every process on the store counts);
    and, once a coding assistant's hooks have sent events, what capture did with them."""
    settings = mem.settings
    counts: dict[str, int] = {}
    if mem.store.exists:
        mem.refresh()
        counts = mem.catalog.status_counts()
    out = {"store": str(mem.store.root), "provider": "local", "model": settings.compress_model,
           "method": settings.compress_method, "memories": sum(counts.values()),
           **{name: counts.get(name, 0) for name in QUEUE}}
    from memcli.capture.spool import Spool

    capture = Spool(mem.store.root).summary()
    if capture is not None:
        out["capture"] = capture
    not_agreed = capture_not_agreed(mem)
    if not_agreed:
        out.setdefault("capture", {})["not_agreed"] = not_agreed
    out["work"] = work_queue(mem)
    if mem.providers.status is not None:
        out.update(mem.providers.status())
        out["fallback_model"] = settings.compress_model
    return out


def work_queue(mem) -> dict:
    """The jobs waiting and parked, by kind, and each parked job with its reason and what to do."""
    from memcli.store.queue import WorkQueue

    queue = WorkQueue(mem.store.root)
    counts = queue.counts()
    parked = [{"name": job.name, "kind": job.kind, "tries": job.tries, "reason": job.error or "unknown"}
              for job in queue.parked()]
    return {**counts, "parked_jobs": parked}


def capture_not_agreed(mem) -> list[str]:
    """Why a capture setting of mem.yaml that needs the user's word is not used (memcli.providers.consent)."""
    from memcli.capture.options import CaptureOptions
    from memcli.providers.consent import unagreed_capture

    return unagreed_capture(mem.store.root, CaptureOptions.from_settings(mem.settings.capture))
