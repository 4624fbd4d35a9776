"""The default engines: llama.cpp models in this process, with mem's compression pipeline on top, and
the compression server that mem.yaml's `provider` section may name in front of them.

Models load lazily on first use (`mem ls` and `--help` never import llama_cpp), once per process.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from memcli.providers import Providers


def local() -> Providers:
    return Providers(embedder=_embedder, compressor=_compress, token_counter=_token_counter,
                     locate_model=_locate_model)


def with_provider(base: Providers, settings, index_dir: Path) -> Providers:
    """`base` with compression sent to the store's provider (base itself for `provider: local`, or when
    base already sends elsewhere). `base` stays the fallback and does everything else (embeddings)."""
    if not settings.provider.remote or base.remote:
        return base
    from memcli.compress.remote import RemoteCompressor

    compressor = RemoteCompressor(settings.provider, index_dir, base, settings.compress_model)
    return dataclasses.replace(base, compressor=compressor, remote=compressor.name, status=compressor.status,
                               writer=compressor.write if settings.provider.send_to_remote else None)


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
