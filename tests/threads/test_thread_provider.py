"""A thread's summary written by a provider's model (an OpenAI-compatible server on 127.0.0.1 that
answers from a script): kept only when the guard finds nothing invented, else the extractive one."""

from __future__ import annotations

from helpers import jsonl, ok
from provider_helpers import use_server
from script_server import ScriptServer
from thread_helpers import chat, new_thread, replay

FAITHFUL = ("Ana: decided to visit Sintra on days 1, 3 and 5; she loves pastel de nata.\n"
            "assistant: the train from Rossio takes 32 to 36 minutes.")


def summaries(thread_id: str) -> list[str]:
    return [row["summary"] for row in jsonl(ok("thread", "show", thread_id, "--jsonl").stdout) if "summary" in row]


def test_the_providers_summary_is_kept_when_it_invents_nothing_and_the_facts_it_dropped_are_added():
    with ScriptServer(steps=[("ok", "- " + FAITHFUL.replace("\n", "\n- "))]) as server:
        use_server(server.base_url)
        thread_id = new_thread()
        replay(thread_id, chat(11))
    [summary] = summaries(thread_id)
    date, *lines = summary.splitlines()
    assert date.startswith("[") and lines[:2] == FAITHFUL.splitlines()
    assert len(lines) == 3 and lines[2].startswith("assistant: ") and "34 minutes" in lines[2], \
        "the reply said 32 to 36 minutes: the turns' sentence with 34 minutes is added"
    [sent] = server.sent_texts()
    assert sent.splitlines() == [f"{m.get('name', m['role'])}: {m['content']}" for m in chat(6)]
    searched = ok("search", "Rossio train minutes", "--tag", "thread", "--json").stdout
    assert "32 to 36 minutes" in searched


def test_a_summary_that_invents_or_a_failing_server_leaves_the_extractive_one():
    invented = "Ana: flew to Paris on day 9.\nassistant: the train takes 45 minutes."
    with ScriptServer(steps=[("ok", invented)]) as server:  # then HTTP 500 for anything more
        use_server(server.base_url)
        thread_id = new_thread()
        replay(thread_id, chat(11))
        replay(thread_id, chat(17)[11:])  # six more turns: a second fold, the server fails it
    assert len(server.requests) == 2
    folds = summaries(thread_id)
    assert len(folds) == 2
    for summary in folds:
        assert "Paris" not in summary and "45" not in summary
        assert "Sintra" in summary or "Rossio" in summary, "the turns' own sentences"


def test_turns_kept_on_the_machine_are_never_sent():
    with ScriptServer(steps=[("ok", FAITHFUL)]) as server:
        use_server(server.base_url, send_to_remote=False)
        thread_id = new_thread()
        replay(thread_id, chat(11))
    assert server.requests == [] and len(summaries(thread_id)) == 1
