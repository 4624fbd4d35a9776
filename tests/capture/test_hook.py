"""`mem hook` never hurts the assistant: exit 0, nothing on stdout but the protocol's JSON, secrets and
private spans never on disk, one stored event for two deliveries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_secrets import aws_access_key, github_token
from helpers import ok, open_mem
from payloads import claude, claude_bash

from work_helpers import drain, waiting_events
from memcli.capture.spool import Spool


def hook(payload, *args, env=None) -> subprocess.CompletedProcess:
    """The hook as a client runs it: a new process, the payload on stdin."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run([sys.executable, "-m", "memcli", "hook", *args], input=data, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=60)


def every_file_text(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file())


def test_malformed_json_exits_0_prints_nothing_and_is_counted(project):
    result = hook("{not json")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert Spool(project / ".mem").state()["errors"] == {"bad payload": 1}
    assert "bad payload" in ok("status").stdout


def test_an_unwritable_store_exits_0_with_nothing_on_stdout(project):
    os.chmod(project / ".mem", 0o500)
    try:
        result = hook(claude_bash(project, "ls", "a"))
    finally:
        os.chmod(project / ".mem", 0o700)
    assert (result.returncode, result.stdout) == (0, "")


def test_a_secret_in_tool_input_or_output_never_reaches_the_disk(project):
    key, token = aws_access_key(), github_token()
    assert hook(claude_bash(project, f"deploy --key {key}", f"GITHUB_TOKEN={token}\ndone")).returncode == 0
    assert hook(claude("UserPromptSubmit", project, prompt=f"use {token} <private>the plan</private>")).returncode == 0
    drain(open_mem())
    ok("ls")
    text = every_file_text(project / ".mem")
    assert key not in text and token not in text and "the plan" not in text
    assert "[REDACTED:" in text


def test_private_text_in_a_key_or_before_a_lone_closing_tag_never_reaches_the_disk(project):
    payload = claude("PostToolUse", project, tool_name="Bash", tool_use_id="toolu_09",
                     tool_input={"command": "make deploy", "<private>vault root Xk3-lamp-77</private>": True},
                     tool_response={"stdout": "hunter2-Qz9 is the staging pw</private>\ndeploy finished"})
    assert hook(payload).returncode == 0
    drain(open_mem())
    text = every_file_text(project / ".mem")
    assert "deploy finished" in text
    assert "Xk3-lamp-77" not in text and "hunter2-Qz9" not in text


