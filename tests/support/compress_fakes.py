"""Deterministic stand-ins for the compression model (memcli.providers.protocols.CompressionModel)."""

from __future__ import annotations

import re
import threading

from memcli.providers.protocols import TokenScore

_TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])")


class FakeModel:
    """Tokens are words and punctuation marks with their leading space; a word's surprisal is its
    length (long words are rare words), so pruning is predictable without a real model."""

    name = "fake-model"

    def __init__(self, reply: str | None = None):
        self.reply = reply
        self.generated = 0

    def count_tokens(self, text: str) -> int:
        return len(_TOKEN.findall(text))

    def surprisals(self, text, deadline):
        return [TokenScore(m.start(), m.end(), float(len(m.group().strip()))) for m in _TOKEN.finditer(text)]

    def generate(self, system, user, *, grammar, max_tokens, deadline):
        for piece in re.findall(r"\S+|\s+", self.reply or ""):
            self.generated += 1
            yield piece


class LoopingModel(FakeModel):
    """Generates the same pair forever, as small models do; notes when its stream is closed."""

    closed = False

    def generate(self, system, user, *, grammar, max_tokens, deadline):
        try:
            while True:
                self.generated += 1
                yield "FACT=the cache is cold | "
        finally:
            self.closed = True


class RaisingModel(FakeModel):
    def __init__(self, error: BaseException):
        super().__init__()
        self.error = error

    def surprisals(self, text, deadline):
        raise self.error


class HangingModel(FakeModel):
    """Blocks inside the forward pass until released, like a stuck native call."""

    def __init__(self):
        super().__init__()
        self.release = threading.Event()

    def surprisals(self, text, deadline):
        self.release.wait(60)
        return super().surprisals(text, deadline)


class UntouchableModel(FakeModel):
    """Fails the test if compression uses the model at all."""

    def count_tokens(self, text):
        raise AssertionError("the model was used")

    surprisals = generate = count_tokens


class SlowFactsModel(FakeModel):
    """Generation never finishes before its deadline; the forward pass is quick."""

    def generate(self, system, user, *, grammar, max_tokens, deadline):
        threading.Event().wait(deadline.remaining())
        deadline.check()
        yield "FACT=late"
