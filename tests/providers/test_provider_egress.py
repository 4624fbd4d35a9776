"""What reaches a compression server, proven by the server's own request log: facts requests under a
constraint, the guard and the fallback, and the egress gate (quarantine, excluded paths, local-only)."""

from __future__ import annotations

import json

import yaml
from helpers import add, memory_files, ok, store_root
from provider_helpers import GOOD_JSON, GOOD_LINE, NOTE, stored, use_server
from script_server import ScriptServer

from memcli.compress.keyvalues import GRAMMAR, SYSTEM_PROMPT

AWS_KEY = "AKIA" + "Q3EXAMPLE7KEYZZ9"


def test_facts_request_carries_the_prompt_and_the_grammar():
    with ScriptServer([("ok", GOOD_LINE)]) as server:
        use_server(server.base_url, constrain="grammar")
        memory_id = add(NOTE)
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert body["messages"] == [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": NOTE}]
    assert body["grammar"] == GRAMMAR and body["model"] == "scripted" and body["temperature"] == 0.0
    memory = stored(memory_id)
    assert memory["compressed"] == GOOD_LINE
    assert memory["compression"]["model"] == "openai-compatible:scripted"


def test_json_schema_reply_becomes_the_facts_line():
    with ScriptServer([("ok", GOOD_JSON)]) as server:
        use_server(server.base_url, constrain="json_schema")
        memory_id = add(NOTE)
    schema = server.requests[0]["body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["facts"]["items"]["properties"]["key"]["enum"][0] == "TOPIC"
    assert stored(memory_id)["compressed"] == GOOD_LINE


def test_a_line_the_guard_rejects_falls_back_to_local_prune_with_the_reason(fakes):
    invented = GOOD_LINE + " | PERSON=Bob from Google"
    with ScriptServer([("ok", invented)]) as server:
        use_server(server.base_url)
        memory_id = add(NOTE)
    assert len(server.requests) == 1
    info = stored(memory_id)["compression"]
    assert info["method"] == "prune" and info["status"] == "done"  # the local (here: fake) compressor
    assert info["reason"].startswith("facts from openai-compatible:scripted rejected: invented 'Bob', 'Google'")
    assert fakes[0].seen == [NOTE]


def test_a_high_risk_secret_in_a_stored_text_is_quarantined_and_never_sent():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        memory_id = add(NOTE, "--defer")
        # A teammate's file merged by git, or a hand edit: the write-time gate never saw this key.
        path = memory_files()[0]
        data = yaml.safe_load(path.read_text())
        data["raw"] += f" The deploy user key is {AWS_KEY}."
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        ok("compress", "--pending")
        status = json.loads(ok("status", "--json").stdout)
    assert server.requests == []
    info = stored(memory_id)["compression"]
    assert info["status"] == "quarantined" and "aws-access-key" in info["reason"]
    assert status["quarantined"] == 1 and status["pending"] == 0


def test_secrets_found_at_egress_are_redacted_in_what_is_sent():
    with ScriptServer(default=("ok", "TOPIC=billing")) as server:
        use_server(server.base_url)
        add(NOTE + " See ticket INC-4242 for the numbers.", "--defer")
        settings_path = store_root() / "mem.yaml"
        settings = yaml.safe_load(settings_path.read_text())
        settings["redact"] = [{"name": "ticket", "regex": r"INC-\d+"}]  # added after the write
        settings_path.write_text(yaml.safe_dump(settings, sort_keys=False))
        ok("compress", "--pending")
    [sent] = server.sent_texts()
    assert "INC-4242" not in sent and "[REDACTED:ticket]" in sent


def test_a_source_the_denylist_names_is_never_sent():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        memory_id = add(NOTE, "--defer", "--source", "notes/salaries.md")
        (store_root() / ".memignore").write_text("notes/salaries.md\n")
        ok("compress", "--pending")
    assert server.requests == []
    assert stored(memory_id)["compression"] == {"status": "skipped", "reason": "path excluded"}


def test_local_only_memories_are_compressed_here(fakes):
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url)
        memory_id = add(NOTE, "--local-only")
        ok("compress", "--all")
    assert server.requests == []
    memory = stored(memory_id)
    assert memory["send_to_remote"] is False
    assert memory["compression"]["method"] == "prune" and memory["compression"]["model"] == "fake"
    assert fakes[0].seen == [NOTE, NOTE]


def test_send_to_remote_false_keeps_every_memory_here():
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url, send_to_remote=False)
        memory_id = add(NOTE)
    assert server.requests == []
    assert stored(memory_id)["compression"]["status"] == "done"


def test_status_names_the_provider_and_the_queue():
    with ScriptServer([("status", 500, {}), ("ok", GOOD_LINE)]) as server:
        use_server(server.base_url)
        add(NOTE)
        add(NOTE + " More.")
        text = ok("status").stdout
        data = json.loads(ok("status", "--json").stdout)
    assert f"openai-compatible at {server.base_url}" in text
    assert "1 pending, 0 failed, 0 quarantined" in text
    assert "circuit:    closed" in text and "requests:   2 in the last minute" in text
    assert data["model"] == "scripted" and data["method"] == "facts" and data["pending"] == 1
