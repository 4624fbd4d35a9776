"""Issue 42, items 1-14: no secret stored or sent. Each test is named for what a user would see go wrong
(a key reaching the server's request log, a password cut short in a file, a setting read the wrong way)."""

from __future__ import annotations

import json

import fake_secrets as fs
import yaml
from helpers import add, memory_files, ok, run, store_root
from provider_helpers import GOOD_LINE, NOTE, stored, use_server
from script_server import ScriptServer

from memcli.privacy.redact import redact


def edit_raw(memory_id: str, extra: str) -> None:
    """A hand edit or a merge: text appended to a memory's file behind the write-time gate."""
    path = next(p for p in memory_files() if p.stem == memory_id)
    data = yaml.safe_load(path.read_text())
    data["raw"] += extra
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def set_settings(**values) -> None:
    path = store_root() / "mem.yaml"
    settings = yaml.safe_load(path.read_text()) | values
    path.write_text(yaml.safe_dump(settings, sort_keys=False))


# -- item 1: a cut-off SSH2 key block is never sent ------------------------------------------------------

def test_compress_never_sends_an_ssh2_key_block_cut_before_its_end_line():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        memory_id = add(NOTE, "--defer")
        block = "\n".join(["---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----", *fs.key_body()])
        edit_raw(memory_id, "\n" + block)
        ok("compress", "--pending")
    assert server.requests == []
    info = stored(memory_id)["compression"]
    assert info["status"] == "quarantined" and "private-key" in info["reason"]
