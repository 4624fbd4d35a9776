"""The folder an assistant works in, with its own store (.mem/): hooks find the store from the payload's
cwd, so MEM_DIR is unset."""

from __future__ import annotations

import pytest
from helpers import ok


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.delenv("MEM_DIR")
    monkeypatch.chdir(root)
    ok("init", ".mem")
    return root
