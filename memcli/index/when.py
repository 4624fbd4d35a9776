"""Moments typed by people: `--since 2026-11-01`, `--since 3d`, `--since 1mo`, `--until yesterday`.

A span counts back from now: `30m` (m is minutes, as in `sleep`), `12h`, `3d`, `2w`, `1mo`, `1y`, also
spelled out (`3 days`, `2 weeks ago`, `last week`, `last month`). Months and years are calendar ones
(`1mo` on 31 March is 28 or 29 February). A bare date means the user's local day: `--since` starts at
its first second, `--until` ends at its last, so `--since D --until D` is that whole day; `today` and
`yesterday` are days too.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

from memcli.errors import InputError
from memcli.store.memory import format_time

SPAN = re.compile(r"^(?:(\d+)\s*|last\s+|an?\s+)([a-z]+?)s?(?:\s+ago)?$")
SECONDS = {"m": 60, "min": 60, "minute": 60, "h": 3600, "hr": 3600, "hour": 3600, "d": 86400, "day": 86400,
           "w": 7 * 86400, "wk": 7 * 86400, "week": 7 * 86400}
MONTHS = {"mo": 1, "mon": 1, "month": 1, "y": 12, "yr": 12, "year": 12}
HELP = "2026-11-29, 2026-11-29T14:00, 30m (minutes), 12h, 3d, 2w, 1mo, 1y, 'last week', today, yesterday"


def local(moment: dt.datetime) -> dt.datetime:
    """An aware moment in the local zone, as people read it; at the calendar's edges (year 1, 9999),
    where the local zone would move it out of range, as it is."""
    try:
        return moment.astimezone()
    except (OverflowError, ValueError):
        return moment


def parse_when(text: str, *, end_of_day: bool = False, now: dt.datetime | None = None) -> str:
    try:
        return _parse_when(text, end_of_day, now)
    except OverflowError:  # 99999999d, 0001-01-01T00:00+05:00: no such moment in UTC
        raise InputError(f"{text!r} is outside the years 0001-9999") from None


def _parse_when(text: str, end_of_day: bool, now: dt.datetime | None) -> str:
    now = now or dt.datetime.now().astimezone()
    value = " ".join(text.strip().lower().split())
    match = SPAN.match(value)
    if match and (match.group(2) in SECONDS or match.group(2) in MONTHS):
        count, unit = int(match.group(1) or 1), match.group(2)
        if unit in MONTHS:
            return format_time(_months_back(now, count * MONTHS[unit]))
        return format_time(now - dt.timedelta(seconds=count * SECONDS[unit]))
    if value in ("today", "yesterday"):
        day = now.date() - dt.timedelta(days=1 if value == "yesterday" else 0)
        return _day_edge(day, end_of_day, now.tzinfo)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return _day_edge(dt.date.fromisoformat(value), end_of_day, now.tzinfo)
        moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InputError(f"cannot read {text!r} as a date: use {HELP}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=now.tzinfo)
    return format_time(moment)


def _months_back(now: dt.datetime, months: int) -> dt.datetime:
    index = now.year * 12 + now.month - 1 - months
    year, month = divmod(index, 12)
    if year < dt.MINYEAR:  # 2026y, 3000y: before the calendar starts
        raise OverflowError
    day = min(now.day, calendar.monthrange(year, month + 1)[1])
    return now.replace(year=year, month=month + 1, day=day)


def _day_edge(day: dt.date, end: bool, tz) -> str:
    edge = dt.time(23, 59, 59) if end else dt.time(0, 0, 0)
    return format_time(dt.datetime.combine(day, edge, tzinfo=tz))
