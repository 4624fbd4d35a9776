"""The model-loading layer: resolving references, clear errors, caching, and the real defaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from locations import FIXTURES, ROOT
from tinybert import write_tiny_bert

from memcli.errors import ModelError
from memcli.providers import llama as llm
from memcli.providers.bert_gguf import convert_bert

SENTENCES = json.loads((FIXTURES / "minilm_reference.json").read_text())["sentences"]


@pytest.fixture(autouse=True)
def fresh_models():
    yield
    llm.clear_cache()


@pytest.fixture
def tiny_gguf(tmp_path) -> Path:
    return convert_bert(write_tiny_bert(tmp_path / "bert"), tmp_path / "tiny.gguf")


def test_an_uninstalled_registry_model_says_how_to_get_it():
    expected = r"model all-minilm-l6-v2 is not installed; run `mem models pull all-minilm-l6-v2`"
    with pytest.raises(ModelError, match=expected):
        llm.resolve("all-minilm-l6-v2", "embed")


def test_unknown_names_and_missing_paths_are_clear(tmp_path):
    with pytest.raises(ModelError, match="no model named 'nope'.*or give a path to a .gguf file"):
        llm.resolve("nope", "embed")
    with pytest.raises(ModelError, match="does not exist"):
        llm.resolve(str(tmp_path / "missing.gguf"), "embed")


def test_a_registry_model_of_the_other_role_is_refused():
    with pytest.raises(ModelError, match="has the role 'compress'; it cannot serve as the embed model"):
        llm.get_embedder("smollm2-135m-instruct-q4_1")


def test_a_gguf_path_of_the_other_role_is_refused(tiny_gguf):
    with pytest.raises(ModelError, match="is an embedding model .*cannot serve as the compress model"):
        llm.get_lm(str(tiny_gguf))


def test_a_file_that_is_not_gguf_is_reported_as_such(tmp_path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_text("<html>not a model</html>")

    with pytest.raises(ModelError, match="is not a GGUF file"):
        llm.get_embedder(str(bogus))


def test_a_truncated_gguf_is_reported_as_corrupt(tiny_gguf, tmp_path):
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(tiny_gguf.read_bytes()[: tiny_gguf.stat().st_size // 2])

    with pytest.raises(ModelError, match="cannot load .*corrupt or truncated"):
        llm.get_embedder(str(truncated))


def test_one_instance_per_model_and_a_stable_id(tiny_gguf):
    first = llm.get_embedder(str(tiny_gguf))
    assert llm.get_embedder(str(tiny_gguf)) is first
    model_id = first.model_id

    llm.clear_cache()

    assert llm.get_embedder(str(tiny_gguf)).model_id == model_id
    assert model_id.startswith("tiny@")


def test_the_model_id_changes_with_the_file(tiny_gguf, tmp_path):
    before = llm.get_embedder(str(tiny_gguf)).model_id
    llm.clear_cache()
    convert_bert(tmp_path / "bert", tiny_gguf, "f16")

    assert llm.get_embedder(str(tiny_gguf)).model_id != before


def test_long_texts_are_cut_not_fatal(tiny_gguf):
    embedder = llm.get_embedder(str(tiny_gguf))
    long_text = " ".join(["the fox jumps"] * 2000)

    tokens = embedder.tokens(long_text)
    vectors = embedder.embed([long_text, "", "the fox"])

    assert len(tokens) == embedder.max_tokens and tokens[-1] == 3  # still closed by [SEP]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# -- the real defaults ----------------------------------------------------------------------------


@pytest.mark.models
def test_real_embedder_batches_256_texts_like_one_at_a_time(real_models):
    embedder = llm.get_embedder("all-minilm-l6-v2")
    texts = [f"memory {i}: {SENTENCES[i % len(SENTENCES)]}" for i in range(256)]

    batched = embedder.embed(texts)
    single = np.stack([embedder.embed([text])[0] for text in texts[:16]])

    assert batched.shape == (256, 384) and batched.dtype == np.float32 and embedder.dim == 384
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-4)
    assert (batched[:16] * single).sum(axis=1).min() > 0.999


@pytest.mark.models
def test_real_embedder_ranks_the_related_sentences_first(real_models):
    vectors = llm.get_embedder("all-minilm-l6-v2").embed(SENTENCES)
    query = SENTENCES.index("How do I avoid getting blocked when scraping?")

    ranked = [SENTENCES[i] for i in np.argsort(-(vectors @ vectors[query]))]

    assert set(ranked[1:3]) == {"Rate limiting has been the hardest part of the scraper project.",
                                "Amazon blocks IPs after about 30 requests per second."}


@pytest.mark.models
def test_real_embedder_truncates_a_5000_word_text(real_models):
    embedder = llm.get_embedder("all-minilm-l6-v2")
    words = " ".join(f"word{i} scraping" for i in range(2500))

    vectors = embedder.embed([words, words + " and an ending that lies past the cut"])

    assert embedder.max_tokens == 256
    assert float(vectors[0] @ vectors[1]) > 0.9999


@pytest.mark.models
def test_real_compression_model_counts_tokens_and_gives_per_token_logits(real_models):
    lm = llm.get_lm("smollm2-135m-instruct-q4_1")
    text = SENTENCES[0]

    tokens = lm.tokenize(text)
    logits = lm.logits(tokens)

    assert lm.name == "smollm2-135m-instruct-q4_1" and lm.model_id.startswith(lm.name + "@")
    assert lm.count_tokens(text) == len(tokens) and 8 < len(tokens) < 20
    assert lm.count_tokens("") == 0
    assert logits.shape == (len(tokens), lm.llama.n_vocab()) and np.isfinite(logits).all()
    assert np.array_equal(lm.logits(tokens), logits)
    assert llm.get_lm("smollm2-135m-instruct-q4_1") is lm


@pytest.mark.models
def test_real_compression_model_is_refused_as_an_embedder_by_path(real_models):
    path = llm.resolve("smollm2-135m-instruct-q4_1", "compress")

    with pytest.raises(ModelError, match="is a causal language model"):
        llm.get_embedder(str(path))


@pytest.mark.models
def test_llama_cpp_logs_stay_off_the_terminal_unless_asked(real_models):
    script = (
        "import logging, sys\n"
        "from memcli.providers import llama as llm\n"
        "if sys.argv[1] == 'debug':\n"
        "    logging.basicConfig(level=logging.DEBUG, stream=sys.stdout)\n"
        "llm.get_embedder('all-minilm-l6-v2').embed(['hello'])\n"
        "llm.get_lm('smollm2-135m-instruct-q4_1').count_tokens('hello')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    quiet = subprocess.run([sys.executable, "-c", script, "quiet"], capture_output=True, text=True, env=env)
    chatty = subprocess.run([sys.executable, "-c", script, "debug"], capture_output=True, text=True, env=env)

    assert quiet.returncode == 0 and quiet.stdout == "" and quiet.stderr == ""
    assert "DEBUG:memcli:llama.cpp: " in chatty.stdout
