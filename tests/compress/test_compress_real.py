"""Compression with the real default model (SmolLM2-135M-Instruct Q4_1 through llama.cpp)."""

from __future__ import annotations

import pytest

from memcli.compress.guard import check, drifted, missing_spans
from memcli.compress.pipeline import compress
from memcli.providers.llama import LlamaOps
from memcli.providers.protocols import Deadline
from memcli.providers.registry import DEFAULT_COMPRESS_MODEL

pytestmark = pytest.mark.models

NOTE = (
    "Bug: the nightly export crashed with a UnicodeDecodeError when a supplier in Łódź sent a CSV encoded "
    "as Windows-1250 instead of UTF-8. The stack trace pointed at read_supplier_file() in "
    "importers/csv_reader.py, line 88, which called open(path) without an encoding argument, so it picked "
    "up the container default. The fix was to sniff the encoding with charset-normalizer 3.3.2 and fall "
    "back to cp1250 for Polish suppliers. I added a regression test with a sample file from Zoë Müller's "
    "team. The export has been green for 9 nights in a row since commit 4f9c2ab."
)

# Paragraphs a user might store, each with spans that must come out verbatim.
TRICKY = [
    ("We did not migrate the search cluster this quarter, and we never will without a rollback plan; the "
     "vendor quote came to $1,200 per month, which is 40% above budget. Nadia says the old nodes can't take "
     "more than 30 req/s before the p95 latency climbs past 850 ms, so the team will revisit the decision in "
     "Q3 once the new hardware budget has been approved by finance.",
     ["not", "never", "without", "$1,200 per month", "40%", "Nadia", "can't", "30 req/s", "850 ms", "Q3"]),
    ("The upgrade from Python 3.11 to 3.12 broke the build on 2026-11-29 because os.path.join was patched in "
     "a fixture called patch_fs_paths, and the getUserName helper still imported distutils. José fixed both "
     "in PR #4821 on March 3rd at 14:30; details are at https://git.example.com/platform/api/pull/4821 and "
     "the follow-up goes to ops@example.org before Friday.",
     ["Python", "3.11", "3.12", "2026-11-29", "os.path.join", "patch_fs_paths", "getUserName", "José",
      "#4821", "March 3rd", "14:30", "https://git.example.com/platform/api/pull/4821", "ops@example.org",
      "Friday"]),
    ("Zoë Müller moved from Łódź to Malmö in 7 May 2023 and now runs the warehouse team; Søren and Ana "
     "Beatriz report to her. She said \"no more weekend deploys\" after the outage, and the config flag "
     "DEPLOY_WINDOW_DAYS is set to mon-thu in /etc/deploy/policy.yaml so nobody can override it from the CLI.",
     ["Zoë", "Müller", "Łódź", "Malmö", "7 May 2023", "Søren", "Ana", "Beatriz", '"no more weekend deploys"',
      "DEPLOY_WINDOW_DAYS", "/etc/deploy/policy.yaml", "nobody", "CLI"]),
]


@pytest.fixture(scope="module")
def lm():
    from memcli.providers.llama import get_lm

    return get_lm(DEFAULT_COMPRESS_MODEL)


@pytest.fixture(autouse=True)
def _models(real_models):
    return real_models


def test_surprisal_reads_the_logits_of_the_right_positions(lm):
    ops = LlamaOps(lm)
    expected = ops.surprisals("The capital of France is Paris.", Deadline(60))
    odd = ops.surprisals("The capital of France is Banana.", Deadline(60))
    paris = next(t for t in expected if "Paris" in "The capital of France is Paris."[t.start:t.end])
    banana = next(t for t in odd if "Ban" in "The capital of France is Banana."[t.start:t.end])
    assert paris.surprisal < banana.surprisal


PROSE = (
    "Caroline and Melanie had a long conversation on 8 May 2023 about the support group that Caroline "
    "attended the week before. She said that the group made her feel accepted and that she wants to "
    "continue her education, maybe in counseling or in a job that is about mental health. Melanie was "
    "happy for her and told her about the painting of a lake at sunrise that she made last year when "
    "she was on holiday with her kids. They both agreed that it is important to take care of oneself."
)


def test_a_long_memory_loses_only_what_is_safe_to_drop_and_passes_the_guard(lm):
    result = compress(PROSE)
    assert result.info["status"] == "done", result.info
    assert result.info["model"] == DEFAULT_COMPRESS_MODEL and result.info["method"] == "prune"
    assert result.info["tokens"] <= 0.9 * result.info["raw_tokens"]
    assert check(PROSE, result.text, lm.count_tokens) is None and drifted(PROSE, result.text) is None
    for word in ("support group", "counseling", "mental health", "painting", "lake", "sunrise", "kids"):
        assert word in result.text.lower()


def test_a_dense_note_is_compressed_less_but_passes_the_guard(lm):
    result = compress(NOTE)
    assert result.info["status"] == "done", result.info
    assert result.info["tokens"] < result.info["raw_tokens"]
    assert check(NOTE, result.text, lm.count_tokens) is None and drifted(NOTE, result.text) is None


@pytest.mark.parametrize("text, spans", TRICKY)
def test_every_protected_span_survives(text, spans):
    result = compress(text, min_chars=0)
    assert result.info["status"] == "done", result.info
    for span in spans:
        assert span in result.text, f"{span!r} lost: {result.text}"


def test_a_text_longer_than_one_window_is_compressed_whole(lm):
    text = "\n\n".join([NOTE] + [t for t, _ in TRICKY] * 3)
    assert lm.count_tokens(text) > 600
    result = compress(text, timeout_s=120)
    assert result.info["status"] == "done", result.info
    assert missing_spans(text, result.text) == []
    assert result.text.count("\n\n") == text.count("\n\n")


def test_facts_with_the_default_model_still_lands_a_checked_form(lm):
    result = compress(NOTE, method="facts", timeout_s=120)
    assert result.info["status"] == "done", result.info
    assert check(NOTE, result.text, lm.count_tokens, allowed=("TOPIC", "PROBLEM", "SOLUTION", "FACT")) is None


class GarbageFacts(LlamaOps):
    def generate(self, system, user, *, grammar, max_tokens, deadline):
        yield "TOPIC=Quarterly Banana Summit | DATE=1999-01-01"


class CrashingModel(LlamaOps):
    def surprisals(self, text, deadline):
        raise RuntimeError("llama_decode returned -1")


def test_a_forced_garbage_output_falls_back_to_prune(lm):
    result = compress(NOTE, method="facts", lm=GarbageFacts(lm))
    assert result.info["method"] == "prune" and result.info["status"] == "done"
    assert "Banana" not in result.text


def test_a_raising_model_stores_the_memory_raw_with_failed(lm):
    result = compress(NOTE, lm=CrashingModel(lm), ratio=0.95)  # a target only the forward pass can meet
    assert result.text is None
    assert result.info["status"] == "failed" and "llama_decode returned -1" in result.info["reason"]
    assert result.info["tokens"] == result.info["raw_tokens"] == lm.count_tokens(NOTE)


def test_a_timeout_fails_open(lm):
    result = compress(NOTE, timeout_s=0.001)
    assert result.text is None
    assert result.info["status"] == "failed" and result.info["reason"].startswith("timeout after")
