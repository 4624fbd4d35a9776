"""The names a query gives, which the store must hold for a merely close memory to count as a match."""

import pytest

from memcli.index.names import names


@pytest.mark.parametrize("query, given", [
    ("why was the Celery worker concurrency reduced to 4?", ["celery"]),
    ("how do I enable GraphQL tracing on iOS with LS_COLORS set", ["graphql", "ios", "ls_colors"]),
    ('Would Melanie enjoy "The Four Seasons" by Vivaldi?', ["melanie", "four", "seasons", "vivaldi"]),
    ("When did Jon and Gina meet? Gina says in Rome.", ["jon", "gina", "rome"]),
])
def test_a_capitalised_word_inside_a_sentence_or_a_capital_inside_a_word_is_a_name(query, given):
    assert names(query) == given


@pytest.mark.parametrize("query", ["rate limiting", "Kafka consumer lag", "What did we decide in October?",
                                   "May I ask. Where is it? The port", "how do I fix the build"])
def test_a_lower_case_query_a_sentence_opening_a_month_or_a_stopword_names_nothing(query):
    assert names(query) == []
