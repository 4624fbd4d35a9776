"""What a model reads of a `memory_search` result: the best hits whole, the rest one line each, cut lines
ending in … and fetched whole with memory_get (memcli.features.result_layout), through the MCP client."""

from __future__ import annotations

import re

from helpers import add
from mcp_client import call, session, text_of

from memcli.features.result_layout import Line, one_line, query_weights, result_block, result_lines
from memcli.store.memory import Memory

OPENINGS = ["Lunch was late today because the standup ran long and everybody argued about tabs.",
            "Morning started slowly with coffee, two reviews of old pull requests and a quiet inbox.",
            "The office heating broke again so half the team worked from the cafe around the corner.",
            "Friday began with the weekly demo where marketing showed the new onboarding screens.",
            "Nobody could find the projector remote, so the retro happened around a single laptop."]
FACTS = ["The kestrel cluster had its disks resized to 200 GB on node {n} before the migration.",
         "Kestrel disks on node {n} filled up at night and paged whoever was on call twice.",
         "We moved the kestrel disks of node {n} to the faster storage class after the outage.",
         "Resizing kestrel disks on node {n} took forty minutes and needed a rolling restart.",
         "The kestrel disks alert for node {n} now fires at ninety percent instead of eighty."]


def lines_of(text: str) -> list[str]:
    """The memory lines of a block, without its day lines ("2 Mar 2026", "1 Mar")."""
    return [line for line in text.splitlines() if not re.fullmatch(r"\d{1,2} [A-Z][a-z]{2}( \d{4})?", line)]


def test_hits_past_the_first_two_are_the_sentence_that_matches_the_query_and_memory_get_gives_the_rest():
    ids = [add(f"{opening} {fact.format(n=n)} Later we went home early.") for n, (opening, fact)
           in enumerate(zip(OPENINGS, FACTS))]

    async def scenario(client):
        result = await call(client, "memory_search", query="kestrel disks", limit=5, min_score=0)
        found = result["memories"]
        assert sorted(m["id"] for m in found) == sorted(ids)
        lines = lines_of(await text_of(client, "memory_search", query="kestrel disks", limit=5, min_score=0))
        assert len(lines) == 5
        for memory, line in zip(found[:2], lines[:2]):
            assert "cut" not in memory and line.split(" ", 1)[1] == memory["content"]
        for memory, line in zip(found[2:], lines[2:]):
            handle, shown = line.split(" ", 1)
            assert memory["cut"] and memory["id"].endswith(handle)
            assert shown.endswith(" …") and "kestrel" in shown.lower() and "went home" not in shown
            assert not any(word in shown for word in ("standup", "coffee", "heating", "demo", "projector"))
            assert shown.removesuffix(" …") in memory["content"]  # its compressed words, in order
            assert len(shown) < len(memory["content"])
            got = await text_of(client, "memory_get", id=handle)
            assert got.splitlines()[1] == f"{handle} {memory['content']}"

        raw = await client.call_tool("memory_search", {"query": "kestrel disks", "limit": 5, "min_score": 0,
                                                       "raw": True})
        assert "…" not in raw.content[0].text and not any("cut" in m for m in raw.structured_content["memories"])
        assert all(m["content"] in raw.content[0].text for m in raw.structured_content["memories"])

        described = {tool.name: tool.description for tool in (await client.list_tools()).tools}
        assert "…" in described["memory_search"] and "memory_get" in described["memory_search"]

    session(scenario)


def memory(n: int, raw: str, compressed: str | None = None, day: str = "2026-03-02") -> Memory:
    return Memory(id=f"01JZ{n:022d}", created_at=f"{day}T10:00:00Z", updated_at=f"{day}T10:00:00Z", raw=raw,
                  compressed=compressed)


def test_a_short_memory_past_the_first_two_is_shown_whole_and_two_hits_saying_the_same_share_one_line():
    found = [memory(0, f"{OPENINGS[0]} {FACTS[0].format(n=1)}"), memory(1, f"{OPENINGS[1]} {FACTS[1].format(n=2)}"),
             memory(2, "Kestrel disks are fine now. Good."),
             memory(3, f"{OPENINGS[2]} The kestrel disks were resized to 200 GB on node 7."),
             memory(4, f"{OPENINGS[3]} The kestrel disks were resized to 200 GB on node 7."),
             memory(5, f"{OPENINGS[4]} The kestrel disks were resized to 200 GB on node 7.", day="2026-03-01")]
    weights = query_weights(["kestrel", "disks", "resized"], lambda word: 1.0)
    lines = result_lines(found, weights)
    assert [line.cut for line in lines] == [False, False, False, True, True, True]
    text = result_block(found, lines, lambda memory_id: memory_id[-3:])
    assert text.splitlines() == [
        "2 Mar 2026", f"000 {found[0].raw}", f"001 {found[1].raw}", "002 Kestrel disks are fine now. Good.",
        "003 004 The kestrel disks were resized to 200 GB on node 7. …",
        "1 Mar", "005 The kestrel disks were resized to 200 GB on node 7. …"]


def test_a_cut_line_is_the_compressed_words_of_the_sentence_under_its_label():
    raw = ("Caroline: Hey Mel! Good to see you, how have you been lately? "
           "I went to the LGBTQ support group yesterday and it was so powerful. See you soon!")
    compressed = ("Caroline: Hey Mel! Good see you, how you been lately? went LGBTQ support group yesterday, "
                  "so powerful See you soon!")
    line = one_line(memory(0, raw, compressed), query_weights(["lgbtq", "support", "group"], lambda word: 1.0))
    assert line == Line("Caroline: went LGBTQ support group yesterday, so powerful", cut=True)
    facts = ("WHO=Caroline | MET=Mel, good to see you, how have you been | DID=LGBTQ support group yesterday | "
             "FELT=so powerful | WHERE=the community centre downtown")
    abstract = one_line(memory(1, raw, facts), query_weights(["support"], lambda word: 1.0))
    assert abstract == Line("Caroline: I went to the LGBTQ support group yesterday and it was so powerful.", cut=True)


def test_a_hit_holding_no_query_word_shows_its_sentence_closest_in_meaning():
    raw = f"{OPENINGS[0]} {FACTS[0].format(n=3)} Later we went home early and nobody said much about it."
    asked = []

    def closest(sentences):
        asked.append(sentences)
        return 1

    line = one_line(memory(0, raw), query_weights(["storage"], lambda word: 1.0), closest)
    assert line == Line(FACTS[0].format(n=3), cut=True) and len(asked[0]) == 3


def test_a_query_word_meets_its_other_forms_in_the_sentence_chosen():
    raw = ("Jon: Yeah, Gina! It's been tough, but I'm living my true self. Dancing makes me happy, and now I get "
           "to share that with other people. [shared image: photo of woman doing pole dance in dance studio]")
    line = one_line(memory(0, raw), query_weights(["jon", "dance", "make"], lambda word: 1.0))
    assert line == Line("Jon: Dancing makes me happy, and now I get to share that with other people.", cut=True)
