"""A small budget keeps the facts first: on a 13-turn business-trip chat, `mem thread context --budget 150`
holds the city, the dates, the colleague's diet, both budget figures, the hotel and the talk's date and
time, and drops the fillers ("Sounds good.", "Anything else for the trip?") before any of them."""

from __future__ import annotations

import json

import pytest
from helpers import ok
from thread_helpers import new_thread, real_mem, replay

TRIP = [
    {"role": "user", "name": "Priya", "content": "I'm flying to Berlin for PyCon DE, from 14 April to 18 April."},
    {"role": "assistant", "content": "Sounds good. Is anyone travelling with you?"},
    {"role": "user", "name": "Priya", "content": "Yes, my colleague Tom. He is vegan and can't eat gluten."},
    {"role": "assistant", "content": "Great. I will only suggest vegan, gluten-free places when Tom joins."},
    {"role": "user", "name": "Priya", "content": "The company pays at most 180 euros a night for the hotel, and 1,200 euros "
                                                "for the whole trip."},
    {"role": "assistant", "content": "Sounds good. So 180 euros a night at most and 1,200 euros in total."},
    {"role": "user", "name": "Priya", "content": "My talk is on 16 April at 11:30 in the main hall."},
    {"role": "assistant", "content": "Great! I will keep the morning of 16 April free."},
    {"role": "user", "name": "Priya", "content": "Book the Motel One Alexanderplatz, it is close to the venue."},
    {"role": "assistant", "content": "Done. Motel One Alexanderplatz is booked from 14 April to 18 April at 119 euros "
                                     "a night."},
    {"role": "user", "name": "Priya", "content": "Sounds good."},
    {"role": "assistant", "content": "Anything else for the trip?"},
    {"role": "user", "name": "Priya", "content": "Yes, find a vegan lunch place near the venue for 16 April after my talk."},
]
FACTS = ("Berlin", "14 April", "18 April", "vegan", "180 euros", "1,200 euros", "Motel One Alexanderplatz", "16 April",
         "11:30")
FILLERS = ("Sounds good.", "Anything else for the trip?")


def holds_the_trip(messages: list[dict]) -> None:
    text = "\n".join(m["content"] for m in messages)
    for fact in FACTS:
        assert fact in text, f"{fact!r} lost from:\n{text}"
    assert not any(m["content"] in FILLERS for m in messages), "a filler turn kept while a fact was dropped"
    assert messages[-1]["content"] == TRIP[-1]["content"], "the newest turn is kept"


def test_a_small_budget_keeps_the_trips_facts_and_drops_the_fillers_first():
    thread_id = new_thread("--title", "Berlin trip")
    replay(thread_id, TRIP)  # more turns than thread_summarize_every: the oldest are folded
    result = ok("thread", "context", thread_id, "--budget", "95", "--json")  # the fake tokenizer counts words
    messages = json.loads(result.stdout)
    holds_the_trip(messages)
    assert sum(len(m["content"].split()) + 4 for m in messages) <= 95


@pytest.mark.models
def test_with_the_real_models_budget_150_keeps_the_trips_facts(real_models):
    mem = real_mem(real_models)
    thread_id = mem("thread", "new").stdout.strip()
    mem("thread", "append", thread_id, "--jsonl", input="".join(json.dumps(turn) + "\n" for turn in TRIP))
    mem("thread", "summarize", thread_id)  # the fold that is due (the oldest turns), done now
    built = json.loads(mem("thread", "context", thread_id, "--budget", "150", "--json").stdout)
    holds_the_trip(built)
