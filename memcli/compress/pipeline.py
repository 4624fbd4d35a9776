"""Compression on write: the short form a reading model gets instead of the raw prose.

`compress` never raises for a model problem and never loses a write: whatever goes wrong (no model,
a crash, a timeout, an output the guard rejects) the memory stays raw and `info` says why, so
`mem compress` can retry later. The outcomes, as written to the memory's `compression` mapping:

- raw shorter than `min_chars`: status `skipped`, reason "shorter than N characters"; no model is
  loaded, so `raw_tokens`/`tokens` are left out.
- `facts` rejected by the guard, crashing, or slower than 70% of the time left: falls back to
  `prune`, silently but for a log line; `method` then says `prune`.
- `prune` not smaller than the raw: status `skipped`, reason "not smaller" (nothing wrong, just
  nothing to gain); `prune` rejected for any other guard reason: status `failed` with that reason.
- model missing, exception, timeout: status `failed` with the reason; `raw_tokens`/`tokens` only
  when the model got far enough to count them.
When the memory stays raw, `tokens` equals `raw_tokens` (what a reader pays) and `method` is the
method asked for.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from memcli.compress import bykind, guard, kinds, methods
from memcli.compress.keyvalues import KEYS as FACT_KEYS
from memcli.compress.keyvalues import facts
from memcli.compress.prune import prune
from memcli.errors import InputError, ModelError, describe
from memcli.providers.protocols import CompressionModel, Deadline
from memcli.providers.registry import DEFAULT_COMPRESS_MODEL
from memcli.util import workers

log = logging.getLogger("memcli")

MAX_REASON_CHARS = 200
MAX_FACTS_TOKENS = 512  # the guard wants fewer tokens than the raw anyway; this only stops a runaway
MIN_PROSE_CHARS = 50  # a prose part shorter than this (a one-line header) stays as it is
FACTS_SHARE = 0.7  # of the time left: a slow facts line must leave prune time to run


@dataclass
class Compression:
    text: str | None
    info: dict = field(default_factory=dict)


def compress(
    raw: str,
    *,
    method: str = "prune",
    ratio: float = 0.6,
    model: str = DEFAULT_COMPRESS_MODEL,
    min_chars: int = methods.DEFAULT_MIN_CHARS,
    timeout_s: float = 30.0,
    lm=None,
) -> Compression:
    """The compressed form of raw, or text=None with the reason in info.

    `lm` replaces the model named by `model`: any memcli.providers.protocols.CompressionModel (tests
    pass fakes that answer garbage, raise or hang).
    Raises InputError only for a method or ratio that cannot work; everything else fails open.
    """
    problem = methods.check(method)
    if problem:
        raise InputError(problem)
    if not 0.0 < ratio < 1.0:
        raise InputError(f"compression ratio must be between 0 and 1, got {ratio}")
    short = too_short(raw, min_chars)
    if short:
        return Compression(None, _info(method, model, status="skipped", reason=short))

    state: dict = {"name": model}
    deadline = Deadline(timeout_s)
    worker = workers.start(_work, raw, method, ratio, model, lm, deadline, state, name="mem-compress")
    worker.join(min(max(0.0, timeout_s), threading.TIMEOUT_MAX))
    if worker.is_alive():
        return _raw(method, state, f"timeout after {timeout_s:g}s")
    if "result" in state:
        return state["result"]
    error = state.get("error")
    if isinstance(error, TimeoutError):
        reason = str(error)
    elif isinstance(error, ModelError):
        reason = f"model unavailable: {error}"
    else:
        reason = f"error: {describe(error)}"
    log.info("compression failed, memory stays raw: %s", reason)
    return _raw(method, state, reason)


def too_short(raw: str, min_chars: int) -> str | None:
    """Why a text is not worth compressing (the reason stored with it), or None."""
    return f"shorter than {min_chars} characters" if len(raw) < min_chars else None


def _work(raw, method, ratio, model, lm, deadline, state) -> None:
    """Runs in a worker thread so that compress() can return at the timeout whatever the model does."""
    try:
        state["result"] = _compress(raw, method, ratio, model, lm, deadline, state)
    except BaseException as exc:  # noqa: BLE001 - every failure must reach the caller as a status
        state["error"] = exc


def _compress(raw, method, ratio, model, lm, deadline, state) -> Compression:
    if lm is None:
        from memcli.providers.llama import compression_model

        try:
            lm = compression_model(model)
        except Exception as exc:  # noqa: BLE001 - not pulled, unknown name, corrupt file: all "unavailable"
            raise ModelError(describe(exc)) from exc
    ops: CompressionModel = lm
    state["name"] = ops.name
    raw_tokens = ops.count_tokens(raw)
    state["raw_tokens"] = raw_tokens
    deadline.check()
    segments = kinds.segments(raw)
    state["kind"] = kinds.kind_of(segments)
    if state["kind"] not in kinds.PROSE_KINDS:
        return _by_kind(raw, segments, ops, ratio, raw_tokens, deadline, state)
    if method == "facts":
        text, reason = _try_facts(raw, ops, raw_tokens, Deadline(deadline.remaining() * FACTS_SHARE))
        deadline.check()
        if reason is None:
            return _done("facts", ops, raw, raw_tokens, text, state)
        log.info("facts line rejected (%s); falling back to prune", reason)
    text = prune(raw, ops, ratio=ratio, deadline=deadline)
    reason = _prose_guard(raw, text, ops)
    if reason is None:
        return _done("prune", ops, raw, raw_tokens, text, state)
    log.info("pruned form rejected (%s); memory stays raw", reason)
    return _raw(method, state, reason, status="skipped" if reason == "not smaller" else "failed")


def _by_kind(raw, segments, ops, ratio, raw_tokens, deadline, state) -> Compression:
    """A text that is not all prose: each part by its kind (memcli.compress.bykind), the prose parts
    pruned under the prose guard."""

    def prose(text: str) -> str:
        if len(text) < MIN_PROSE_CHARS:
            return text
        pruned = prune(text, ops, ratio=ratio, deadline=deadline)
        return pruned if _prose_guard(text, pruned, ops) is None else text

    result = bykind.compress(raw, prose, segments)
    if result.kind == kinds.MIXED:
        state["kinds"] = result.kinds
    for reason in result.kept_raw:
        log.info("a part stays raw: %s", reason)
    tokens = ops.count_tokens(result.text)
    if len(result.text.encode()) >= len(raw.encode()) or tokens >= raw_tokens:
        return _raw("prune", state, "not smaller", status="skipped")
    info = _info("prune", ops.name, raw_tokens, tokens, "done", kind=state)
    return Compression(result.text, {**info, "guarded": guard.seal(raw, result.text, "prune")})


def _prose_guard(raw: str, text: str, ops) -> str | None:
    """The prose guard, nothing invented (a full stop dropped inside "2.x." must not leave "2X"), and
    nothing but words safe to drop left out, in the raw's order (guard.drifted)."""
    reason = guard.check(raw, text, ops.count_tokens)
    invented = None if reason else guard.invented_tokens(raw, text)
    return reason or (f"invented {', '.join(map(repr, invented))}" if invented else None) or guard.drifted(raw, text)


