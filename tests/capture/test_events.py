"""Each client's payloads become the same event record; unknown fields are ignored."""

from __future__ import annotations

import pytest
from payloads import claude, claude_bash, codex, gemini

from memcli.capture.events import BadPayload, event_key, normalise, strip_private


def test_claude_code_tool_event_names_the_tool_its_input_and_output(tmp_path):
    record = normalise(claude_bash(tmp_path, "pytest -q", "3 passed"))
    assert record["client"] == "claude-code"
    assert (record["event"], record["tool"], record["input"]["command"]) == ("tool", "Bash", "pytest -q")
    assert record["output"]["stdout"] == "3 passed" and record["tool_use_id"] == "toolu_01"


def test_claude_code_failure_stop_and_session_end_are_read():
    failure = normalise(claude("PostToolUseFailure", "/p", tool_name="Bash", tool_input={"command": "make"},
                               error="exit 2", tool_use_id="t"))
    assert failure["failed"] and failure["error"] == "exit 2"
    stop = normalise(claude("Stop", "/p", last_assistant_message="Fixed the parser.", stop_hook_active=False))
    assert (stop["event"], stop["message"]) == ("stop", "Fixed the parser.")
    end = normalise(claude("SessionEnd", "/p", reason="logout"))
    assert (end["event"], end["reason"]) == ("session_end", "logout")
    start = normalise(claude("SessionStart", "/p", source="compact"))
    assert (start["event"], start["reason"]) == ("session_start", "compact")


def test_codex_events_carry_their_turn_and_are_named_codex():
    record = normalise(codex("PostToolUse", "/p", turn_id="turn-3", tool_name="shell", tool_use_id="call_1",
                             tool_input={"command": ["bash", "-lc", "ls"]}, tool_response="a\nb"))
    assert (record["client"], record["turn_id"], record["tool"]) == ("codex", "turn-3", "shell")
    prompt = normalise(codex("UserPromptSubmit", "/p", turn_id="turn-1", prompt="add a flag"))
    assert prompt["prompt"] == "add a flag"


def test_gemini_after_tool_reads_llm_content_and_error():
    record = normalise(gemini("AfterTool", "/p", tool_name="run_shell_command", tool_input={"command": "ls"},
                              tool_response={"llmContent": "x.py", "returnDisplay": "x.py", "error": None}))
    assert (record["client"], record["event"], record["output"], record["failed"]) == ("gemini", "tool", "x.py", False)
    failed = normalise(gemini("AfterTool", "/p", tool_name="read_file", tool_input={"file_path": "y"},
                              tool_response={"llmContent": "", "error": {"message": "no such file"}}))
    assert failed["failed"] and failed["error"] == "no such file"
    assert normalise(gemini("BeforeAgent", "/p", prompt="why?"))["event"] == "prompt"
    assert normalise(gemini("PreCompress", "/p", trigger="auto"))["event"] == "compact"


def test_generic_record_and_event_named_on_the_command_line():
    record = normalise({"session": "s", "cwd": "/p", "tool": "deploy", "input": {"env": "prod"}, "output": "ok",
                        "unknown_field": 1}, event="tool")
    assert (record["client"], record["tool"], record["output"]) == ("hook", "deploy", "ok")
    assert "unknown_field" not in record


@pytest.mark.parametrize("payload", [None, [], "text", {"hook_event_name": "Nope"}, {"session_id": "s"}])
def test_what_is_not_an_event_is_a_bad_payload(payload):
    with pytest.raises(BadPayload):
        normalise(payload)


def test_private_spans_are_removed_even_unclosed():
    cleaned, count = strip_private({"a": "keep <private>drop</private> this", "b": ["x <PRIVATE>to the end"]})
    assert cleaned == {"a": "keep  this", "b": ["x "]} and count == 2


def test_private_text_in_a_mapping_key_is_removed_too():
    cleaned, count = strip_private({"input": {"<private>db root pw Xk3-lamp</private>": 1, "cmd": "ls"}})
    assert cleaned == {"input": {"": 1, "cmd": "ls"}} and count == 1


