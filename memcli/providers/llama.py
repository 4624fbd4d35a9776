"""Loading the local models: one llama.cpp instance per model per process, imported only when used.

A model reference is a registry name (installed by `mem models pull`) or a path to any .gguf file
(mem.yaml: `models: {embed: /path/x.gguf, compress: /path/y.gguf}`). llama.cpp's own logging goes
to the "memcli" logger at debug level (`mem -v -v` shows it), never straight to the terminal.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import logging
import os
import threading
import weakref
from pathlib import Path
from typing import Iterator

from memcli.errors import ModelError, NotFound
from memcli.providers.protocols import Deadline, TokenScore
from memcli.util import workers

log = logging.getLogger("memcli")

EMBED_MAX_TOKENS = 1024  # the longest input an embedding model sees; bounds its work buffers
EMBED_PACK_TOKENS = 128  # short texts share a forward pass up to this many tokens (fastest of 32-512 here)
EMBED_MAX_SEQS = 64
LM_CONTEXT = 2048
FINGERPRINT_BYTES = 1 << 20
THREADS = max(1, min(os.cpu_count() or 2, 4))
# At exit, the longest wait for a timed-out compression to reach its next deadline check: one forward
# pass of a window, or the model load it was in.
EXIT_WAIT_S = 120.0

_lock = threading.Lock()
_embedders: dict[str, "Embedder"] = {}
_lms: dict[str, "LanguageModel"] = {}
_log_callback = None


def resolve(ref: str, role: str) -> Path:
    """A registry name -> its installed file; a path to a .gguf -> that file."""
    from memcli.providers import registry

    if looks_like_path(ref):
        path = Path(ref).expanduser()
        if not path.is_file():
            raise ModelError(f"model file {path} does not exist")
        return path
    try:
        spec = registry.get(ref)
    except NotFound as exc:
        raise ModelError(f"{exc}; or give a path to a .gguf file") from None
    if spec.role != role:
        raise ModelError(f"model {ref} has the role {spec.role!r}; it cannot serve as the {role} model")
    path = registry.model_path(spec)
    if not path.is_file():
        raise ModelError(f"model {ref} is not installed; run `mem models pull {ref}`")
    return path


def get_embedder(ref: str) -> "Embedder":
    return _cached(_embedders, Embedder, ref, "embed")


def get_lm(ref: str) -> "LanguageModel":
    return _cached(_lms, LanguageModel, ref, "compress")


def compression_model(ref: str) -> "LlamaOps":
    """The compression model as a memcli.providers.protocols.CompressionModel."""
    return LlamaOps(get_lm(ref))


def _cached(cache: dict, kind, ref: str, role: str):
    """One loaded instance per model file per process."""
    path = resolve(ref, role)
    with _lock:
        key = str(path.resolve())
        if key not in cache:
            cache[key] = kind(path, _display_name(ref, path))
        return cache[key]


def clear_cache() -> None:
    """Forget loaded models (tests and benchmarks measure cold loads with it)."""
    with _lock:
        for model in list(_embedders.values()) + list(_lms.values()):
            model.llama.close()
        _embedders.clear()
        _lms.clear()


def _close_at_exit() -> None:
    """Close the models while the interpreter is whole: left to Llama.__del__ at shutdown, llama.cpp's
    free functions are already gone and every process that loaded a model ends with a traceback on
    stderr. A compression that timed out may still be inside llama.cpp: it stops at its next deadline
    check, and is let get there first (closing its context under it is a SIGSEGV)."""
    workers.wait(EXIT_WAIT_S)
    clear_cache()


atexit.register(_close_at_exit)


class Embedder:
    """Sentence vectors: float32, L2-normalised, one row per text."""

    def __init__(self, path: Path, name: str):
        llama_cpp = import_llama_cpp()
        self.name = name
        self.model_id = f"{name}@{fingerprint(path)}"
        self.llama = _load(path, embedding=True, n_ctx=0, n_batch=EMBED_MAX_TOKENS, n_ubatch=EMBED_MAX_TOKENS)
        _check_role(self.llama, path, "embed")
        if llama_cpp.llama_pooling_type(self.llama.ctx) == llama_cpp.LLAMA_POOLING_TYPE_NONE:
            raise ModelError(f"{path} declares no pooling, so it gives no sentence vectors; "
                             "it is not an embedding model")
        self.dim = self.llama.n_embd()
        # A model trained on shorter inputs than its position table says so (sentence-transformers'
        # max_seq_length, kept by mem's converter); longer texts are cut there, as it would.
        limit = int(self.llama.metadata.get("mem.max_seq_length") or self.llama.n_ctx())
        self.max_tokens = min(limit, self.llama.n_batch)
        self._pack_tokens = min(EMBED_PACK_TOKENS, self.llama.n_batch)
        self._batch = llama_cpp.llama_batch_init(self.llama.n_batch, 0, EMBED_MAX_SEQS)
        weakref.finalize(self, llama_cpp.llama_batch_free, self._batch)
        self._busy = threading.Lock()  # one batch buffer and one context: one caller at a time

    def embed(self, texts: list[str]):
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._busy:
            pending: list[tuple[int, list[int]]] = []
            used = 0
            for row, text in enumerate(texts):
                tokens = self.tokens(text)
                if pending and (used + len(tokens) > self._pack_tokens or len(pending) == EMBED_MAX_SEQS):
                    self._decode(pending, out)
                    pending, used = [], 0
                pending.append((row, tokens))
                used += len(tokens)
            if pending:
                self._decode(pending, out)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def tokens(self, text: str) -> list[int]:
        """The model's tokens for text, cut to max_tokens keeping the closing special token."""
        tokens = self.llama.tokenize(text.encode("utf-8", "replace"), add_bos=True, special=False)
        if len(tokens) > self.max_tokens:
            tokens = tokens[: self.max_tokens - 1] + tokens[-1:]
        return tokens

    def _decode(self, pending: list[tuple[int, list[int]]], out) -> None:
        import numpy as np

        llama_cpp = import_llama_cpp()
        batch = self._batch
        n = 0
        for seq, (_, tokens) in enumerate(pending):
            for pos, token in enumerate(tokens):
                batch.token[n] = token
                batch.pos[n] = pos
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = seq
                batch.logits[n] = True
                n += 1
        batch.n_tokens = n
        ctx = self.llama.ctx
        memory = llama_cpp.llama_get_memory(ctx)
        if memory:
            llama_cpp.llama_memory_clear(memory, True)
        if llama_cpp.llama_decode(ctx, batch) != 0:
            raise ModelError(f"the embedding model {self.name} failed on a batch of {len(pending)} texts")
        for seq, (row, _) in enumerate(pending):
            pointer = llama_cpp.llama_get_embeddings_seq(ctx, seq)
            out[row] = np.ctypeslib.as_array(pointer, shape=(self.dim,))


