"""Moments typed by people: `--since 2026-11-01`, `--since 3d`, `--until yesterday`.

A bare date means the user's local day: `--since` starts at its first second, `--until` ends at its
last, so `--since D --until D` is that whole day.
"""

from __future__ import annotations

import datetime as dt
import re

from memcli.errors import InputError
from memcli.store.memory import format_time

RELATIVE = re.compile(r"^(\d+)\s*(m|min|h|d|w|y)$")
UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


def parse_when(text: str, *, end_of_day: bool = False, now: dt.datetime | None = None) -> str:
    now = now or dt.datetime.now().astimezone()
    value = text.strip().lower()
    match = RELATIVE.match(value)
    if match:
        return format_time(now - dt.timedelta(seconds=int(match.group(1)) * UNITS[match.group(2)]))
    if value in ("today", "yesterday"):
        day = now.date() - dt.timedelta(days=1 if value == "yesterday" else 0)
        return _day_edge(day, end_of_day, now.tzinfo)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return _day_edge(dt.date.fromisoformat(value), end_of_day, now.tzinfo)
        moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InputError(
            f"cannot read {text!r} as a date: use 2026-11-29, 2026-11-29T14:00, 3d, 12h, 2w, today or yesterday"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=now.tzinfo)
    return format_time(moment)


def _day_edge(day: dt.date, end: bool, tz) -> str:
    edge = dt.time(23, 59, 59) if end else dt.time(0, 0, 0)
    return format_time(dt.datetime.combine(day, edge, tzinfo=tz))
