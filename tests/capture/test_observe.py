"""A tool event as an observation's text: what ran, on which files, whether it failed, its output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcli.capture.observe import observe, paths_of


def tool(name, tool_input, output="", **extra):
    return {"tool": name, "input": tool_input, "output": output, "error": "", "failed": False, "cwd": "/p", **extra}


def test_a_shell_run_whose_output_reports_failures_is_marked_failed():
    found = observe(tool("Bash", {"command": "pytest -q"}, {"stdout": "F.\nFAILED t.py::x - boom\n1 failed, 1 passed"}),
                    6000)
    assert found.failed and found.command == "pytest -q"
    assert found.text.startswith("Bash: ran `pytest -q` (failed)") and "FAILED t.py::x - boom" in found.text
    assert not observe(tool("Bash", {"command": "ls"}, {"stdout": "a.py"}), 6000).failed


def test_an_edit_becomes_a_diff_of_the_file_relative_to_the_session_folder():
    found = observe(tool("Edit", {"file_path": "/p/src/a.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}), 6000)
    assert found.files_changed == ["src/a.py"]
    assert "--- a/src/a.py" in found.text and "-x = 1" in found.text and "+x = 2" in found.text


def test_codex_apply_patch_names_the_files_it_touches():
    patch = "*** Begin Patch\n*** Update File: src/b.py\n@@\n-old\n+new\n*** Add File: docs/c.md\n+hi\n*** End Patch"
    record = tool("apply_patch", {"input": patch})
    assert paths_of(record) == ["src/b.py", "docs/c.md"]
    assert observe(record, 6000).files_changed == ["src/b.py", "docs/c.md"]


def test_a_long_output_keeps_its_head_and_its_tail():
    lines = "\n".join(f"line {n}" for n in range(2000)) + "\nERROR the end"
    text = observe(tool("run_shell_command", {"command": "make"}, lines), 600).text
    assert "line 0" in text and "ERROR the end" in text and "lines left out" in text and len(text) < 800


FIXTURES = Path(__file__).parent / "fixtures"
CALC = "".join(f"# line {n}\n" for n in range(1, 20)) + "\ndef add(a, b):\n    return a + b\n\n# end\n"


def recorded(name: str, cwd: Path) -> dict:
    """A client's tool-event payload (fixtures/SOURCES says where its shape comes from), read as the hook
    reads it, for a session in `cwd`."""
    from memcli.capture.events import normalise

    return normalise(json.loads((FIXTURES / f"{name}.json").read_text().replace("{cwd}", str(cwd))))


def session_folder(tmp_path: Path) -> Path:
    """The files as they are after the recorded edits."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src/calc.py").write_text(CALC)
    (tmp_path / "src/new_name.py").write_text("VALUE = 2\n")
    return tmp_path


def test_claude_code_edit_is_the_diff_of_its_structured_patch_at_its_line(tmp_path):
    found = observe(recorded("claude_code_edit", session_folder(tmp_path)), 6000)
    assert found.files_changed == ["src/calc.py"]
    assert "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -20,3 +20,3 @@\n \n def add(a, b):\n-    return a - b\n+    return a + b" \
        in found.text


def test_an_edit_without_its_patch_is_placed_in_the_file_and_its_lines_kept_apart(tmp_path):
    cwd = session_folder(tmp_path)
    found = observe(tool("Edit", {"file_path": str(cwd / "src/calc.py"), "old_string": "a - b", "new_string": "a + b"},
                         {"filePath": str(cwd / "src/calc.py")}, cwd=str(cwd)), 6000)
    assert "@@ -22 +22 @@\n-    return a - b\n+    return a + b" in found.text


def test_an_edit_at_the_end_of_a_file_without_a_final_newline_says_so(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\nthree and more")
    found = observe(tool("Edit", {"file_path": str(tmp_path / "a.txt"), "old_string": "three", "new_string": "three and more"},
                         cwd=str(tmp_path)), 6000)
    assert "@@ -3 +3 @@\n-three\n\\ No newline at end of file\n+three and more\n\\ No newline at end of file" in found.text


def test_an_edit_the_file_no_longer_holds_says_where_is_unknown_rather_than_a_wrong_line(tmp_path):
    (tmp_path / "a.txt").write_text("changed again since\n")
    found = observe(tool("Edit", {"file_path": str(tmp_path / "a.txt"), "old_string": "x = 1", "new_string": "x = 2"},
                         cwd=str(tmp_path)), 6000)
    assert "@@ -?,1 +?,1 @@ (not found in the file as it is now)\n-x = 1\n+x = 2" in found.text


def test_a_file_outside_the_session_folder_is_never_read_to_place_an_edit(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("top\nx = 2\n")
    (tmp_path / "proj").mkdir()
    found = observe(tool("Edit", {"file_path": str(outside), "old_string": "x = 1", "new_string": "x = 2"},
                         cwd=str(tmp_path / "proj")), 6000)
    assert "not found in the file" in found.text and "top" not in found.text


def test_codex_apply_patch_names_every_file_with_what_it_did_and_places_its_hunks(tmp_path):
    found = observe(recorded("codex_apply_patch", session_folder(tmp_path)), 6000)
    assert found.files_changed == ["src/calc.py", "docs/notes.md", "src/old_name.py", "src/new_name.py", "src/unused.py"]
    assert found.text.startswith("apply_patch: changed src/calc.py, added docs/notes.md, moved src/old_name.py to "
                                 "src/new_name.py, deleted src/unused.py")
    assert "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -21,2 +21,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b" \
        in found.text
    assert "--- /dev/null\n+++ b/docs/notes.md\n@@ -0,0 +1,2 @@\n+# Notes\n+add() adds." in found.text
    assert "--- a/src/old_name.py\n+++ b/src/new_name.py\n@@ -1,1 +1,1 @@\n-VALUE = 1\n+VALUE = 2" in found.text
    assert "--- a/src/unused.py\n+++ /dev/null" in found.text


def test_gemini_replace_is_its_file_diff_named_after_the_file(tmp_path):
    found = observe(recorded("gemini_replace", session_folder(tmp_path)), 6000)
    assert found.files_changed == ["src/calc.py"]
    assert "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -20,3 +20,3 @@\n \n def add(a, b):\n-    return a - b\n+    return a + b" \
        in found.text


@pytest.mark.parametrize("name,code,telling", [
    ("claude_code_bash_failure", 2, "1 failed, 3 passed"),
    ("codex_bash_failure", None, "FAILED tests/test_calc.py::test_add - assert -1 == 3"),
    ("gemini_shell_failure", 4, "expected 3, received -1"),
    ("gemini_shell_failure_silent", 1, None),
])
def test_a_failed_command_keeps_its_output_and_its_exit_code_in_every_client(tmp_path, name, code, telling):
    found = observe(recorded(name, tmp_path), 6000)
    assert found.failed
    head = found.text.splitlines()[0]
    assert f"(failed, exit {code})" in head if code else head.endswith("(failed)")
    if telling:
        assert telling in found.text
    assert "Command exited with code" not in found.text and "untrusted_context" not in found.text


@pytest.mark.parametrize("tool_input, command", [({"cmd": "pytest -q"}, "pytest -q"),
                                                 ({"command": ["bash", "-lc", "pytest -q"]}, "bash -lc 'pytest -q'")])
def test_a_codex_exec_says_the_command_it_ran_whether_cmd_or_an_argv_list(tool_input, command):
    found = observe(tool("exec_command", tool_input, "1 passed"), 6000)
    assert found.command == command and found.text.startswith(f"exec_command: ran `{command}` (ok)")
