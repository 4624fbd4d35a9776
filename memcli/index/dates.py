"""The words a memory's date is searched by: "2023-10-13T..." reads "October 13 2023".

A question about a time names it in words ("the painting Melanie showed on October 13, 2023", "what
did we decide in March"), while a memory's text rarely says when it was written: its date is in
`created_at`. So the word index holds the date as words beside the text, and BM25 weighs them like
any other word: a month shared by a twelfth of the store counts for little, a full date for more, and
a year every memory shares for nothing. "May" is also a modal verb; a query that says "may" gets the
May memories' small lift, as a common word does.
"""

from __future__ import annotations

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


def date_words(created_at: str | None) -> str:
    """Month, day and year of an ISO 8601 timestamp in words; "" for anything that does not read as one."""
    text = (created_at or "")[:10]
    try:
        year, month, day = (int(part) for part in text.split("-"))
    except ValueError:
        return ""
    if len(text) != 10 or not 1 <= month <= 12 or not 1 <= day <= 31:
        return ""
    return f"{MONTHS[month - 1]} {day} {year}"
