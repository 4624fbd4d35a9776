"""Folds keep the facts of a chat: the trip to Lisbon, planned over 13 turns. After the fold,
a small context still holds the city, the dates, the budget and the diet; search finds the summary by
the diet; no pleasantry is ever summarised."""

from __future__ import annotations

import json
import time

import pytest
from helpers import jsonl, ok
from locations import ROOT
from thread_helpers import new_thread, real_mem, replay

FILLERS = ("Great.", "Great!", "Good point.", "Sure!", "Done!", "Thanks!")


def trip() -> list[dict]:
    chats = json.loads((ROOT / "bench" / "data" / "chats.json").read_text())["chats"]
    return next(chat for chat in chats if chat["id"] == "trip-lisbon")["turns"]


def summaries(show_jsonl: str) -> list[str]:
    return [row["summary"] for row in jsonl(show_jsonl) if "summary" in row]


def holds_the_trip(text: str) -> None:
    for fact in ("Lisbon", "12 May", "19 May", "150 euros", "1,000 euros", "vegetarian"):
        assert fact in text, f"{fact!r} lost from:\n{text}"


def test_after_the_fold_a_small_context_holds_the_city_dates_budget_and_diet():
    thread_id = new_thread("--title", "Lisbon trip")
    replay(thread_id, trip())
    ok("thread", "summarize", thread_id, "--force")
    result = ok("thread", "context", thread_id, "--budget", "110", "--json")  # the fake tokenizer counts words
    messages = json.loads(result.stdout)
    assert messages[0]["content"].startswith("Earlier in this conversation:")
    holds_the_trip(messages[0]["content"])
    assert "Marta: " in messages[0]["content"], "who said it is kept"
    assert "shortened" in result.stderr and "sentences left out" in result.stderr


def test_no_filler_sentence_is_ever_in_a_summary():
    thread_id = new_thread()
    replay(thread_id, trip())
    ok("thread", "summarize", thread_id, "--force")
    folded = summaries(ok("thread", "show", thread_id, "--jsonl").stdout)
    assert len(folded) == 2
    for summary in folded:
        assert not any(filler in summary for filler in FILLERS), summary


def test_search_for_the_diet_finds_the_summary():
    thread_id = new_thread()
    replay(thread_id, trip())
    found = json.loads(ok("search", "are we vegetarian", "--json").stdout)
    assert found[0]["source"].startswith(f"thread/{thread_id}#") and "vegetarian" in found[0]["content"]


def test_the_users_statement_is_kept_over_the_assistants_restatement():
    thread_id = new_thread()
    replay(thread_id, trip())
    [first, *_] = summaries(ok("thread", "show", thread_id, "--jsonl").stdout)
    assert "Marta: " in first and "1,000 euros" in first
    assert "So 7 nights up to 150 euros" not in first, "the assistant only repeated the user's budget"


@pytest.mark.models
def test_with_the_real_models_the_trip_keeps_its_facts_and_search_finds_the_diet(real_models):
    mem = real_mem(real_models)
    thread_id = mem("thread", "new").stdout.strip()
    for turn in trip():  # as a chat loop appends, a fold starting in the background when due
        mem("thread", "append", thread_id, "--jsonl", input=json.dumps(turn) + "\n")
    deadline = time.monotonic() + 240
    while not mem("thread", "summarize", thread_id, "--force").stdout.strip() and time.monotonic() < deadline:
        time.sleep(0.5)  # the background summariser holds the thread: it folds first, this one after
    folded = summaries(mem("thread", "show", thread_id, "--jsonl").stdout)
    assert folded and not any(filler in summary for summary in folded for filler in FILLERS)
    # A summary's prose form keeps every word but the safe ones: the facts need 170 tokens, not 150.
    messages = json.loads(mem("thread", "context", thread_id, "--budget", "170", "--json").stdout)
    holds_the_trip(messages[0]["content"])
    found = json.loads(mem("search", "are we vegetarian", "--json").stdout)
    assert found and found[0]["source"].startswith(f"thread/{thread_id}#") and "vegetarian" in found[0]["content"]


def test_versions_and_amounts_stay_whole_in_a_summary():
    thread_id = new_thread()
    replay(thread_id, [{"role": "user", "name": "Ravi", "content": "Release v3.8.1 went out at 14:05 UTC. It broke checkout."},
                       {"role": "assistant", "content": "Sure! Roll back to v3.8.0 and refund the 12.99 euros shipping."},
                       {"role": "user", "name": "Ravi", "content": "Thanks."}])
    ok("thread", "summarize", thread_id, "--force")
    [summary] = summaries(ok("thread", "show", thread_id, "--jsonl").stdout)
    for fact in ("v3.8.1", "14:05 UTC", "v3.8.0", "12.99 euros"):
        assert fact in summary, summary
    assert "Sure" not in summary
