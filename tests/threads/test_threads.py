"""Conversation threads through the CLI: files, appends from several processes, the chat-API context
within a budget, folding into summaries that are also memories, and what survives a failure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import jsonl, load_file, memory_files, ok, run, store_root
from locations import FAKE_MEM, ROOT
from thread_helpers import chat, new_thread, replay


def context(thread_id: str, budget: int) -> tuple[list[dict], str]:
    result = ok("thread", "context", thread_id, "--budget", budget, "--json")
    return json.loads(result.stdout), result.stderr


def tokens(messages: list[dict]) -> int:
    """What the fake tokenizer counts (words), plus the 4 tokens a message the budget charges."""
    return sum(len(m["content"].split()) + 4 for m in messages)


def test_a_thread_keeps_messages_in_order_with_roles_names_and_plain_files():
    thread_id = new_thread("--title", "Lisbon trip")
    ok("thread", "append", thread_id, "--role", "user", "--name", "Ana", "Book the flight for 12 May")
    ok("thread", "append", thread_id[:10], "--role", "model", "Booked TP1351 on 12 May")
    ok("thread", "append", thread_id, "--role", "tool", input="flight TP1351 confirmed\n")
    shown = jsonl(ok("thread", "show", thread_id, "--jsonl").stdout)
    assert [(m["seq"], m["role"], m.get("name")) for m in shown] == [(1, "user", "Ana"), (2, "assistant", None),
                                                                    (3, "tool", None)]
    assert shown[2]["content"] == "flight TP1351 confirmed"
    files = sorted((store_root() / "threads" / thread_id).glob("*.json"))
    assert len(files) == 4 and json.loads(files[0].read_text())["content"] == "Book the flight for 12 May"
    listed = json.loads(ok("thread", "ls", "--json").stdout)
    assert listed == [listed[0]] and listed[0]["title"] == "Lisbon trip" and listed[0]["messages"] == 3


def test_bad_roles_and_ids_are_clear_errors():
    thread_id = new_thread()
    bad = run("thread", "append", thread_id, "--role", "narrator", "hello")
    assert bad.exit_code == 2 and "unknown role 'narrator'" in bad.stderr
    assert run("thread", "append", "01ZZZZ", "hello").exit_code == 4
    broken = run("thread", "append", thread_id, "--jsonl", input='{"role": "user"}\n')
    assert broken.exit_code == 2 and "'content' must be text" in broken.stderr
    assert jsonl(ok("thread", "show", thread_id, "--jsonl").stdout) == []


def test_messages_are_redacted_like_every_other_write():
    thread_id = new_thread()
    result = ok("thread", "append", thread_id, "the key is AKIAIOSFODNN7EXAMPLE, keep it safe")
    assert "redacted 1 secret" in result.stderr
    on_disk = "".join(p.read_text() for p in (store_root() / "threads" / thread_id).glob("*.json"))
    assert "AKIAIOSFODNN7EXAMPLE" not in on_disk and "[REDACTED:aws-access-key]" in on_disk


def test_appends_from_several_processes_lose_nothing_and_keep_each_ones_order():
    thread_id = new_thread()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = "; ".join(f"{sys.executable} {FAKE_MEM} thread append {thread_id} \"writer $W message {n}\"" for n in range(8))
    writers = [subprocess.Popen(["sh", "-c", script], env={**env, "W": str(w)}) for w in range(4)]
    assert [w.wait(timeout=300) for w in writers] == [0, 0, 0, 0]
    shown = jsonl(ok("thread", "show", thread_id, "--all", "--jsonl").stdout)
    assert [m["seq"] for m in shown] == list(range(1, 33))
    for w in range(4):
        mine = [m["content"] for m in shown if m["content"].startswith(f"writer {w} ")]
        assert mine == [f"writer {w} message {n}" for n in range(8)]


def test_context_never_exceeds_the_budget_and_keeps_roles_in_order():
    thread_id = new_thread()
    replay(thread_id, [{"role": "system", "content": "You plan trips."}] + chat(9))
    everything, _ = context(thread_id, 10_000)
    assert [m["role"] for m in everything] == ["system"] + ["user", "assistant"] * 4 + ["user"]
    for budget in (5, 20, 37, 60, 90, 200):
        messages, _ = context(thread_id, budget)
        assert tokens(messages) <= budget
        turns = [m for m in messages if m["content"] != "You plan trips."]
        assert turns == everything[len(everything) - len(turns):], "the newest turns, whole and in order"


def test_old_turns_fold_into_a_summary_that_search_finds_and_the_context_uses(fakes):
    thread_id = new_thread()
    ids = replay(thread_id, chat(11))  # more than thread_summarize_every (10): the oldest fold
    assert len(ids) == 11
    listed = json.loads(ok("thread", "ls", "--json").stdout)[0]
    assert listed["folded"] == 6  # all but the newest 5 (thread_summarize_every // 2)
    summary = json.loads(ok("search", "Sintra pastel de nata", "--tag", "thread", "--json").stdout)[0]
    assert summary["source"] == f"thread/{thread_id}#1-6" and "Sintra" in summary["content"]
    shown = ok("thread", "show", thread_id).stdout.splitlines()
    assert shown[0].startswith("[1-6 summary]") and len(shown) == 1 + 5
    assert len(jsonl(ok("thread", "show", thread_id, "--all", "--jsonl").stdout)) == 11
    block = {"content": "Earlier in this conversation:\n- " + shown[0].removeprefix("[1-6 summary] ")}
    tight, _ = context(thread_id, tokens([block] + chat(11)[6:]))
    assert tight == [{"role": "system", **block}] + [{k: v for k, v in m.items()} for m in chat(11)[6:]]
    roomy, _ = context(thread_id, 10_000)
    assert [m["content"] for m in roomy] == [m["content"] for m in chat(11)], "room enough: the turns themselves"


def stretch(place: str, nights: int) -> list[dict]:
    """Four turns: one fact said once, chatter said in every stretch, and pleasantries."""
    return [{"role": "user", "name": "Ana", "content": f"Book the {place} hotel for {nights} nights."},
            {"role": "assistant", "content": "Sounds lovely, thanks!"},
            {"role": "user", "name": "Ana", "content": "The hills there look pretty from the terrace."},
            {"role": "assistant", "content": "Great!"}]


def test_when_summaries_do_not_all_fit_every_stretch_keeps_its_facts_and_filler_never_shows():
    thread_id = new_thread()
    places = [("Sintra", 2), ("Porto", 3), ("Evora", 4), ("Lagos", 5)]
    for place, nights in places:
        replay(thread_id, stretch(place, nights))
        ok("thread", "summarize", thread_id, "--force")
    replay(thread_id, [{"role": "user", "name": "Ana", "content": "What did we book?"}])  # with the newest: unfolded
    folds = [row for row in jsonl(ok("thread", "show", thread_id, "--jsonl").stdout) if "summary" in row]
    assert len(folds) == 4 and all(f"Book {place} hotel for {nights} nights." in fold["summary"]
                                   for fold, (place, nights) in zip(folds, places))
    assert not any("lovely" in fold["summary"] or "Great" in fold["summary"] for fold in folds), "filler is never folded in"
    whole = tokens(context(thread_id, 10_000)[0])
    for budget in range(10, whole, 3):
        messages, stderr = context(thread_id, budget)
        assert tokens(messages) <= budget
        assert messages[-1]["content"] == "What did we book?", "the newest turn comes first"
    date = folds[0]["summary"].splitlines()[0]
    facts = f"- {date} Ana: " + " ".join(f"Book {place} hotel for {nights} nights." for place, nights in places)
    newest = [{"content": "Great!"}, {"content": "What did we book?"}]
    facts_only = tokens([{"content": f"Earlier in this conversation: {facts}"}] + newest)
    messages, stderr = context(thread_id, facts_only)
    assert messages[0]["content"] == f"Earlier in this conversation:\n{facts}", "one line for the day, facts only"
    assert "4 summaries (4 shortened: 4 sentences left out, no fact lost)" in stderr
    messages, _ = context(thread_id, facts_only + 8)
    assert messages[0]["content"].endswith("Lagos hotel for 5 nights. The hills there look pretty from terrace."), \
        "at equal worth the newer wins"


def test_each_summarised_sentence_keeps_its_end_though_the_compressor_drops_full_stops(use_providers):
    from fakes import FakeCompressor

    def stopless(raw, **options):  # as prune does where a capital shows the break
        result = FakeCompressor()(raw, **options)
        result.text = result.text.replace(".", "")
        return result

    use_providers(compressor=stopless)
    thread_id = new_thread()
    replay(thread_id, [{"role": "user", "name": "Ana", "content": "Book the Sintra hotel for 2 nights. Pack the green bag."},
                       {"role": "assistant", "content": "Done. The train leaves Rossio at nine."}])
    ok("thread", "summarize", thread_id, "--force")
    summary = [row for row in jsonl(ok("thread", "show", thread_id, "--jsonl").stdout) if "summary" in row][0]["summary"]
    assert "Ana: Book Sintra hotel for 2 nights. Pack green bag." in summary, "a digest chooses among these sentences"


def test_a_failing_summariser_leaves_the_thread_whole(use_providers):
    def broken(ref):
        raise RuntimeError("embedding model exploded")

    use_providers(embedder=broken)
    thread_id = new_thread()
    result = ok("thread", "append", thread_id, "--jsonl", input="".join(json.dumps(m) + "\n" for m in chat(12)))
    assert "could not summarise yet" in result.stderr and len(result.stdout.split()) == 12
    assert json.loads(ok("thread", "ls", "--json").stdout)[0]["folded"] == 0
    messages, _ = context(thread_id, 10_000)
    assert len(messages) == 12


def test_a_summariser_killed_while_embedding_leaves_the_fold_whole_and_the_next_search_embeds_it():
    """A fold is one atomic file, the summary memory, stored before its vector is made: a kill at the
    model leaves that whole summary (and the turns), and the vector is made by whatever runs next."""
    ok("init")
    settings = store_root() / "mem.yaml"
    settings.write_text(settings.read_text().replace("thread_summarize_every: 10", "thread_summarize_every: 50"))
    thread_id = new_thread()
    replay(thread_id, chat(12))  # not due yet with 50: the fold happens in a process we kill
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEM_FAKE_HANG_EMBED": "1"}
    before = set(memory_files())
    summarizer = subprocess.Popen([sys.executable, FAKE_MEM, "thread", "summarize", thread_id, "--force"], env=env,
                                  stderr=subprocess.PIPE, text=True)
    assert summarizer.stderr.readline().startswith("fake embedder: hanging"), "it reached the model"
    summarizer.send_signal(signal.SIGKILL)
    summarizer.wait(timeout=30)
    (summary,) = set(memory_files()) - before
    assert load_file(summary)["source"] == f"thread/{thread_id}#1-11"
    assert "nothing due to fold" in ok("thread", "summarize", thread_id, "--force").stderr
    found = jsonl(ok("search", "Sintra pastel de nata", "--mode", "vector", "--jsonl").stdout)
    assert summary.stem in [row["id"] for row in found]


def test_summarize_waits_for_a_fold_already_running_so_the_context_then_holds_it():
    """`append` folds in a detached process; a user who then types `mem thread summarize` must get the fold,
    not a silent exit 0 while it is still running. The test holds the thread's scope in the work queue as
    that fold would."""
    from memcli.store.queue import WorkQueue

    ok("init")
    settings = store_root() / "mem.yaml"
    settings.write_text(settings.read_text().replace("thread_summarize_every: 10", "thread_summarize_every: 50"))
    thread_id = new_thread()
    replay(thread_id, chat(12))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with WorkQueue(store_root()).scope(f"thread-{thread_id}") as running:
        assert running
        summarizer = subprocess.Popen([sys.executable, FAKE_MEM, "thread", "summarize", thread_id, "--force"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3000):  # until the kernel lists it as waiting for the lock, or it has given up
            waiting = any(line.split()[1:2] == ["->"] and line.split()[5] == str(summarizer.pid)
                          for line in open("/proc/locks"))
            if waiting or summarizer.poll() is not None:
                break
            time.sleep(0.01)
        assert waiting, f"it did not wait: {summarizer.communicate()}"
    out, err = summarizer.communicate(timeout=60)
    assert out.strip() and "folded messages 1-11" in err
    assert ok("thread", "show", thread_id).stdout.startswith("[1-11 summary]")


def test_prune_removes_folded_messages_for_good_and_rm_keeps_the_summaries():
    thread_id = new_thread()
    replay(thread_id, chat(11))
    assert "removed 6 folded messages" in ok("thread", "prune", thread_id).stderr
    assert len(jsonl(ok("thread", "show", thread_id, "--all", "--jsonl").stdout)) == 5
    roomy, _ = context(thread_id, 10_000)
    assert roomy[0]["content"].startswith("Earlier in this conversation:") and len(roomy) == 6
    assert "removed thread" in ok("thread", "rm", thread_id, "-y").stderr
    assert run("thread", "show", thread_id).exit_code == 4
    assert json.loads(ok("ls", "--tag", "thread", "--json").stdout)


@pytest.mark.models
def test_append_returns_at_once_and_a_background_process_folds(real_models, tmp_path):
    """The real CLI: the fold runs in a detached runner of the work queue with the real models."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEM_MODELS_DIR": str(real_models), "MEM_BACKGROUND": "1"}

    def mem(*args, input=None):
        return subprocess.run([sys.executable, "-m", "memcli", *map(str, args)], input=input, env=env,
                              capture_output=True, text=True, check=True)

    thread_id = mem("thread", "new").stdout.strip()
    mem("thread", "append", thread_id, "--jsonl", input="".join(json.dumps(m) + "\n" for m in chat(12)))
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if json.loads(mem("thread", "ls", "--json").stdout)[0]["folded"]:
            break
        time.sleep(0.5)
    folds = [row for row in jsonl(mem("thread", "show", thread_id, "--jsonl").stdout) if "summary" in row]
    assert [(f["first"], f["last"]) for f in folds] == [(1, 7)]
    assert "Sintra" in folds[0]["summary"] and "Ana" in folds[0]["summary"]
    messages = json.loads(mem("thread", "context", thread_id, "--budget", "2000", "--json").stdout)
    assert [m["role"] for m in messages][-5:] == ["assistant", "user", "assistant", "user", "assistant"]


