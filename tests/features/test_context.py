"""`mem context`: the best memories packed into a token budget that the printed block never exceeds."""

from __future__ import annotations

import json
import math
import random
import re

from helpers import add, jsonl, ok, run

from memcli.features.budget import block, day_names, pack
from memcli.index.search import Hit
from memcli.store import ids
from memcli.store.memory import Memory

WORDS = ("rate limit proxy queue deploy billing heroku fly postgres redis cache retry backoff scraper amazon "
         "ebay tuesday review ruff uv pytest release branch merge token budget context search index").split()


DAY = re.compile(r"^\d{1,2} [A-Z][a-z]{2}( \d{4})?$")


def memory_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not DAY.match(line)]


def count_words(text: str) -> int:
    """What the fake tokenizer counts (tests/support/fakes.py), so the tests can check the CLI's arithmetic."""
    return len(text.split())


def add_random_notes(rng: random.Random, n: int) -> None:
    for number in range(n):
        length = rng.choice([3, 6, 12, 30, 90])  # 90 words is past compress_min_chars: a compressed form
        text = " ".join(rng.choice(WORDS) for _ in range(length)) + f" note{number}"
        add(text)


def test_the_printed_block_never_exceeds_the_budget():
    rng = random.Random(7)
    add_random_notes(rng, 25)
    budgets = sorted({1, 2, 5, 8, 13, 400, 5000, *rng.sample(range(3, 300), 40)})
    fitted_something = 0
    for budget in budgets:
        result = run("context", "deploy billing proxy cache", "--budget", budget, "-k", "25", "--min-score", "0")
        assert count_words(result.stdout) <= budget, (budget, result.stdout)
        assert result.exit_code == (0 if result.stdout else 1)
        fitted_something += bool(result.stdout)
        data = json.loads(run("context", "deploy billing proxy cache", "--budget", budget, "-k", "25", "--min-score", "0",
                              "--json").stdout)
        assert data["text"] == result.stdout
        assert data["tokens"] == count_words(result.stdout) <= budget == data["budget"]
        assert len(data["memories"]) == len(memory_lines(result.stdout))
    assert fitted_something >= len(budgets) - 4


def test_the_best_memories_come_first_and_smaller_ones_fill_the_rest():
    best = add(" ".join(["billing heroku fly"] * 10))
    second = add("billing heroku migration finished")
    third = add("billing runs on fly")
    ranked = [row["id"] for row in jsonl(ok("search", "billing heroku fly", "--jsonl").stdout)]
    assert ranked[0] == best
    roomy = json.loads(ok("context", "billing heroku fly", "--budget", 500, "--json").stdout)
    assert [m["id"] for m in roomy["memories"]] == ranked
    assert all(a["score"] >= b["score"] for a, b in zip(roomy["memories"], roomy["memories"][1:]))
    tight = ok("context", "billing heroku fly", "--budget", 13, "--json")
    chosen = [m["id"] for m in json.loads(tight.stdout)["memories"]]
    assert best not in chosen and set(chosen) == {second, third}
    assert chosen == [i for i in ranked if i in chosen]
    assert "did not fit in 13 tokens" in tight.stderr


def test_memories_are_grouped_by_day_under_short_ids_that_commands_take_back():
    base = ids.new_id()
    # Ids that share all but their last character, as a batch import made in one millisecond would.
    twins = [base[:25] + "1", base[:25] + "2"]
    for twin, text in zip(twins, ["deploy notes for the billing service", "deploy notes for the scraper"]):
        ok("import", input=json.dumps({"id": twin, "created_at": "2025-03-04T05:06:07Z", "raw": text}))
    lone = "01HF3Z9Q8R7T6V5W4X3Y2Z1A0B"
    ok("import", input=json.dumps({"id": lone, "created_at": "2023-11-14T08:00:00Z",
                                   "raw": "an unrelated note about deploy windows"}))
    assert ok("context", "deploy notes", "--budget", 100).stdout.splitlines()[1] in (
        "deploy notes for the billing service", "deploy notes for the scraper", "an unrelated note about deploy windows")
    text = ok("context", "deploy notes", "--budget", 100, "--ids").stdout
    days, labels = [], {}
    for line in text.splitlines():
        if DAY.match(line):
            days.append(line)
            continue
        label, body = line.split(" ", 1)
        labels[label] = days[-1]
        shown = json.loads(ok("show", label, "--json").stdout)
        assert shown["id"].endswith(label) and body == shown["content"]
    assert sorted(days) == ["14 Nov 2023", "4 Mar 2025"]
    assert {twin: labels[twin[-3:]] for twin in twins} == dict.fromkeys(twins, "4 Mar 2025")
    assert labels[lone[-3:]] == "14 Nov 2023"
    assert all(len(label) == 3 for label in labels)


