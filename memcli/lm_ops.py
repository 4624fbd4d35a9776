"""What compression asks of a causal language model, and its llama.cpp implementation.

`prune` needs each token's surprisal over a text and `facts` needs grammar-constrained generation.
Both go through the `CompressionModel` protocol so tests (and other back ends) can stand in a fake that
answers garbage, raises or hangs, without touching llama.cpp.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Iterator, Protocol

from memcli.errors import ModelError

# Surprisal windows: tokens scored per forward pass, and how many earlier tokens each window sees
# again as context so a word at the start of a window is not judged without its sentence.
WINDOW_TOKENS = 512
WINDOW_CONTEXT = 64

# One llama.cpp context is not safe to share between threads; a timed-out compression may still be
# finishing in its worker thread when the next one starts.
_LLAMA_LOCK = threading.Lock()


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


class LlamaOps:
    """CompressionModel over a memcli.llm.LanguageModel (its Llama needs logits_all=True)."""

    def __init__(self, lm):
        self.lm = lm
        self.name = lm.name

    def count_tokens(self, text: str) -> int:
        return self.lm.count_tokens(text)

    def surprisals(self, text: str, deadline: Deadline) -> list[TokenScore]:
        import numpy as np

        llama = self.lm.llama
        if not getattr(llama, "_logits_all", False):
            raise ModelError(f"{self.name} was loaded without logits_all=True; prune needs every token's logits")
        tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        if not tokens:
            return []
        spans = _char_spans(text, [llama.detokenize([t]) for t in tokens])
        bos = llama.token_bos()
        window = max(16, min(WINDOW_TOKENS, llama.n_ctx() - WINDOW_CONTEXT - 2))
        values = np.empty(len(tokens), dtype=np.float64)
        for first in range(0, len(tokens), window):
            last = min(len(tokens), first + window)
            context = tokens[max(0, first - WINDOW_CONTEXT):first]
            prefix = ([bos] if bos >= 0 else []) + context
            values[first:last] = self._score_window(prefix, tokens[first:last], deadline)
        if bos < 0:
            values[0] = float(np.nanmax(values)) if len(values) > 1 else 0.0
        return [TokenScore(s, e, float(v)) for (s, e), v in zip(spans, values)]

    def _score_window(self, prefix: list[int], tokens: list[int], deadline: Deadline):
        """Surprisal of each of tokens after prefix; the first token has no prediction without a prefix."""
        import numpy as np

        deadline.check()
        llama = self.lm.llama
        if not _LLAMA_LOCK.acquire(timeout=deadline.remaining()):
            raise TimeoutError(f"timeout after {deadline.seconds:g}s (model busy)")
        try:
            llama.reset()
            llama.eval(prefix + tokens)
            # Row i of the logits predicts token i + 1 of the evaluated sequence. The rows are a view
            # of the Llama's buffer, so they are read before the lock is let go.
            logits = np.asarray(llama.scores[: len(prefix) + len(tokens)], dtype=np.float32)
            rows = logits[len(prefix) - 1: len(prefix) + len(tokens) - 1] if prefix else logits[: len(tokens) - 1]
            targets = np.asarray(tokens if prefix else tokens[1:])
            chosen = rows[np.arange(len(targets)), targets]
            log_norm = np.empty(len(targets))
            for at in range(0, len(targets), 64):  # in slices: a whole window would need 2 x 100 MB
                block = rows[at:at + 64]
                top = block.max(axis=1, keepdims=True)
                shifted = np.subtract(block, top)
                log_norm[at:at + 64] = np.log(np.exp(shifted, out=shifted).sum(axis=1)) + top[:, 0]
        finally:
            _LLAMA_LOCK.release()
        deadline.check()
        out = np.full(len(tokens), np.nan)
        out[len(tokens) - len(targets):] = log_norm - chosen
        return out

    def generate(self, system: str, user: str, *, grammar: str, max_tokens: int,
                 deadline: Deadline) -> Iterator[str]:
        from llama_cpp import LlamaGrammar

        deadline.check()
        compiled = LlamaGrammar.from_string(grammar, verbose=False)
        if not _LLAMA_LOCK.acquire(timeout=deadline.remaining()):
            raise TimeoutError(f"timeout after {deadline.seconds:g}s (model busy)")
        try:
            self.lm.llama.reset()
            stream = self.lm.llama.create_chat_completion(
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                grammar=compiled, max_tokens=max_tokens, temperature=0.0, repeat_penalty=1.3, stream=True,
            )
            for chunk in stream:
                deadline.check()
                piece = chunk["choices"][0]["delta"].get("content")
                if piece:
                    yield piece
        finally:
            _LLAMA_LOCK.release()


def _char_spans(text: str, pieces: list[bytes]) -> list[tuple[int, int]]:
    """Character range of each token, from the bytes each token stands for.

    Byte-level BPE tokenizers give the text back byte for byte. SentencePiece ones may add or drop a
    leading space; a piece that does not match where the previous one ended is looked for a little
    further on, and a piece never found gets an empty range (it then scores no word)."""
    data = text.encode("utf-8")
    char_at = []
    for index, char in enumerate(text):
        char_at.extend([index] * len(char.encode("utf-8")))
    char_at.append(len(text))
    spans, cursor = [], 0
    for piece in pieces:
        start = data.find(piece, cursor, cursor + len(piece) + 8) if piece else -1
        if start < 0 and piece.startswith(b" "):
            piece = piece[1:]
            start = data.find(piece, cursor, cursor + len(piece) + 8) if piece else -1
        if start < 0:
            spans.append((char_at[cursor], char_at[cursor]))
            continue
        cursor = start + len(piece)
        spans.append((char_at[start], char_at[cursor - 1] + 1))
    return spans
