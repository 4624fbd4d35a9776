"""`mem status`: where compression runs and how its queue and worker are doing."""

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
        from memcli.capture.seen import last_seen

        out["capture"] = {**capture, "clients": last_seen(Spool(mem.store.root).root)}
    if mem.providers.status is not None:
        out.update(mem.providers.status())
        out["fallback_model"] = settings.compress_model
    return out
