"""Human-readable text for memories: compact lines for listings, a full view for `mem show`."""

from __future__ import annotations

import datetime as dt
import re
import shutil
import sys
from typing import TYPE_CHECKING

import click

from memcli.index.when import local

if TYPE_CHECKING:
    from memcli.store.memory import Memory


def local_time(stamp: str) -> str:
    """A stored UTC time as the local day and minute (memcli.index.when.local), the year in four digits."""
    moment = local(dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc))
    return f"{moment.year:04d}-{moment:%m-%d %H:%M}"


# What a stored text must not do to a terminal: move the cursor, recolour, retitle the window, rewrite
# the line (\r), reorder what follows (bidirectional overrides). Tab and newline stay.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def neutralise(text: str) -> str:
    """Control characters as visible escapes (ESC as \\x1b), for text that a person's terminal shows."""
    return CONTROL.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100 else "\\u%04x" % ord(m.group()),
                       text)


def shown(text: str) -> str:
    """Stored text as stdout shows it: neutralised on a terminal, exact when piped (`mem show --raw > f`)."""
    return neutralise(text) if sys.stdout.isatty() else text


def one_line(text: str) -> str:
    return " ".join(text.split())


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 10)] + "…"


def line(memory: Memory, shown_id: str, *, raw: bool = False, score: float | None = None) -> str:
    """Two lines: the short id (Catalog.short_id), date, tags (and score); the content, cut
    to the terminal on a tty."""
    head = [click.style(shown_id, fg="yellow"), local_time(memory.created_at)]
    if memory.superseded_by:
        head.append(f"replaced by {memory.superseded_by}")
    if score is not None:
        head.append(f"score {score:.3f}")
    if memory.tags:
        head.append(shown(" ".join(f"#{tag}" for tag in memory.tags)))
    body = shown(one_line(memory.raw if raw else memory.content))
    if sys.stdout.isatty():
        body = _fit(body, shutil.get_terminal_size((100, 20)).columns - 4)
    return "  ".join(head) + "\n    " + body


def full(memory: Memory, *, raw: bool = False, replaced: int = 0) -> str:
    info = memory.compression or {}
    rows = [("id", memory.id), ("created", local_time(memory.created_at))]
    if replaced:
        rows.append(("versions", f"replaced {replaced} earlier version{'s' if replaced != 1 else ''} "
                                 f"(mem show {memory.id[:8]} --history)"))
    if memory.superseded_by:
        rows.append(("replaced by", memory.superseded_by))
    if memory.updated_at != memory.created_at:
        rows.append(("updated", local_time(memory.updated_at)))
    if memory.tags:
        rows.append(("tags", ", ".join(memory.tags)))
    if memory.source:
        rows.append(("source", memory.source))
    rows.append(("written by", memory.written_by))
    rows.append(("compression", _compression_summary(info)))
    if info.get("kind"):
        parts = info.get("kinds")
        rows.append(("kind", info["kind"] + (f" ({', '.join(map(str, parts))})" if isinstance(parts, list) else "")))
    rows.append(("showing", "raw text" if raw or not memory.optimized else "compressed form (--raw for the text)"))
    width = max(len(key) for key, _ in rows)
    header = "\n".join(f"{key + ':':<{width + 1}} {shown(str(value))}" for key, value in rows)
    return header + "\n\n" + shown(memory.raw if raw else memory.content)


def _compression_summary(info: dict) -> str:
    status = info.get("status", "none")
    if status == "done":
        return f"{info.get('tokens')} of {info.get('raw_tokens')} tokens ({info.get('method')}, {info.get('model')})"
    reason = info.get("reason")
    return f"{status} ({reason})" if reason else status
