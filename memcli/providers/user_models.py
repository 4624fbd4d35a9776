"""A user's own GGUF models, added by `mem models add PATH`: a 1-3B instruct model writes the `facts`
form far better than the tiny default. They are named in `user-models.yaml` in the models folder (the
file stays where it is: models are large), and from then on serve wherever a registry name does
(`models: {compress: NAME}` in mem.yaml, `mem models list`, `mem models path NAME`).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from memcli.errors import InputError, ModelError
from memcli.util.fsutil import atomic_write
from memcli.util.paths import models_dir

INDEX_FILE = "user-models.yaml"
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def load() -> dict[str, dict]:
    """name -> {path, role, description} for every model the user added."""
    path = models_dir() / INDEX_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        return {}
    except (OSError, yaml.YAMLError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from None
    return {str(k): v for k, v in data.items() if isinstance(v, dict) and v.get("path")}


def add(file: Path, name: str | None = None, reserved: frozenset[str] = frozenset()) -> tuple[str, dict]:
    """Check that `file` is a GGUF chat model (magic, a causal LM, a chat template) and record it under
    a name none of `reserved` (the built-in models) holds."""
    file = file.expanduser().resolve()
    if not file.is_file():
        raise InputError(f"{file} is not a file")
    with file.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ModelError(f"{file} is not a GGUF file (it does not start with the GGUF magic)")
    meta = _metadata(file)
    arch = meta.get("general.architecture", "?")
    if f"{arch}.pooling_type" in meta or meta.get(f"{arch}.attention.causal") is False:
        raise ModelError(f"{file} is an embedding model ({arch}); compression needs an instruct (chat) model")
    if not meta.get("tokenizer.chat_template"):
        raise ModelError(f"{file} has no chat template (tokenizer.chat_template): it is not an instruct model, "
                         "and `facts` needs one")
    name = (name or file.stem).lower()
    if not NAME.match(name):
        raise InputError(f"model name {name!r}: use lower-case letters, digits, '.', '_' and '-'")
    if name in reserved:
        raise InputError(f"{name!r} is a built-in model's name; choose another with --name")
    entry = {"path": str(file), "role": "compress",
             "description": f"{meta.get('general.name') or file.stem} ({arch}), added by mem models add"}
    models = load()
    models[name] = entry
    _save(models)
    return name, entry


def forget(name: str) -> bool:
    """Drop a user model's name (its file stays); False when there was none."""
    models = load()
    if models.pop(name, None) is None:
        return False
    _save(models)
    return True


def _save(models: dict) -> None:
    folder = models_dir()
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / INDEX_FILE, yaml.safe_dump(models, sort_keys=True, allow_unicode=True))


def _metadata(file: Path) -> dict:
    """The GGUF's scalar metadata (architecture, name, chat template, pooling), read without loading
    the weights."""
    from gguf import GGUFReader, GGUFValueType

    try:
        reader = GGUFReader(file)
    except Exception as exc:  # noqa: BLE001 - any parse failure means the same: not a usable GGUF
        raise ModelError(f"{file} is not a readable GGUF file: {exc}") from None
    return {name: field.contents() for name, field in reader.fields.items()
            if field.types and field.types[0] != GGUFValueType.ARRAY}