@pytest.mark.parametrize("text, kept", [
    ("Xk3-lamp is the root password</private> and the build passed", " and the build passed"),
    ("a <private>x</private> b </private> c", " c"),  # a lone closer: all before it may have been inside
    ("a <private>x <private>y</private> z</private> b", "a  b"),  # nested: closed by the outermost tag
    ("a < PRIVATE >x</ private > b", "a  b"),
    ("no spans, only the word private", "no spans, only the word private"),
])
def test_text_that_starts_inside_a_private_span_loses_what_was_inside(text, kept):
    assert strip_private({"output": text})[0] == {"output": kept}


def test_a_span_opened_in_one_field_takes_the_fields_up_to_where_it_closes():
    cleaned, count = strip_private({"a": "x <private>s1", "b": "s2", "c": ["s3</private> kept"], "d": "after"})
    assert cleaned == {"a": "x ", "b": "", "c": [" kept"], "d": "after"} and count == 1
    cleaned, _ = strip_private({"input": {"<private>token": "s9", "cmd": "ls"}, "output": "done"})
    assert cleaned == {"input": {"": "", "cmd": ""}, "output": ""}  # never closed: the rest of the record


def test_the_same_tool_call_has_one_key_whatever_else_differs(tmp_path):
    one = normalise(claude_bash(tmp_path, "ls", "a"))
    two = dict(normalise(claude_bash(tmp_path, "ls", "a")), at=5)
    assert event_key(one) == event_key(two)
    assert event_key(one) != event_key(normalise(claude_bash(tmp_path, "ls", "a", tool_use_id="toolu_02")))


def test_what_claude_code_really_sent_is_read_as_claude_code_events():
    from payloads import RECORDED_CLAUDE_CODE

    start, prompt, end = (normalise(p) for p in RECORDED_CLAUDE_CODE)
    assert {start["client"], prompt["client"], end["client"]} == {"claude-code"}
    assert (start["event"], start["reason"]) == ("session_start", "startup")
    assert (prompt["event"], prompt["prompt"]) == ("prompt", "say hi")
    assert (end["event"], end["reason"]) == ("session_end", "other")


def test_the_same_prompt_twice_in_a_session_is_two_events():
    from payloads import RECORDED_CLAUDE_CODE

    once = normalise(RECORDED_CLAUDE_CODE[1])
    again = normalise(dict(RECORDED_CLAUDE_CODE[1], prompt_id="f0000000-0000-0000-0000-000000000000"))
    assert event_key(once) != event_key(again)


def test_gemini_shell_output_and_exit_code_are_read_from_what_the_model_got():
    record = normalise(gemini("AfterTool", "/p", tool_name="run_shell_command", tool_input={"command": "make"},
                              tool_response={"llmContent": "<untrusted_context>\nOutput: boom\nError: x\nExit Code: 4\n"
                                                           "Process Group PGID: 9\n</untrusted_context>",
                                             "returnDisplay": "boom"}))
    assert (record["output"], record["exit_code"], record["failed"]) == ("boom\nError: x", 4, True)


def test_claude_code_edit_keeps_its_hunks_but_not_the_whole_original_file():
    record = normalise(claude("PostToolUse", "/p", tool_name="Edit", tool_use_id="t", tool_input={"file_path": "/p/a"},
                              tool_response={"filePath": "/p/a", "originalFile": "x" * 10_000,
                                             "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1,
                                                                  "newLines": 1, "lines": ["-a", "+b"]}]}))
    assert "originalFile" not in record["output"] and record["output"]["structuredPatch"][0]["lines"] == ["-a", "+b"]


def test_codex_apply_patch_keeps_the_patch_it_sends_as_its_command():
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
    record = normalise(codex("PostToolUse", "/p", turn_id="t", tool_name="apply_patch", tool_use_id="c",
                             tool_input={"command": patch}, tool_response="Success."))
    assert record["input"] == {"command": patch} and not record["failed"]


