"""`mem models add PATH`: a user's own GGUF chat model becomes a compression model by name."""

from __future__ import annotations

import json

import pytest
from helpers import ok, run
from locations import REAL_MODELS_DIR


def write_gguf(path, *, arch="llama", template=True, pooling=False):
    """A GGUF holding metadata only: all `mem models add` reads."""
    import gguf

    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name("Tiny Instruct")
    if template:
        writer.add_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}")
    if pooling:
        writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_an_added_model_is_listed_and_resolves_by_name(tmp_path):
    model = write_gguf(tmp_path / "Tiny-Instruct-Q4_K_M.gguf")
    result = ok("models", "add", model)
    assert result.stdout.strip() == "tiny-instruct-q4_k_m"
    rows = {row["name"]: row for row in json.loads(ok("models", "list", "--json").stdout)}
    row = rows["tiny-instruct-q4_k_m"]
    assert row["role"] == "compress" and row["installed"] and row["path"] == str(model)
    assert ok("models", "path", "tiny-instruct-q4_k_m").stdout.strip() == str(model)
    ok("models", "add", model, "--name", "mine")
    assert ok("models", "path", "mine").stdout.strip() == str(model)


def test_rm_forgets_an_added_model_but_keeps_the_file(tmp_path):
    model = write_gguf(tmp_path / "mine.gguf")
    ok("models", "add", model)
    ok("models", "rm", "mine")
    assert model.is_file()
    assert run("models", "path", "mine").exit_code != 0


@pytest.mark.parametrize("make,message", [
    (lambda p: p.write_bytes(b"not a model at all"), "GGUF magic"),
    (lambda p: write_gguf(p, template=False), "no chat template"),
    (lambda p: write_gguf(p, arch="bert", pooling=True), "embedding model"),
])
def test_files_that_cannot_write_facts_are_refused(tmp_path, make, message):
    path = tmp_path / "x.gguf"
    make(path)
    result = run("models", "add", path)
    assert result.exit_code == 6 and message in result.stderr
    assert not (tmp_path / "models" / "user-models.yaml").exists()


def test_the_name_of_a_builtin_model_is_not_taken(tmp_path):
    result = run("models", "add", write_gguf(tmp_path / "m.gguf"), "--name", "all-minilm-l6-v2")
    assert result.exit_code == 2 and "built-in" in result.stderr
    assert not (tmp_path / "models" / "user-models.yaml").exists()


@pytest.mark.models
def test_the_default_smollm2_file_passes_the_checks(tmp_path):
    model = REAL_MODELS_DIR / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert ok("models", "add", model, "--name", "smol").stdout.strip() == "smol"
    assert ok("models", "path", "smol").stdout.strip() == str(model)  # registered in the test's models folder
