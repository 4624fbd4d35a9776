"""Every test runs against a throwaway store, models folder and config folder.

Tests marked `models` need the real default models; `make test` pulls them into the user cache
(or $MEM_TEST_MODELS_DIR) first, and the `real_models` fixture points mem there.
"""

from __future__ import annotations

import os
from pathlib import Path

import fakes as fake_models
import pytest
from locations import REAL_MODELS_DIR



@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch, request):
    monkeypatch.setenv("MEM_DIR", str(tmp_path / "store"))
    monkeypatch.setenv("MEM_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("MEM_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MEM_CAPTURE_DRAIN", "0")  # a hook starts no detached runner (tests run the queue in-process)
    monkeypatch.setenv("MEM_BACKGROUND", "0")  # nor does a write or a thread append
    monkeypatch.delenv("MEM_CAPTURE", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    real = request.node.get_closest_marker("models") is not None
    monkeypatch.setattr(fake_models, "current", None if real else fake_models.providers())
    return tmp_path


@pytest.fixture
def fakes():
    """The fake compressor and embedder the current test uses (to inspect what they were given)."""
    return fake_models.current.compressor, fake_models.current.embedder("any")


@pytest.fixture
def use_providers(monkeypatch):
    """`use_providers(embedder=..., compressor=...)` swaps providers for the rest of the test: the CLI
    (tests/support/helpers.run) and `open_mem()` get them."""
    import dataclasses

    def swap(**changes):
        monkeypatch.setattr(fake_models, "current", dataclasses.replace(fake_models.current, **changes))

    return swap


@pytest.fixture
def real_models(monkeypatch) -> Path:
    """The folder holding the real default models, as pulled by `make test`."""
    monkeypatch.setenv("MEM_MODELS_DIR", str(REAL_MODELS_DIR))
    return REAL_MODELS_DIR


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project with its store in .mem/ (so the project folder is the store's home), as the cwd."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("MEM_DIR", str(root / ".mem"))
    monkeypatch.chdir(root)
    return root
