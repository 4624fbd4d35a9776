"""Which content words name things: a lexicon, morphology and the word's place in its phrase."""

from __future__ import annotations

import pytest

from memcli.compress.lexicon import is_modifier, is_verb, names_a_thing


@pytest.mark.parametrize("word", ["walks", "tried", "stopped", "making", "running", "went", "encouraged"])
def test_inflected_verbs_are_recognised(word):
    assert is_verb(word)


@pytest.mark.parametrize("word", ["yoga", "candle", "omelette", "shelter", "romance", "championship", "nurse"])
def test_unknown_words_are_taken_for_things_wherever_they_stand(word):
    assert names_a_thing(word, in_noun_phrase=False, first_in_run=True)
    assert names_a_thing(word, in_noun_phrase=True, first_in_run=True)


def test_a_word_that_is_also_a_verb_is_a_thing_inside_a_noun_phrase_only():
    assert names_a_thing("dance", in_noun_phrase=True, first_in_run=True)  # "his dance studio"
    assert not names_a_thing("dance", in_noun_phrase=False, first_in_run=True)  # "they dance"
    assert names_a_thing("plans", in_noun_phrase=False, first_in_run=False, after="shared")  # "shared plans"


def test_an_activity_after_a_verb_of_liking_is_a_thing():
    assert names_a_thing("painting", in_noun_phrase=False, first_in_run=False, after="enjoys")
    assert not names_a_thing("emphasizing", in_noun_phrase=False, first_in_run=False, after="discussed")


@pytest.mark.parametrize("word", ["amazing", "really", "wonderful", "slowly"])
def test_evaluative_words_are_droppable(word):
    assert not names_a_thing(word, in_noun_phrase=True, first_in_run=True)


@pytest.mark.parametrize("word", ["encouragement", "appreciation", "happiness", "positivity", "determination"])
def test_nouns_of_attitude_stay_because_questions_about_people_ask_for_them(word):
    assert names_a_thing(word, in_noun_phrase=True, first_in_run=True)  # "his positivity and determination"


@pytest.mark.parametrize("word", ["migration", "regression", "finance", "business", "family", "apartment",
                                  "payment", "connection", "development", "performance"])
def test_technical_and_concrete_nouns_with_an_abstract_suffix_stay(word):
    assert names_a_thing(word, in_noun_phrase=True, first_in_run=True)


@pytest.mark.parametrize("word", ["new", "current", "upcoming", "real"])
def test_adjectives_that_tell_a_thing_apart_are_kept_in_a_noun_phrase(word):
    assert names_a_thing(word, in_noun_phrase=True, first_in_run=True)  # "the new laptop", "the real fix"


@pytest.mark.parametrize("word", ["usually", "weekly", "mostly", "probably", "permanently"])
def test_adverbs_of_how_often_how_much_how_sure_are_no_modifiers(word):
    assert not is_modifier(word)
    assert is_modifier("slowly") and is_modifier("enthusiastically")