class LanguageModel:
    """The compression model, loaded so that one forward pass yields the logits of every token.

    `llama.eval(tokens)` after `llama.reset()` fills `llama.scores[:len(tokens)]` (n × vocab logits);
    `logits(tokens)` does exactly that.
    """

    def __init__(self, path: Path, name: str, *, fast_weights: bool = True):
        """fast_weights=False loads the file as it is, not its converted copy (memcli.providers.cpu_weights):
        the baseline for measuring what the conversion gains."""
        from memcli.providers import cpu_weights

        self.name = name
        digest = fingerprint(path)
        self.model_id = f"{name}@{digest}"

        def load(file: Path):
            return _load(file, logits_all=True, n_ctx=LM_CONTEXT, n_batch=512)

        self.llama = (cpu_weights.load(import_llama_cpp(), path, digest, load, THREADS) if fast_weights
                      else load(path))
        _check_role(self.llama, path, "compress")

    def tokenize(self, text: str) -> list[int]:
        """The text's own tokens: no BOS, special-token syntax treated as plain text."""
        return self.llama.tokenize(text.encode("utf-8", "replace"), add_bos=False, special=False)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def logits(self, tokens: list[int]):
        """Logits (n × vocab, float32) after each token, from one fresh forward pass."""
        if len(tokens) > self.llama.n_ctx():
            raise ModelError(f"{len(tokens)} tokens do not fit the {self.name} context of {self.llama.n_ctx()}")
        self.llama.reset()
        self.llama.eval(tokens)
        return self.llama.scores[: len(tokens)].copy()


