"""What mem asks of a model, whoever serves it (llama.cpp in process, a server, a fake in tests).

`prune` needs each token's surprisal over a text and `facts` needs grammar-constrained generation:
both go through `CompressionModel`. Search and the write path need vectors: `Embedder`. Keeping the
contracts here, apart from any implementation, lets tests and other back ends stand in without
touching llama.cpp.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Iterator, Protocol


class Deadline:
    """A point in time after which compression gives up (checked between forward passes and tokens)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def remaining(self) -> float:
        return min(threading.TIMEOUT_MAX, max(0.0, self.at - time.monotonic()))

    def check(self) -> None:
        if time.monotonic() >= self.at:
            raise TimeoutError(f"timeout after {self.seconds:g}s")


@dataclass(frozen=True)
class TokenScore:
    """One model token: its character range in the text and its surprisal in nats."""

    start: int
    end: int
    surprisal: float


class CompressionModel(Protocol):
    name: str

    def count_tokens(self, text: str) -> int: ...

    def surprisals(self, text: str, deadline: Deadline) -> list[TokenScore]: ...

    def generate(self, system: str, user: str, *, grammar: str, max_tokens: int,
                 deadline: Deadline) -> Iterator[str]: ...


class Embedder(Protocol):
    """Unit-length vectors for texts; `model_id` and `dim` tie an index to the model that filled it."""

    model_id: str
    dim: int

    def embed(self, texts: list[str]): ...



class Compressed(Protocol):
    """What a compressor returns: the short form (None when the memory stays raw) and the
    `compression` mapping stored with the memory (method, model, token counts, status, reason)."""

    text: str | None
    info: dict


class Compressor(Protocol):
    """The compression step of a write. Never raises for a model problem: it fails open, and `info`
    says why the memory stayed raw."""

    def __call__(self, raw: str, *, method: str, ratio: float, model: str, min_chars: int,
                 timeout_s: float) -> Compressed: ...