def test_an_assistant_keeps_a_thread_through_mcp():
    from mcp_client import call, error, session

    ok("init")
    settings = store_root() / "mem.yaml"
    settings.write_text(settings.read_text() + "provider:\n  idle_seconds: 0.5\n")

    def folds(thread_id: str) -> list[dict]:
        return [row for row in jsonl(ok("thread", "show", thread_id, "--jsonl").stdout) if "summary" in row]

    async def scenario(client):
        import anyio

        first = await call(client, "thread_append", title="support chat",
                           messages=[{"role": "user", "name": "Ana", "content": "My order 4411 never arrived."},
                                     {"role": "model", "content": "Sorry! I have reissued order 4411."}])
        thread_id = first["thread"]
        later = await call(client, "thread_append", thread=thread_id[:12], messages=chat(11))
        assert len(first["ids"]) == 2 and len(later["ids"]) == 11
        listed = await call(client, "thread_list")
        assert listed["threads"][0]["id"] == thread_id and listed["threads"][0]["messages"] == 13
        built = await call(client, "thread_context", thread=thread_id, budget=10_000)
        assert [m["role"] for m in built["messages"][:2]] == ["user", "assistant"]
        assert built["messages"][0] == {"role": "user", "name": "Ana", "content": "My order 4411 never arrived."}
        assert built["tokens"] <= built["budget"] == 10_000
        small = await call(client, "thread_context", thread=thread_id, budget=60)
        assert small["tokens"] <= 60 and small["messages"][-1]["content"] == chat(11)[-1]["content"]
        assert small["left_out_turns"] and "older items did not fit" in small["shortened"], "it says what it left out"
        refused = await error(client, "thread_append", thread=thread_id, messages=[{"role": "narrator", "content": "x"}])
        assert "role" in refused
        deadline = time.monotonic() + 60
        while not folds(thread_id) and time.monotonic() < deadline:
            await anyio.sleep(0.2)  # reading the files, not asking the server: it is idle, so its worker folds
        summarised = await call(client, "thread_context", thread=thread_id, budget=200)
        return thread_id, summarised

    thread_id, summarised = session(scenario)
    assert [(f["first"], f["last"]) for f in folds(thread_id)] == [(1, 8)], "all but the newest 5 of 13"
    assert summarised["messages"][0]["content"].startswith("Earlier in this conversation:")
