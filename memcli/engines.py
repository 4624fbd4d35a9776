"""The model-backed parts mem calls: the compressor, the embedder, the tokenizer, and where models are.

They are looked up here, at call time, so tests (and a future plugin) can swap in fakes with
`monkeypatch.setattr(engines, "compressor", ...)` without the rest of mem knowing.
"""

from __future__ import annotations


def compressor():
    """A callable `compress(raw, *, method, ratio, model, min_chars, timeout_s) -> Compression`."""
    from memcli.compress import compress

    return compress


def embedder(ref: str):
    """An object with `embed(texts) -> float32 array (n, dim)`, `.dim` and `.model_id`."""
    from memcli.llm import get_embedder

    return get_embedder(ref)


def token_counter(ref: str):
    """A callable `count(text) -> int` with the compression model's tokenizer (what `raw_tokens` means)."""
    from memcli.llm import get_lm

    return get_lm(ref).count_tokens


def locate_model(ref: str, role: str):
    """The file a model reference (registry name or path) stands for; ModelError when it is not there."""
    from memcli.llm import resolve

    return resolve(ref, role)
