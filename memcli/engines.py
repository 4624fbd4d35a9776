"""The default engines: llama.cpp models in this process, with mem's compression pipeline on top.

Models load lazily on first use (`mem ls` and `--help` never import llama_cpp), once per process.
"""

from __future__ import annotations

from pathlib import Path

from memcli.providers import Providers


def local() -> Providers:
    return Providers(embedder=_embedder, compressor=_compress, token_counter=_token_counter,
                     locate_model=_locate_model)


def _compress(raw: str, **options):
    from memcli.compress.pipeline import compress

    return compress(raw, **options)


def _embedder(ref: str):
    from memcli.providers.llama import get_embedder

    return get_embedder(ref)


def _token_counter(ref: str):
    from memcli.providers.llama import get_lm

    return get_lm(ref).count_tokens


def _locate_model(ref: str, role: str) -> Path:
    from memcli.providers.llama import resolve

    return resolve(ref, role)
