"""Compression as a write runs it: whether to compress at all, now or later, and where: the local model,
or the server mem.yaml names, behind the egress gate. `mem compress` runs it again for stored memories
(memcli.core.write_jobs.recompress: the queue of `--defer`, the failed ones, any by id).

Fail-open: nothing here raises. A missing model, a crash, a timeout, a server that is down or a key
it rejects leaves the memory raw with a status (`failed`, `pending`, `quarantined`, `skipped`) and
the reason, said once on stderr, so `mem compress --failed` / `--pending` can try again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memcli.errors import describe
from memcli.util.progress import Progress

log = logging.getLogger("memcli")
COMPRESSING = "compressing memories"  # the progress phase of compression


@dataclass
class CompressOptions:
    """How a write should compress: not at all, later (`--defer`: its job waits for a runner), or now
    with these overrides."""

    enabled: bool = True
    defer: bool = False
    method: str | None = None
    ratio: float | None = None
    progress: Progress | None = None  # told when a compression starts and ends (it can take seconds)


def decided_without_a_model(mem, memory, options: CompressOptions) -> tuple[str | None, dict] | None:
    """(None, a `skipped` compression) when a write need not compress at all (turned off, or a text too
    short to gain); None when it must: a job is queued (memcli.core.write_jobs)."""
    from memcli.compress.pipeline import too_short

    if not options.enabled:
        return None, {"status": "skipped", "reason": "compression turned off"}
    short = too_short(memory.raw, mem.settings.compress_min_chars)
    return (None, {"status": "skipped", "reason": short}) if short else None


def compression_of(mem, memory, compressing) -> tuple[str | None, dict]:
    from memcli.compress.pipeline import after_retry, too_short

    settings, raw, keep_here = mem.settings, memory.raw, {}
    if not compressing.enabled:
        return None, {"status": "skipped", "reason": "compression turned off"}
    short = too_short(raw, settings.compress_min_chars)
    if short:
        return None, {"status": "skipped", "reason": short}
    if mem.providers.remote:
        from memcli.privacy import egress

        out = egress.check(mem.gate, raw, memory.source, keep_local=memory.extra.get("send_to_remote") is False)
        if out.info:
            return None, out.info
        # Only the server's compressor knows local_only: the local ones are never asked to send anything.
        raw, keep_here = out.text or raw, {"local_only": True} if out.local_only else {}
    if compressing.progress:
        compressing.progress(COMPRESSING, 0, 1)
    try:
        result = mem.providers.compressor(
            raw,
            **keep_here,
            method=compressing.method or settings.compress_method,
            ratio=compressing.ratio or settings.compress_target,
            model=settings.compress_model,
            min_chars=settings.compress_min_chars,
            timeout_s=settings.compress_timeout_s,
        )
        compressed, info = result.text, dict(result.info)
    except Exception as exc:  # fail-open: the memory lands raw and `mem compress --failed` can retry
        compressed, info = None, {"status": "failed", "reason": describe(exc)}
    if compressing.progress:
        compressing.progress(COMPRESSING, 1, 1)
    info = after_retry(memory.compression, info)  # the same rejection again: stored raw on purpose
    if info.get("status") in ("failed", "pending"):
        retry = "--failed" if info["status"] == "failed" else "--pending"
        log.warning("compression %s (%s); stored the raw text only, retry with `mem compress %s`",
                    info["status"], info.get("reason", "unknown reason"), retry)
    return compressed, info
