"""Deterministic stand-ins for the models, so fast tests need no GGUF file."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class FakeCompression:
    text: str | None
    info: dict = field(default_factory=dict)


class FakeCompressor:
    """Drops every lower-case "the", which the guard lets a form leave out; records what it was asked to
    compress."""

    def __init__(self):
        self.seen: list[str] = []

    def __call__(self, raw, *, method="prune", ratio=0.6, model="fake", min_chars=400, timeout_s=30.0):
        self.seen.append(raw)
        if len(raw) < min_chars:
            return FakeCompression(None, {"status": "skipped", "reason": "short"})
        kept = [w for w in raw.split() if w != "the"]
        text = " ".join(kept)
        if len(text) >= len(raw):
            return FakeCompression(None, {"status": "skipped", "reason": "not smaller"})
        return FakeCompression(text, {"method": method, "model": "fake", "raw_tokens": len(raw.split()),
                                      "tokens": len(kept), "status": "done"})


class FakeEmbedder:
    """Bag of hashed words in 256 dimensions: texts sharing words are near, others far (few collisions, so
    a text sharing no word scores near 0, as with a real model); records what it was asked to embed."""

    dim = 256
    model_id = "fake-embedder-256"

    def __init__(self):
        self.seen: list[str] = []

    def embed(self, texts):
        import numpy as np

        self.seen.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
                out[row, bucket % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row])) or 1.0
            out[row] /= norm
        return out


class HangingEmbedder(FakeEmbedder):
    """Says on stderr that it was reached, then never returns (for kill -9 tests)."""

    def embed(self, texts):
        import sys
        import threading

        print("fake embedder: hanging", file=sys.stderr, flush=True)
        threading.Event().wait()


def providers(compressor=None, embedder=None):
    """Providers made of fakes: what `Mem(store, providers=...)` and `main(obj=...)` take."""
    from memcli.providers import Providers

    compressor = compressor or FakeCompressor()
    embedder = embedder or FakeEmbedder()
    return Providers(embedder=lambda ref: embedder, compressor=compressor,
                     token_counter=lambda ref: lambda text: len(text.split()),
                     locate_model=lambda ref, role: f"fake-{role}-model.gguf")


# The providers the CLI of the running test gets (tests/support/helpers.run passes them as `main(obj=...)`);
# None runs the real models (tests marked `models`).
current = None