def test_raw_packs_the_prose_and_compressed_is_the_default():
    long_text = ("The nightly deploy of the billing service runs at two in the morning and it is the one "
                 "job that we never move, because the invoices for the month are cut at three and a late "
                 "deploy once doubled every charge for a day. If it fails, page the on-call person and do "
                 "not retry by hand before the lock in Redis is gone, which can take up to ten minutes. The "
                 "runbook for all of this lives in the ops wiki under billing and nightly jobs.")
    memory_id = add(long_text)
    shown = json.loads(ok("show", memory_id, "--json").stdout)
    assert shown["optimized"] and shown["content"] != long_text
    short = ok("context", "nightly deploy billing", "--budget", 200).stdout
    assert short.rstrip("\n").endswith(shown["content"])
    raw = ok("context", "nightly deploy billing", "--budget", 200, "--raw")
    assert raw.stdout.rstrip("\n").endswith(" ".join(long_text.split()))
    assert "content_raw" not in json.loads(
        ok("context", "nightly deploy billing", "--budget", 200, "--raw", "--json").stdout)["memories"][0]
    assert run("context", "nightly deploy billing", "--budget", 20, "--raw").exit_code == 1


def test_filters_usage_errors_and_nothing_found():
    add("deploy the scraper on tuesday", "-t", "scraper")
    billing = add("deploy billing on friday", "-t", "billing")
    only = json.loads(ok("context", "deploy", "--budget", 50, "-t", "billing", "--json").stdout)
    assert [m["id"] for m in only["memories"]] == [billing]
    assert run("context", "deploy", "--budget", 0).exit_code == 2
    assert run("context").exit_code == 2
    assert run("context", "zebra xylophone", "--budget", 50, "--mode", "text").exit_code == 1
    assert run("context", "deploy", "--budget", 50, "--min-score", "2").exit_code == 1


def test_pack_with_a_tokenizer_that_does_not_add_up_line_by_line():
    """A tokenizer may merge across line breaks (or charge for them); the whole block is what counts."""
    def count(text: str) -> int:
        return math.ceil(len(text) / 4)

    rng = random.Random(3)
    memories = [Memory(id=ids.new_id(), created_at="2026-01-02T03:04:05Z", updated_at="2026-01-02T03:04:05Z",
                       raw=" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40)))) for _ in range(30)]
    hits = [Hit(memory, 1.0 - n / 100) for n, memory in enumerate(memories)]
    for budget in range(1, 400, 3):
        packed = pack(hits, budget, count)
        assert count(packed.text) == packed.tokens <= budget
        positions = [hits.index(hit) for hit in packed.hits]
        assert positions == sorted(positions)
        assert packed.text == block([hit.memory for hit in packed.hits], None)
        assert len(packed.hits) + packed.skipped == len(hits)
        if count(block(memories[:1], None)) <= budget:
            assert packed.hits[0] is hits[0]


def test_a_day_says_its_year_only_when_the_year_changes():
    assert day_names(["2023-05-08", "2023-07-20", "2022-01-02", "2022-01-05", "2023-12-31"]) == \
        ["8 May 2023", "20 Jul", "2 Jan 2022", "5 Jan", "31 Dec 2023"]
