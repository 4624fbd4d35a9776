"""The words a memory's date is searched by."""

import pytest

from memcli.index.dates import date_words


@pytest.mark.parametrize("stamp, words", [
    ("2023-10-13T10:00:00Z", "October 13 2023"),
    ("2026-05-01T00:00:00+02:00", "May 1 2026"),
    ("1999-12-31", "December 31 1999"),
])
def test_a_timestamp_reads_as_month_day_year(stamp, words):
    assert date_words(stamp) == words


@pytest.mark.parametrize("stamp", ["", None, "yesterday", "2023-13-01T00:00:00Z", "2023-10-32T00:00:00Z", "2023-1-5"])
def test_anything_else_has_no_date_words(stamp):
    assert date_words(stamp) == ""
