"""A memory's page marks the words compression dropped from the raw text and the ones its compressed form
adds (the counts a form by kind writes), and nothing else."""

from __future__ import annotations

from memcli.ui.dropped import MAX_WORDS, marked


def marked_words(runs) -> list[str]:
    return [text.strip() for text, mark in runs if mark]


def test_the_words_prune_dropped_are_marked_in_the_raw_text():
    found = marked("We tried Redis for the session cache but went back to Postgres.",
                   "We tried Redis for session cache, went back to Postgres.")
    assert marked_words(found.raw) == ["the", "but"]
    assert marked_words(found.short) == [","]
    assert (found.dropped, found.added) == (2, 1)
    assert "".join(text for text, _ in found.raw) == "We tried Redis for the session cache but went back to Postgres."


def test_neighbouring_dropped_words_are_one_mark_with_the_space_between_them():
    found = marked("keep it that way until the migration in March", "keep way until migration March")
    assert marked_words(found.raw) == ["it that", "the", "in"]


def test_a_capital_that_prune_moved_is_not_a_change():
    found = marked("the next step is to move the cron jobs", "Next step move cron jobs")
    assert marked_words(found.short) == []


def test_a_count_a_form_by_kind_writes_is_marked_as_added():
    raw = "\n".join(f"2026-01-01 10:00:{n:02d} INFO request ok" for n in range(6))
    found = marked(raw, "2026-01-01 10:00:00 INFO request ok\n[... 5 similar lines]")
    assert "[... 5 similar lines]" in "".join(text for text, mark in found.short if mark)


def test_texts_too_long_to_compare_are_not_marked():
    assert marked("word " * (MAX_WORDS + 1), "word") is None
