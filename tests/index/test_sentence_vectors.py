"""A memory's vector is the mean of its sentences', each embedded with the label it is under."""

from __future__ import annotations

import shutil

import pytest
from helpers import add, jsonl, ok, open_mem

from memcli.index import db as db_file
from memcli.index.sentence_vectors import units

TRIP = ("Caroline: Thanks so much for asking about the trip. The weather was grey most days and the hotel "
        "was fine. My necklace came from my grandma in Sweden. We ate far too much cake at the market.")
SCARF = "Melanie: Where did you get that lovely scarf from, the market?"


def test_each_sentence_carries_the_label_its_text_opens_with():
    assert units(TRIP) == [
        "Caroline: Thanks so much for asking about the trip.",
        "Caroline: The weather was grey most days and the hotel was fine.",
        "Caroline: My necklace came from my grandma in Sweden.",
        "Caroline: We ate far too much cake at the market.",
    ]


def test_a_line_with_its_own_label_starts_a_new_speaker():
    assert units("Ana: Are you coming on Friday?\nBen: Yes. I booked the 6 pm train.\nIt gets in at nine.") == [
        "Ana: Are you coming on Friday?",
        "Ben: Yes. I booked the 6 pm train.",
        "Ben: It gets in at nine.",
    ]


def test_fragments_join_a_sentence_and_marks_inside_words_do_not_split():
    assert units("Wow! The cache grew to 3.5 GB after v1.2 shipped. We should cap it. Agreed.") == [
        "Wow! The cache grew to 3.5 GB after v1.2 shipped.",
        "We should cap it. Agreed.",
    ]


def test_a_long_phrase_before_a_colon_is_not_a_label():
    text = "My grandmother's lentil soup, as she dictated it over the phone: soften one onion. Then add the lentils."
    assert units(text) == ["My grandmother's lentil soup, as she dictated it over the phone: soften one onion.",
                           "Then add the lentils."]


def test_a_text_of_one_sentence_is_embedded_as_it_is():
    assert units("Caroline: Wow, nice!") == ["Caroline: Wow, nice!"]
    assert units("") == [""]


def test_meaning_search_finds_the_sentence_a_question_names_in_a_long_turn():
    # The question's words are a small share of the long turn's, so its whole-text vector is further from
    # the question than the short turn's (0.21 against 0.25 with the fake embedder); its sentence about
    # the necklace, carrying "Caroline", is closer than either.
    trip, scarf = add(TRIP), add(SCARF)
    rows = jsonl(ok("search", "Where is Caroline's necklace from?", "--mode", "vector", "--jsonl").stdout)
    assert [row["id"] for row in rows][:2] == [trip, scarf]


def test_vectors_made_by_an_older_mem_are_made_again(fakes):
    _, embedder = fakes
    trip = add(TRIP)
    mem = open_mem()
    with db_file.transaction(mem.catalog.db):  # what a mem that embedded whole texts recorded
        db_file.set_meta(mem.catalog.db, "embed_model", embedder.model_id)
    result = ok("search", "Where is Caroline's necklace from?", "--mode", "vector", "--jsonl")
    assert "embedding changed" in result.stderr
    assert jsonl(result.stdout)[0]["id"] == trip


def test_a_long_text_is_embedded_by_its_first_sentences():
    text = " ".join(f"Step {n} of the runbook restarts worker {n}." for n in range(100))
    kept = units(text)
    assert len(kept) == 32 and kept[0] == "Step 0 of the runbook restarts worker 0."


def test_doctor_makes_again_the_vectors_an_older_mem_made(fakes):
    _, embedder = fakes
    add(TRIP), add(SCARF)
    mem = open_mem()
    with db_file.transaction(mem.catalog.db):
        db_file.set_meta(mem.catalog.db, "embed_model", embedder.model_id)
    shutil.rmtree(mem.store.root / "vectors")  # an older mem kept no vector cache
    result = ok("doctor")
    assert "embedded 2 memories (the embedding changed)" in result.stdout + result.stderr
    assert "embedding changed" not in ok("search", "necklace", "--mode", "vector").stderr


def test_a_label_heads_its_paragraph_and_code_in_a_fence_has_none():
    text = ("Subject: Q3 plan\n\nHi team, the budget is approved. We hire two people.\n"
            "```\nif x: print(x)\n```\nThis handles whitespace. It was broken before.")
    assert units(text) == ["Subject: Q3 plan", "Hi team, the budget is approved.", "We hire two people.",
                           "if x: print(x)", "This handles whitespace.", "It was broken before."]


@pytest.mark.models
def test_a_turn_of_greetings_is_found_by_the_sentence_that_says_what_happened(real_models):
    """Each sentence weighs by its words: four short greetings do not outweigh the sentence with the news.
    Weighted alike, the greetings pulled this turn below a short turn that only shares its subject (real
    MiniLM: cosine 0.56 against 0.59; by words 0.67 against 0.59)."""
    news = ok("add", "--no-compress", "Jon: Hey Gina! Long time no see. How have you been? Any news on your side? "
              "Things are hectic here. I finally signed the lease for the dance studio on Fifth Street after months "
              "of looking at places.").stdout.strip()
    ok("add", "--no-compress", "Jon: Dance has always been my way to relax.")
    rows = jsonl(ok("search", "Where is Jon's dance studio?", "--mode", "vector", "--jsonl").stdout)
    assert rows[0]["id"] == news
