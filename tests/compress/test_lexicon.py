"""What follows a copula or an auxiliary: participles and adjectives, told apart without a tagger."""

import pytest

from memcli.compress.lexicon import is_adjective, is_participle, is_past_participle


@pytest.mark.parametrize("word", ["rejected", "rebuilt", "done", "written", "failing", "merged"])
def test_participles_are_recognised(word):
    assert is_participle(word)


@pytest.mark.parametrize("word", ["speed", "need", "morning", "nothing", "string", "red"])
def test_words_in_ed_or_ing_that_are_no_participles_are_not(word):
    assert not is_participle(word)


def test_a_present_participle_is_no_past_one():
    assert not is_past_participle("failing") and is_past_participle("failed")


@pytest.mark.parametrize("word", ["empty", "stale", "flaky", "reusable", "harmless"])
def test_adjectives_that_state_something_are_recognised(word):
    assert is_adjective(word)


@pytest.mark.parametrize("word", ["owner", "replica", "proposal", "table"])
def test_nouns_are_no_adjectives(word):
    assert not is_adjective(word)
