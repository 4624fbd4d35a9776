"""Compression by kind: each segment of a text (memcli.compress.kinds) by its own method, each held to
its own guard (memcli.compress.guard); a segment the guard rejects stays as the raw has it.

Prose goes through the `prose` function the caller passes (prune on the local model, with its own
guard); everything else is made without a model. A shell command stays exact and its output is
compressed by the output's kind, except prose-like output (a `git log --oneline`), which stays whole:
its words are names, not sentences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from memcli.compress import code, diffs, guard, kinds, lines, logs, structured, testruns, tracebacks

Prose = Callable[[str], str]


@dataclass
class ByKind:
    text: str
    kind: str
    kinds: list[str] = field(default_factory=list)  # the segments' kinds in order, each once
    kept_raw: list[str] = field(default_factory=list)  # why a segment stayed raw (the guard's reasons)


def compress(raw: str, prose: Prose, segments: list[kinds.Segment] | None = None) -> ByKind:
    segments = segments if segments is not None else kinds.segments(raw)
    result = ByKind("", kinds.kind_of(segments), list(dict.fromkeys(s.kind for s in segments if s.text.strip())))
    pieces: list[str] = []
    for segment in segments:
        body, blank_after = _body(segment.text)
        if not body:
            continue
        try:
            form = segment_form(segment.kind, body, prose, segment.lang)
            reason = _rejected(segment.kind, body, form)
        except Exception as exc:  # noqa: BLE001 - a text no method can read stays as it is
            form, reason = body, f"error: {type(exc).__name__}: {exc}"
        if reason:
            result.kept_raw.append(f"{segment.kind}: {reason}")
            form = body
        pieces.append(form + ("\n\n" if blank_after else "\n"))
    result.text = "".join(pieces).rstrip("\n")
    return result


def segment_form(kind: str, body: str, prose: Prose, lang: str | None = None) -> str:
    """The short form of one segment of a kind (before its guard)."""
    fence = lines.FENCE.match(body.split("\n", 1)[0])
    if fence and kind not in kinds.PROSE_KINDS:
        rows = body.split("\n")
        closed = len(rows) > 1 and rows[-1].strip().startswith(fence.group(1))
        inner = "\n".join(rows[1:-1] if closed else rows[1:])
        if kind == "code" or not inner.strip():
            return body
        return "\n".join([rows[0], segment_form(kind, inner, prose, lang)] + ([rows[-1]] if closed else []))
    if kind in kinds.PROSE_KINDS:
        return prose(body)
    if kind == "shell":
        return _shell(body, prose)
    if kind == "code":
        return code.compress(body, lang)
    if kind == "diff":
        return diffs.compress(body, prose)
    if kind == "test_output":
        return testruns.compress(body)
    if kind == "traceback":
        return tracebacks.compress(body)
    if kind == "json":
        return structured.compress_json(body) if body.lstrip()[:1] in "{[" else body
    if kind == "table":
        return structured.compress_table(body)
    return logs.compress(body)


_PROTECTED = {"diff": diffs.protected, "test_output": testruns.protected, "traceback": tracebacks.protected}


def _rejected(kind: str, body: str, form: str) -> str | None:
    if form == body:
        return None
    if len(form) >= len(body):
        return "not smaller"
    if kind == "json" and not structured.same_json(body, form):
        return "changed a value"
    protect = _PROTECTED.get(kind)
    return guard.check_part(body, form, kind, protect(body) if protect else ())


def _shell(body: str, prose: Prose) -> str:
    command, _, output = body.partition("\n")
    if not output.strip():
        return body
    shown = []
    for segment in kinds.segments(output):
        body, _ = _body(segment.text)
        if segment.kind == "log":
            shown.append(logs.compress(body, listing=True))
        elif body:
            shown.append(segment_form(segment.kind, body, lambda text: text, segment.lang))
    return "\n".join([command] + shown)


def _body(text: str) -> tuple[str, bool]:
    """A segment's text without the blank lines around it, and whether blank lines followed it."""
    rows = text.split("\n")
    end = len(rows)
    while end and not rows[end - 1].strip():
        end -= 1
    start = 0
    while start < end and not rows[start].strip():
        start += 1
    return "\n".join(rows[start:end]), end < len(rows)