def check_given(raw: str, form: str, method: str | None) -> str | None:
    """Why a short form mem did not just make may not stand for `raw`, or None: one that came with an
    import, was edited by hand, or changed in a file behind mem's back (a merge, a pull), which the
    catalog checks as it takes the file in. The guard a form made here passes for the text's kind and
    the method named, with the length in bytes standing in for tokens (no model is loaded for it)."""
    from types import SimpleNamespace

    size = SimpleNamespace(count_tokens=lambda text: len(text.encode("utf-8")))
    kind = kinds.kind_of(kinds.segments(raw))
    if kind not in kinds.PROSE_KINDS:
        if size.count_tokens(form) >= size.count_tokens(raw):
            return "not smaller"
        return guard.check_part(raw, form, kind)
    if method == "facts":
        return guard.check(raw, form, size.count_tokens, allowed=FACT_KEYS)
    return _prose_guard(raw, form, size)


# A guard's verdict on the same text and method: trying again gives the same one.
_THE_SAME_EVERY_TIME = ("lost ", "invented ", "empty result", "departs from ")
ON_PURPOSE = "stored raw on purpose: "


def after_retry(previous: dict | None, info: dict) -> dict:
    """The outcome of compressing a memory again, given its outcome before: a guard's rejection that
    repeats the last one is what every retry would give, so the memory is stored raw on purpose
    (status `skipped`), not left failed for `mem compress --failed` and `mem doctor` forever."""
    reason = info.get("reason") or ""
    if (info.get("status") == "failed" and previous and previous.get("status") == "failed"
            and previous.get("reason") == reason and reason.startswith(_THE_SAME_EVERY_TIME)):
        return {**info, "status": "skipped", "reason": (ON_PURPOSE + reason)[:MAX_REASON_CHARS]}
    return info


def _try_facts(raw, ops, raw_tokens, deadline) -> tuple[str | None, str | None]:
    """The facts line and None, or None and why it cannot be used."""
    try:
        text = facts(raw, ops, max_tokens=min(raw_tokens, MAX_FACTS_TOKENS), deadline=deadline)
    except ModelError:
        raise
    except Exception as exc:  # noqa: BLE001 - a crash or a slow generation still leaves prune to try
        return None, describe(exc)
    return text, guard.check(raw, text, ops.count_tokens, allowed=FACT_KEYS)


def _done(method: str, ops, raw: str, raw_tokens: int, text: str, state: dict) -> Compression:
    info = _info(method, ops.name, raw_tokens, ops.count_tokens(text), "done", kind=state)
    return Compression(text, {**info, "guarded": guard.seal(raw, text, method)})


def _raw(method: str, state: dict, reason: str, status: str = "failed") -> Compression:
    tokens = state.get("raw_tokens")
    return Compression(None, _info(method, state["name"], tokens, tokens, status, reason, kind=state))


def _info(method, model, raw_tokens=None, tokens=None, status="done", reason=None, kind: dict | None = None) -> dict:
    """The `compression` mapping; `kind` is the worker's state, which holds the text's kind (and its
    parts' kinds when they differ) once they are known."""
    info = {"method": method}
    if kind and "kind" in kind:
        info["kind"] = kind["kind"]
        if "kinds" in kind:
            info["kinds"] = kind["kinds"]
    info["model"] = model
    if raw_tokens is not None:
        info["raw_tokens"] = raw_tokens
        info["tokens"] = tokens
    info["status"] = status
    if reason is not None:
        info["reason"] = reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 3] + "..."
    return info
