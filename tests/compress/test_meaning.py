"""The words a sentence's meaning hangs on survive pruning (bench/data/meaning_probe.json)."""

import json
import re
from pathlib import Path

import pytest
from compress_fakes import FakeModel

from memcli.compress.prune import prune

PROBE = json.loads((Path(__file__).resolve().parents[2] / "bench" / "data" / "meaning_probe.json").read_text())


@pytest.mark.parametrize("sentence", PROBE["sentences"], ids=lambda s: s["text"][:40])
def test_no_relation_word_of_a_probe_sentence_is_dropped(sentence):
    form = prune(sentence["text"], FakeModel(), ratio=0.6)
    lost = [w for w in sentence["keep"] if not re.search(rf"(?<!\w){re.escape(w)}(?!\w)", form, re.I)]
    assert lost == [], form


def test_a_heading_keeps_its_words():
    form = prune("## Running\n\nStart the worker with the queue name and then the web process.", FakeModel(), ratio=0.5)
    assert form.startswith("## Running")


def test_the_probe_still_saves_tokens():
    model = FakeModel()
    raw = sum(model.count_tokens(s["text"]) for s in PROBE["sentences"])
    pruned = sum(model.count_tokens(prune(s["text"], model, ratio=0.6)) for s in PROBE["sentences"])
    assert pruned < 0.85 * raw


def test_the_adverb_that_says_how_a_verb_with_a_particle_acts_is_kept():
    form = prune("Rotate proxies and back off exponentially, starting at 250 ms and capping at 8 s.", FakeModel(), ratio=0.5)
    assert "back off exponentially" in form
