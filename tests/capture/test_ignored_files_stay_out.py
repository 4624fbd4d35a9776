"""What a file the denylist excludes holds never reaches a memory through a captured event: not through a
shell command that reads it, a search whose matches come from it, a patch that moves a file onto it, or a
web fetch of it as a local URL."""

from __future__ import annotations

import json

from helpers import ok, open_mem
from payloads import claude, codex, gemini
from work_helpers import drain

from memcli.capture.hook import run as hook

VALUE = "db-password-Zq81"  # a value only the ignored file holds (not a secret shape: redaction would not catch it)


def stored() -> str:
    return ok("export").stdout


def send_and_drain(payload: dict) -> dict:
    hook(json.dumps(payload))
    return drain(open_mem())


def test_a_shell_command_that_reads_an_ignored_file_is_skipped(project):
    for command in ("cat .env", "grep DB .env | head -3", "source .env && echo ok", "docker run --env-file=.env app",
                    "python app.py < .env"):
        done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id=command,
                                     tool_input={"command": command},
                                     tool_response={"stdout": f"DB_PASS={VALUE}", "stderr": ""}))
        assert done["skipped: ignored path"] == 1, command
    assert VALUE not in stored()


def test_a_search_keeps_its_matches_in_kept_files_and_drops_those_in_ignored_ones(project):
    out = f"src/db.py:3:PASSWORD = os.environ['DB_PASS']\n.env:1:DB_PASS={VALUE}\n"
    done = send_and_drain(claude("PostToolUse", project, tool_name="Grep", tool_use_id="g1",
                                 tool_input={"pattern": "DB_PASS", "output_mode": "content"},
                                 tool_response={"mode": "content", "content": out, "numLines": 2}))
    assert done["removed: lines of ignored files"] == 1 and done["stored"] == 1
    text = stored()
    assert VALUE not in text and "src/db.py:3" in text


def test_a_gemini_shell_grep_drops_the_lines_of_ignored_files(project):
    send_and_drain(gemini("AfterTool", project, tool_name="run_shell_command",
                          tool_input={"command": "grep -rn DB_PASS ."},
                          tool_response={"llmContent": f"./.env:1:DB_PASS={VALUE}\n./src/db.py:3:x = 1\n"}))
    assert VALUE not in stored()


def test_a_patch_that_moves_a_file_onto_an_ignored_path_is_skipped(project):
    patch = f"*** Begin Patch\n*** Update File: config.txt\n*** Move to: .env\n@@\n-x\n+DB_PASS={VALUE}\n*** End Patch"
    done = send_and_drain(codex("PostToolUse", project, tool_name="apply_patch", tool_use_id="p1",
                                tool_input={"command": patch}, tool_response="Success."))
    assert done["skipped: ignored path"] == 1 and VALUE not in stored()


def test_a_web_fetch_of_an_ignored_local_file_is_skipped(project):
    done = send_and_drain(claude("PostToolUse", project, tool_name="WebFetch", tool_use_id="w1",
                                 tool_input={"url": f"file://{project}/.env", "prompt": "what is in it"},
                                 tool_response={"result": f"DB_PASS={VALUE}"}))
    assert done["skipped: ignored path"] == 1 and VALUE not in stored()


def test_a_command_that_only_names_an_ignored_folder_is_kept(project):
    (project / ".gitignore").write_text(".venv/\n")
    (project / ".git").mkdir()
    done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id="t1",
                                 tool_input={"command": ".venv/bin/python -m pytest -q"},
                                 tool_response={"stdout": "3 passed", "stderr": ""}))
    assert done["stored"] == 1