def fingerprint(path: Path) -> str:
    """12 hex digits that change with the file's content; reads 2 MiB, not the whole file."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(FINGERPRINT_BYTES))
        handle.seek(max(size - FINGERPRINT_BYTES, 0))
        digest.update(handle.read(FINGERPRINT_BYTES))
    return digest.hexdigest()[:12]


def looks_like_path(ref: str) -> bool:
    """Whether a model setting names a file rather than a registry entry."""
    return ref.endswith(".gguf") or os.sep in ref or "/" in ref or ref.startswith("~")


def _display_name(ref: str, path: Path) -> str:
    return path.stem if looks_like_path(ref) else ref


def import_llama_cpp():
    """Import llama_cpp on first use and route its logging to ours. Every import of llama_cpp goes
    through here: OpenMP reads its settings once, when llama.cpp's library loads."""
    global _log_callback
    # llama.cpp's OpenMP threads spin between operations by default; on a 2-core machine shared with
    # anything else the spinning thread steals the core the working one needs (3-4x slower under load
    # in bench/models.py, 1.2x faster when nearly idle). Read once, when llama.cpp loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelError(f"llama-cpp-python is not importable ({exc}); see models/README.md to build it") from None
    if _log_callback is None:

        @llama_cpp.llama_log_callback
        def forward(level, text, user_data):
            if log.isEnabledFor(logging.DEBUG):
                message = text.decode("utf-8", "replace").rstrip()
                if message:
                    log.debug("llama.cpp: %s", message)

        llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
        _log_callback = forward  # kept referenced: llama.cpp calls it for the life of the process
    return llama_cpp


def _load(path: Path, **params):
    llama_cpp = import_llama_cpp()
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ModelError(f"{path} is not a GGUF file (corrupt or wrong file); "
                             "`mem models verify` checks installed models")
    threads = THREADS
    # verbose=False makes llama-cpp-python point stdout and stderr at /dev/null while it loads, which
    # would swallow the debug log that `-v -v` asked for; its own prints are debug chatter then.
    verbose = log.isEnabledFor(logging.DEBUG)
    try:
        return llama_cpp.Llama(str(path), n_threads=threads, n_threads_batch=threads, verbose=verbose, **params)
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelError(f"cannot load {path}: {exc} (the file may be corrupt or truncated; "
                         "`mem models verify` checks installed models)") from None


def _check_role(llama, path: Path, role: str) -> None:
    """An encoder with pooling is an embedding model; a causal LM without it is a compression model."""
    meta = llama.metadata
    arch = meta.get("general.architecture", "")
    embeds = f"{arch}.pooling_type" in meta or meta.get(f"{arch}.attention.causal") == "false"
    actual = "embed" if embeds else "compress"
    if actual != role:
        what = "an embedding model" if embeds else "a causal language model"
        raise ModelError(f"{path} is {what} ({arch}); it cannot serve as the {role} model")


# Surprisal windows: tokens scored per forward pass, and how many earlier tokens each window sees
# again as context so a word at the start of a window is not judged without its sentence.
WINDOW_TOKENS = 512
WINDOW_CONTEXT = 64

# One llama.cpp context is not safe to share between threads; a timed-out compression may still be
# finishing in its worker thread when the next one starts.
_LLAMA_LOCK = threading.Lock()


class LlamaOps:
    """CompressionModel over a LanguageModel (its Llama needs logits_all=True)."""

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