def test_codex_apply_patch_answer_gives_its_exit_code_and_its_output():
    record = normalise(codex("PostToolUse", "/p", turn_id="t", tool_name="apply_patch", tool_use_id="c",
                             tool_input={"command": "*** Begin Patch\n*** End Patch\n"},
                             tool_response="Exit code: 1\nWall time: 0 seconds\nOutput:\nverification failed\n"))
    assert (record["exit_code"], record["failed"], record["output"]) == (1, True, "verification failed\n")


def test_two_identical_gemini_tool_calls_without_an_id_are_two_events(tmp_path):
    call = {"tool_name": "run_shell_command", "tool_input": {"command": "make test"},
            "tool_response": {"llmContent": "Output: ok", "returnDisplay": "ok"}}
    first = normalise(gemini("AfterTool", tmp_path, **call))
    again = normalise(gemini("AfterTool", tmp_path, **call))  # a second delivery of the same event
    later = normalise({**gemini("AfterTool", tmp_path, **call), "timestamp": "2026-12-05T09:05:00Z"})
    assert event_key(first) == event_key(again) != event_key(later)


def test_nul_and_control_characters_become_a_visible_mark_and_the_text_stays():
    record, _ = strip_private({"output": "binary\x00file\x07 with\ttabs\r\nand lines", "input": {"k\x01": "v"}})
    assert record == {"output": "binary\ufffdfile\ufffd with\ttabs\r\nand lines", "input": {"k\ufffd": "v"}}


def test_a_huge_tool_output_is_cut_to_its_head_and_tail_before_anything_reads_it():
    from memcli.capture.events import clipped

    lines = [f"line {n}" for n in range(200_000)]
    record = clipped({"event": "tool", "prompt": "p" * 50_000, "output": {"stdout": "\n".join(lines)},
                      "input": {"command": "cat big.log"}}, 1000)
    out = record["output"]["stdout"]
    assert len(out) <= 1100 and out.startswith("line 0\n") and out.endswith("line 199999")
    assert "lines left out" in out and record["prompt"] == "p" * 50_000


def test_text_within_the_room_is_kept_as_sent_leading_spaces_and_all():
    from memcli.capture.events import clipped

    hunk = {"lines": [" line 18", "-    return a - b", "+    return a + b", " line 22"]}
    assert clipped({"output": {"structuredPatch": [hunk]}}, 1000)["output"] == {"structuredPatch": [hunk]}


@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_cut_never_splits_a_private_key_block(where):
    from memcli.capture.events import clipped

    block = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(["QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo="] * 300) + \
        "\n-----END RSA PRIVATE KEY-----"
    filler = "\n".join(f"log line {n}" for n in range(3000))
    text = f"{block}\n{filler}" if where == "head" else f"{filler}\n{block}"
    out = clipped({"output": text}, 4000)["output"]
    assert "QUJDREVG" not in out and "log line" in out


@pytest.mark.parametrize("output, failed", [
    ("--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1 want 2\nFAIL\nFAIL\texample.com/p\t0.003s", True),
    ("  1 passing (4ms)\n  1 failing\n\n  1) parser\n     AssertionError: expected 1 to equal 2", True),
    ("Tests:       1 failed, 4 passed, 5 total", True),
    ("FAILED tests/test_a.py::test_b - assert 1 == 2\n1 failed, 11 passed in 0.42s", True),
    ("test result: FAILED. 1 passed; 1 failed; 0 ignored", True),
    ("ok  \texample.com/p\t0.003s", False),
    ("  3 passing (4ms)", False),
    ("12 passed in 0.40s", False),
    ("0 failed, 12 passed", False),
])
def test_a_test_runs_own_verdict_says_it_failed_when_the_client_sends_no_exit_code(output, failed):
    from memcli.capture.observe import observe

    record = normalise(codex("PostToolUse", "/p", turn_id="t", tool_name="shell", tool_use_id="c",
                             tool_input={"command": ["bash", "-lc", "go test ./..."]}, tool_response=output))
    assert observe(record, 4000).failed is failed
