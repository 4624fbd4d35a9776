"""Compression through a real OpenAI-compatible server: llama-cpp-python's own, on 127.0.0.1, serving
the default SmolLM2 model. A 135M model writes poor facts: the tests show the request it got, what
the guard made of the reply, the fallback to prune on the local model and the reason recorded."""

from __future__ import annotations

import json

import pytest
from helpers import add, jsonl, ok
from llama_server import serve
from locations import REAL_MODELS_DIR
from provider_helpers import NOTE, stored, use_server

from memcli.compress import guard
from memcli.compress.keyvalues import KEYS
from memcli.providers.protocols import Deadline
from memcli.providers.settings import ProviderSettings

pytestmark = pytest.mark.models

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SLOW_MACHINE = {"compress_timeout_s": 600}  # 2 shared cores: a grammar-held reply can take a minute


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    with serve(REAL_MODELS_DIR / MODEL_FILE, tmp_path_factory.mktemp("llama-server") / "server.log") as base_url:
        yield base_url


def test_the_server_writes_a_grammar_held_line(llama_server, real_models, tmp_path):
    from memcli.compress.remote import RemoteCompressor
    from memcli.core import engines

    settings = ProviderSettings(name="llamacpp", base_url=llama_server, model="smollm2", constrain="grammar",
                                timeout_seconds=300)
    compressor = RemoteCompressor(settings, tmp_path / ".index", engines.local(), "smollm2-135m-instruct-q4_1")
    line = compressor.facts(NOTE, Deadline(600))
    pairs = line.split(" | ")
    assert line and all(pair.split("=", 1)[0] in KEYS for pair in pairs)  # the grammar held the format
    assert compressor.status()["requests_last_minute"] == 1 and compressor.status()["circuit"] == "closed"


def test_a_write_through_the_server_keeps_the_guard_and_falls_back(llama_server, real_models):
    use_server(llama_server, SLOW_MACHINE, name="llamacpp", model="smollm2", constrain="grammar",
               timeout_seconds=300, max_retries=0)
    memory_id = add(NOTE)
    memory = stored(memory_id)
    info = memory["compression"]
    status = json.loads(ok("status", "--json").stdout)
    assert status["requests_last_minute"] == 1 and status["last_error"] is None  # one request, answered
    assert memory["raw"] == NOTE and info["status"] == "done"
    if info["method"] == "facts":  # the guard let the line through
        assert not guard.missing_spans(NOTE, memory["compressed"]) and "reason" not in info
    else:  # the usual outcome: the line was rejected and the local model pruned the text
        assert info["method"] == "prune" and info["model"] == "smollm2-135m-instruct-q4_1"
        assert info["reason"].startswith("facts from llamacpp:smollm2 rejected: ")
        assert len(memory["compressed"]) < len(NOTE)


def test_a_constraint_the_server_cannot_take_leaves_the_job_pending_with_its_answer(llama_server, real_models):
    # llama-cpp-python's server takes response_format json_object, not json_schema, and says so with a 500:
    # a server error, so the job waits for a later try rather than falling back.
    use_server(llama_server, SLOW_MACHINE, model="smollm2", constrain="json_schema", timeout_seconds=60)
    memory_id = add(NOTE)
    memory = stored(memory_id)
    assert memory["raw"] == NOTE and memory["compressed"] is None
    info = memory["compression"]
    assert info["status"] == "pending" and info["reason"].startswith("server: HTTP 500")
    assert "json_object" in info["reason"]
    status = json.loads(ok("status", "--json").stdout)
    assert status["pending"] == 1 and "json_object" in status["last_error"]["reason"]


def test_a_thread_summary_from_the_server_invents_nothing(llama_server, real_models):
    from thread_helpers import chat, new_thread, replay

    use_server(llama_server, {**SLOW_MACHINE, "thread_summarize_every": 50}, name="llamacpp", model="smollm2",
               timeout_seconds=300, max_retries=0)
    thread_id = new_thread()
    replay(thread_id, chat(11))  # not due with 50: folded below, in the foreground
    assert "folded messages 1-10" in ok("thread", "summarize", thread_id, "--force").stderr
    status = json.loads(ok("status", "--json").stdout)
    assert status["requests_last_minute"] == 1 and status["last_error"] is None  # the server wrote one
    summary = next(row["summary"] for row in jsonl(ok("thread", "show", thread_id, "--jsonl").stdout) if "summary" in row)
    turns = "\n".join(f"{m.get('name', m['role'])}: {m['content']}" for m in chat(10))
    assert not guard.invented_facts(turns, summary.split("\n", 1)[1])  # the server's, or the extractive one
