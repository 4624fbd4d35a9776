"""The compressor the store calls: outcomes, fallbacks, and failing open, with fake models."""

from __future__ import annotations

import pytest
from compress_fakes import (
    FakeModel,
    HangingModel,
    LoopingModel,
    RaisingModel,
    SlowFactsModel,
    UntouchableModel,
)

from memcli.compress.keyvalues import GRAMMAR, clean, facts
from memcli.compress.guard import check, drifted, seal
from memcli.compress.pipeline import compress
from memcli.errors import InputError, ModelError
from memcli.providers.protocols import Deadline

RAW = (
    "Decision from the architecture review on 2026-03-14: the billing service keeps its own database "
    "instead of sharing the main Postgres cluster. Priya argued that the invoice tables grow by about "
    "1.5 million rows a month and their vacuum jobs were slowing down the user-facing queries during "
    "peak hours. We will replicate customer records one way with Debezium into billing_db, and billing "
    "will never write back to the main cluster. The migration is owned by Tomasz."
)
# A target that dropping every safe word would overshoot: prune then asks the model's forward pass.
FORWARD_PASS = 0.95
FAITHFUL_FACTS = (
    "DATE=2026-03-14 | DECISION=billing keeps own database, not main Postgres cluster | PERSON=Priya | "
    "FACT=invoice tables grow about 1.5 million rows a month | STACK=customer records one way, Debezium into billing_db | "
    "CONSTRAINT=never write back | PERSON=Tomasz"
)


def test_a_long_memory_is_pruned_and_passes_the_guard():
    model = FakeModel()
    result = compress(RAW, lm=model)
    assert result.info["status"] == "done"
    assert list(result.info) == ["method", "kind", "model", "raw_tokens", "tokens", "status", "guarded"]
    assert result.info["guarded"] == seal(RAW, result.text, "prune")  # the catalog needs no second look
    assert result.info["method"] == "prune" and result.info["model"] == "fake-model"
    # Only the words safe to drop go: a note stays above the 0.6 target, but shrinks.
    assert result.info["tokens"] == model.count_tokens(result.text) < result.info["raw_tokens"]
    assert check(RAW, result.text, model.count_tokens) is None and drifted(RAW, result.text) is None


def test_a_target_above_what_the_safe_words_cost_is_met_by_dropping_some_of_them():
    result = compress(RAW, lm=FakeModel(), ratio=0.95)
    assert 0.9 * result.info["raw_tokens"] < result.info["tokens"] <= 0.95 * result.info["raw_tokens"]


def test_a_short_memory_is_skipped_without_touching_the_model():
    result = compress("Use tabs in Go.", lm=UntouchableModel(), model="some-model")
    assert result.text is None
    assert result.info == {"method": "prune", "model": "some-model", "status": "skipped",
                           "reason": "shorter than 50 characters"}


def test_a_memory_made_only_of_protected_spans_is_skipped_as_not_smaller():
    raw = " ".join(f"https://example.com/builds/{n}" for n in range(20))
    result = compress(raw, lm=FakeModel())
    assert result.text is None
    assert result.info["status"] == "skipped" and result.info["reason"] == "not smaller"
    assert result.info["tokens"] == result.info["raw_tokens"]


def test_a_faithful_facts_line_is_kept():
    result = compress(RAW, method="facts", lm=FakeModel(reply=FAITHFUL_FACTS))
    assert result.info["method"] == "facts" and result.info["status"] == "done"
    assert result.text == FAITHFUL_FACTS


def test_a_garbage_facts_line_falls_back_to_prune():
    garbage = "TOPIC=Zorg Industries | DATE=1999 | FACT=Bananas Bananas"
    result = compress(RAW, method="facts", lm=FakeModel(reply=garbage))
    assert result.info["method"] == "prune" and result.info["status"] == "done"
    assert "Zorg" not in result.text and "Priya" in result.text


def test_a_facts_line_too_slow_for_the_timeout_leaves_time_for_prune():
    result = compress(RAW, method="facts", lm=SlowFactsModel(), timeout_s=0.5)
    assert result.info["method"] == "prune" and result.info["status"] == "done"


def test_a_looping_generator_is_stopped_and_deduplicated():
    model = LoopingModel()
    line = facts(RAW, model, max_tokens=10_000, deadline=Deadline(60))
    assert line == "FACT=the cache is cold"
    assert model.generated < 10 and model.closed, "the stream (and the model it holds) is released at once"


def test_a_facts_line_cut_by_the_token_cap_loses_its_last_pair():
    assert clean("PERSON=Priya | DATE=2026-03-14 | FACT=invoice tab", last_is_cut=True) == "PERSON=Priya | DATE=2026-03-14"
    assert clean("PERSON=Priya | NOTAKEY=x | PERSON=priya | FACT=") == "PERSON=Priya"


def test_the_facts_grammar_compiles():
    from llama_cpp import LlamaGrammar

    assert LlamaGrammar.from_string(GRAMMAR, verbose=False) is not None


def test_a_raising_model_leaves_the_memory_raw_with_failed():
    result = compress(RAW, lm=RaisingModel(RuntimeError("ggml_abort")), ratio=FORWARD_PASS)
    assert result.text is None
    assert result.info["status"] == "failed"
    assert result.info["reason"] == "error: RuntimeError: ggml_abort"
    assert result.info["tokens"] == result.info["raw_tokens"] > 0


def test_a_missing_model_fails_open():
    result = compress(RAW, lm=RaisingModel(ModelError("model smollm2 is not pulled")), ratio=FORWARD_PASS)
    assert result.text is None
    assert result.info["status"] == "failed"
    assert result.info["reason"] == "model unavailable: model smollm2 is not pulled"


def test_an_unknown_model_file_fails_open(tmp_path):
    result = compress(RAW, model=str(tmp_path / "missing.gguf"))
    assert result.text is None
    assert result.info["status"] == "failed" and result.info["model"] == str(tmp_path / "missing.gguf")
    assert result.info["reason"].startswith("model unavailable: ")
    assert "raw_tokens" not in result.info


def test_a_hanging_model_times_out_and_fails_open():
    model = HangingModel()
    try:
        result = compress(RAW, lm=model, timeout_s=0.2, ratio=FORWARD_PASS)
    finally:
        model.release.set()
    assert result.text is None
    assert result.info["status"] == "failed" and result.info["reason"] == "timeout after 0.2s"


def test_an_expired_deadline_stops_before_the_forward_pass():
    result = compress(RAW, lm=FakeModel(), timeout_s=0)
    assert result.text is None and result.info["reason"] == "timeout after 0s"


def test_a_bad_method_or_ratio_is_a_usage_error():
    with pytest.raises(InputError):
        compress(RAW, method="summarise", lm=FakeModel())
    with pytest.raises(InputError):
        compress(RAW, ratio=1.5, lm=FakeModel())
