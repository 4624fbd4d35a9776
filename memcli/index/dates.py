"""The words a memory's date is searched by, and the ones a query names a date with.

A question about a time names it ("the painting Melanie showed on October 13, 2023", "what did we
decide in March"), while a memory's text rarely says when it was written: that is its `created_at`.
So the word index holds the date beside the text as tokens no text contains: the month
("octobermonth"), the month and day ("october13"), the month and year ("october2023"); and a query
gains the same tokens where it names a month, with the day and the year when it gives them. A month
is a proper noun, so only a capitalised one counts ("you may", "march on", "May I ask" name none). A
bare number or year never matches a date: "13" finds the 13 in a text, not every memory of a 13th,
and "2023", shared by half a store, adds nothing. The day is the local one, as `mem ls` shows it.
"""

from __future__ import annotations

import datetime as dt
import re

from memcli.index.when import local

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
_ORDINAL = r"(?:st|nd|rd|th)?"
# "October 13, 2023", "13 October 2023", "the 13th of October", "October 2023", "October"
_NAMES = "|".join(name if name != "May" else r"May(?!\s+(?:I|we|you|he|she|they|it)\b)" for name in MONTHS)
NAMED = re.compile(rf"\b(?:(\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?)?({_NAMES})\b"
                   rf"(?:\s+(\d{{1,2}}){_ORDINAL}\b(?!:))?(?:,?\s+(\d{{4}})\b)?")


def date_words(created_at: str | None) -> str:
    """The date tokens of a memory created at `created_at` (ISO 8601); "" when it does not read as one."""
    try:
        moment = dt.datetime.fromisoformat((created_at or "").replace("Z", "+00:00"))
    except ValueError:
        return ""
    moment = local(moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc))
    month = MONTHS[moment.month - 1].lower()
    return f"{month}month {month}{moment.day} {month}{moment.year}"


def query_date_words(query: str) -> list[str]:
    """The date tokens a query names (see the module docstring), in order, each once."""
    found: list[str] = []
    for day_before, name, day_after, year in NAMED.findall(query):
        month = name.lower()
        found.append(f"{month}month")
        day = day_after or day_before
        if day and 1 <= int(day) <= 31:
            found.append(f"{month}{int(day)}")
        if year:
            found.append(f"{month}{int(year)}")
    return list(dict.fromkeys(found))
