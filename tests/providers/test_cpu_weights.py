"""The compression model's weights converted once to a format llama.cpp computes fast (Q4_1 → Q8_0)."""

from __future__ import annotations

import ctypes
import types

import pytest

from memcli.providers import cpu_weights
from memcli.util.paths import models_dir


class Params(ctypes.Structure):
    _fields_ = [("ftype", ctypes.c_int), ("allow_requantize", ctypes.c_bool), ("nthread", ctypes.c_int)]


class Model:
    def __init__(self, path, file_type):
        self.path, self.metadata, self.closed = path, {"general.file_type": file_type}, False

    def close(self):
        self.closed = True


def fake_llama_cpp(result: int):
    """The two llama.cpp calls conversion makes; quantizing writes a file unless result says it failed."""

    def quantize(src: bytes, dest: bytes, params) -> int:
        if not result:
            with open(dest, "wb") as out:
                out.write(b"GGUF converted")
        return result

    return types.SimpleNamespace(llama_model_quantize_default_params=Params,
                                 LLAMA_FTYPE_MOSTLY_Q8_0=7, llama_model_quantize=quantize)


def loader(file_types):
    loaded = []

    def load(path):
        loaded.append(Model(path, file_types.get(path.name, "3")))
        return loaded[-1]

    return load, loaded


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "tiny.Q4_1.gguf"
    path.write_bytes(b"GGUF q4_1")
    return path


def test_a_q4_1_model_is_loaded_from_its_converted_copy_made_once(source):
    load, loaded = loader({})
    model = cpu_weights.load(fake_llama_cpp(0), source, "abc123", load, 2)

    copy = models_dir() / "converted" / "tiny.Q4_1.abc123.q8_0.gguf"
    assert model.path == copy and copy.read_bytes() == b"GGUF converted"
    assert loaded[0].closed and not model.closed
    again = cpu_weights.load(fake_llama_cpp(1), source, "abc123", load, 2)  # a failing converter is not asked
    assert again.path == copy and len(loaded) == 3


def test_a_model_in_a_fast_format_is_loaded_as_it_is(source):
    load, _ = loader({source.name: "7"})
    assert cpu_weights.load(fake_llama_cpp(0), source, "abc123", load, 2).path == source
    assert not (models_dir() / "converted").exists()


def test_when_the_copy_cannot_be_made_the_source_still_loads_and_no_part_is_left(source):
    load, _ = loader({})
    model = cpu_weights.load(fake_llama_cpp(1), source, "abc123", load, 2)
    assert model.path == source and not model.closed
    assert list((models_dir() / "converted").iterdir()) == []


@pytest.mark.models
def test_the_converted_default_model_judges_words_as_the_shipped_one(real_models):
    import numpy as np

    from memcli.providers.llama import LanguageModel, LlamaOps, resolve
    from memcli.providers.protocols import Deadline
    from memcli.providers.registry import DEFAULT_COMPRESS_MODEL

    text = ("Jon lost his job as a banker in January, so he opened a dance studio downtown; the rent is "
            "$1,400 a month and his first class, a salsa course for beginners, starts on 3 March.")
    path = resolve(DEFAULT_COMPRESS_MODEL, "compress")
    shipped = LanguageModel(path, DEFAULT_COMPRESS_MODEL, fast_weights=False)
    converted = LanguageModel(path, DEFAULT_COMPRESS_MODEL)
    assert shipped.llama.metadata["general.file_type"] == "3"
    assert converted.llama.metadata["general.file_type"] == "7"
    scores = [np.array([t.surprisal for t in LlamaOps(m).surprisals(text, Deadline(60))]) for m in (shipped, converted)]
    both = np.isfinite(scores[0]) & np.isfinite(scores[1])
    assert np.corrcoef(scores[0][both], scores[1][both])[0, 1] > 0.99
    assert np.abs(scores[0][both] - scores[1][both]).mean() < 0.25
