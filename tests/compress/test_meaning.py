"""The words a sentence's meaning hangs on survive the prose method (bench/data/meaning_probe.json):
relation words, verbs, words that tell things apart, requests, prepositions of direction, values and
labels; and no two sentences are joined into a new claim."""

import json
import re
from pathlib import Path

import pytest
from compress_fakes import FakeModel

from memcli.compress.meaning import safe_drops
from memcli.compress.prune import prune
from memcli.compress.units import split_units

PROBE = json.loads((Path(__file__).resolve().parents[2] / "bench" / "data" / "meaning_probe.json").read_text())


@pytest.mark.parametrize("sentence", PROBE["sentences"], ids=lambda s: s["text"][:40])
def test_no_word_a_probe_sentence_hangs_on_is_dropped_and_nothing_is_joined(sentence):
    form = prune(sentence["text"], FakeModel(), ratio=0.6)
    lost = [w for w in sentence["keep"] if not re.search(rf"(?<!\w){re.escape(w)}(?!\w)", form, re.I)]
    joined = [p for p in sentence.get("never", []) if re.search(rf"(?<!\w){re.escape(p)}(?!\w)", form)]
    assert lost == [] and joined == [], form


def test_a_heading_keeps_its_words():
    form = prune("## The Runner\n\nStart the worker with the queue name and then the web process.", FakeModel(),
                 ratio=0.5)
    assert form.startswith("## The Runner")


def test_the_probe_still_saves_tokens():
    model = FakeModel()
    raw = sum(model.count_tokens(s["text"]) for s in PROBE["sentences"])
    pruned = sum(model.count_tokens(prune(s["text"], model, ratio=0.6)) for s in PROBE["sentences"])
    assert pruned < 0.9 * raw


def safe(text: str) -> list[str]:
    units = split_units(text)
    return [units[i].text for i in sorted(safe_drops(units))]


def test_only_the_closed_set_is_safe_to_drop():
    assert safe("The build was rejected because a few tests are flaky.") == ["The", "was", "are"]
    assert safe("Wow, hmm, the app is really slow.") == ["Wow", "hmm", "the", "is", "really"]


def test_an_article_that_is_a_name_or_ends_its_clause_stays():
    assert safe("Take plan A, not option a.") == []


def test_in_order_to_keeps_its_to():
    assert safe("We cache it in order to save a call.") == ["in", "order", "a"]


def test_a_framing_verb_goes_once_the_text_has_framed_a_statement():
    assert safe("Jon mentioned his studio. Gina mentioned her boutique and expressed hope.") == [
        "mentioned", "expressed"]
    assert safe("Jon told Gina about it and shared a photo of the studio.") == ["a", "the"]


def test_a_goodbye_with_a_date_is_a_plan_and_stays():
    assert safe("Bye, Mel! See you tomorrow.") == ["Bye"]
