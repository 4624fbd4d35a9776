"""The words a memory's date is searched by, and those a query names a date with: they must meet."""

import pytest

from memcli.index.dates import date_words, query_date_words


@pytest.mark.parametrize("query", ["on October 13, 2023", "13 October 2023", "the 13th of October, 2023",
                                   "October 13 2023"])
def test_a_date_named_in_a_query_meets_the_memory_of_that_day(query):
    assert set(query_date_words(query)) == set(date_words("2023-10-13T10:00:00Z").split())


def test_a_month_or_a_month_and_year_meet_that_month_only():
    october = set(date_words("2023-10-13T10:00:00Z").split())
    assert set(query_date_words("what did we decide in October")) < october
    assert set(query_date_words("October 2023")) < october
    assert not set(query_date_words("in March")) & october


@pytest.mark.parametrize("query", ["May I ask about the quantum bug", "you may go", "march on", "port 13",
                                   "the 2023 budget", "at 10:30"])
def test_no_date_where_a_query_names_none(query):
    assert query_date_words(query) == []


@pytest.mark.parametrize("stamp", ["", None, "yesterday", "2023-13-01T00:00:00Z", "2023-10-32T00:00:00Z"])
def test_anything_that_is_no_timestamp_has_no_date_words(stamp):
    assert date_words(stamp) == ""


def test_the_calendar_edges_have_date_words_in_any_zone(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        assert date_words("0001-01-01T00:00:00Z").startswith("januarymonth")
        assert "december1" in date_words("2026-12-02T00:21:00Z").split()  # 16:21 on December 1 there
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