def test_a_cut_emoji_or_a_byte_that_is_not_utf8_loses_one_character_not_the_event(project):
    cut = json.dumps(claude("UserPromptSubmit", project, prompt="deploy the api \ud83d"))  # a lone surrogate escape
    assert "\\ud83d" in cut
    assert hook(cut).returncode == 0
    raw = json.dumps(claude("UserPromptSubmit", project, prompt="rotate the keys \xff tonight")).replace("\\u00ff", "\xff")
    done = subprocess.run([sys.executable, "-m", "memcli", "hook"], input=raw.encode("latin-1"), capture_output=True,
                          timeout=60)  # one byte that is not UTF-8, as a client's truncation leaves it
    assert done.returncode == 0 and done.stdout == b""
    assert Spool(project / ".mem").state().get("errors") is None
    drain(open_mem())
    text = every_file_text(project / ".mem")
    assert "deploy the api \ufffd" in text and "rotate the keys \ufffd tonight" in text


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32"])
def test_a_payload_with_a_byte_order_mark_is_read_as_its_mark_says(project, encoding):
    payload = json.dumps(claude("UserPromptSubmit", project, prompt=f"ship the {encoding} build"), ensure_ascii=False)
    done = subprocess.run([sys.executable, "-m", "memcli", "hook"], input=payload.encode(encoding), capture_output=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout == b""
    assert Spool(project / ".mem").state().get("counts", {}).get("bad payload") is None
    drain(open_mem())
    assert f"ship the {encoding} build" in every_file_text(project / ".mem")


def test_two_hooks_delivering_the_same_event_at_once_store_one_observation(project):
    payload = json.dumps(claude_bash(project, "pytest -q", "FAILED tests/test_a.py::test_b - AssertionError"))
    runs = [subprocess.Popen([sys.executable, "-m", "memcli", "hook"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True) for _ in range(2)]
    for run in runs:
        run.stdin.write(payload)
        run.stdin.close()
    assert [run.wait(60) for run in runs] == [0, 0]
    drain(open_mem())
    assert hook(payload).returncode == 0  # delivered again after the drain
    drain(open_mem())
    listed = [json.loads(line) for line in ok("ls", "--tag", "observation", "--jsonl").stdout.splitlines()]
    assert len(listed) == 1 and "pytest" in listed[0]["content"]


def test_session_start_answers_with_the_context_of_earlier_sessions(project):
    for payload in (claude("UserPromptSubmit", project, prompt="Fix the date parser"),
                    claude_bash(project, "pytest -q", "FAILED tests/test_dates.py::test_leap - AssertionError"),
                    claude("Stop", project, last_assistant_message="Fixed it. Still need to update the docs."),
                    claude("SessionEnd", project, reason="exit")):
        assert hook(payload).stdout == ""
    drain(open_mem())
    result = hook(claude("SessionStart", project, session="c2", source="startup"))
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    assert "Fix the date parser" in answer["additionalContext"]
    assert "tests/test_dates.py::test_leap" in answer["additionalContext"]


def test_capture_turned_off_by_the_environment_or_mem_yaml_stores_nothing(project):
    assert hook(claude_bash(project, "ls", "a"), env={"MEM_CAPTURE": "0"}).returncode == 0
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("capture:\n  enabled: false\n")
    assert hook(claude_bash(project, "ls", "b", tool_use_id="t2")).returncode == 0
    assert waiting_events(project / ".mem") == []


def test_events_go_to_the_store_of_the_payloads_cwd(project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    ok("--dir", other / ".mem", "init", other / ".mem")
    assert hook(claude_bash(other, "ls", "a")).returncode == 0
    assert len(waiting_events(other / ".mem")) == 1 and waiting_events(project / ".mem") == []


def test_the_hook_through_the_cli_group_behaves_the_same(project):
    result = ok("hook", "--client", "codex", input="[]")
    assert result.stdout == ""
    assert Spool(project / ".mem").state()["errors"] == {"bad payload": 1}


def test_a_hook_imports_no_model_index_or_cli_code(project):
    probe = ("import io, json, sys\n"
             "sys.stdin = io.StringIO(sys.argv[1])\n"
             "from memcli.entry import main\n"
             "sys.argv = ['mem', 'hook']\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "heavy = {'numpy', 'llama_cpp', 'hnswlib', 'click', 'sqlite3', 'pathspec'}\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe, json.dumps(claude_bash(project, "ls", "a"))],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout == "" and json.loads(done.stderr) == []
    assert len(waiting_events(project / ".mem")) == 1


def test_one_pass_redaction_of_a_record_finds_what_the_gate_finds_field_by_field(project):
    from memcli.capture.hook import screened
    from memcli.privacy.gate import Gate

    key, token = aws_access_key(), github_token()
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA" * 8 + "\n-----END RSA PRIVATE KEY-----"
    record = {"tool": "Bash", "input": {"command": f"deploy --key {key}", "password": "two words",
                                        "env": {"GITHUB_TOKEN": token}},
              "output": {"stdout": f"found\n{pem}\ndone", "lines": [f"token={token}", "plain"]}, "n": 3}
    gate = Gate(project, [])
    fast = screened(gate, record)
    assert fast == gate.screen(record)[0]
    text = json.dumps(fast)
    assert key not in text and token not in text and "two words" not in text and "MIIEowIBAAKCAQEA" not in text
    assert fast["output"]["lines"][1] == "plain" and fast["n"] == 3


def test_an_unknown_event_name_holding_a_token_is_counted_redacted(project):
    token = github_token()
    for name in (token, f"Weird{token}", f"<{token}>"):
        assert hook(claude(name, project)).returncode == 0
    state = (project / ".mem" / ".capture" / "state.json").read_text()
    status = ok("status").stdout + ok("status", "--json").stdout
    assert token not in state and token not in status and "bad payload" in status


def test_a_payload_nested_five_thousand_deep_exits_0_and_is_counted(project):
    deep = '{"hook_event_name": "PostToolUse", "cwd": "%s", "tool_input": %s}' % (project, "[" * 5000 + "]" * 5000)
    result = hook(deep)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    nested = {"hook_event_name": "PostToolUse", "cwd": str(project), "tool_name": "Bash", "tool_input": {}}
    inner = nested["tool_input"]
    for _ in range(900):  # deep, yet within what the JSON reader takes
        inner["a"] = {}
        inner = inner["a"]
    result = hook(nested)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_a_tool_output_holding_nul_bytes_is_kept_not_set_aside(project):
    hook(claude_bash(project, "cat build.bin", "ELF\x00\x00\x01 header then the words nightly export"))
    drain(open_mem())
    found = ok("search", "nightly export", "--jsonl").stdout
    assert "nightly export" in found
    from memcli.store.queue import WorkQueue

    assert WorkQueue(project / ".mem").parked() == [] and not (project / ".mem" / ".queue" / "bad").exists()


def test_a_relay_whose_server_takes_the_payload_but_never_answers_does_not_do_the_work_again(project, monkeypatch):
    import socket

    from memcli.capture import hook as own_work
    from memcli.capture import hook_socket, relay

    (project / ".mem" / ".capture").mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(project / ".mem" / ".capture" / "hook.sock"))
    server.listen(4)  # never accepts: the payload waits in the backlog, no answer comes
    monkeypatch.setattr(hook_socket, "TIMEOUT_S", 0.05)
    monkeypatch.setattr(own_work, "run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("done twice")))
    try:
        assert relay.handle(json.dumps(claude_bash(project, "make", "ok")), None, None, None) == ""
    finally:
        server.close()
