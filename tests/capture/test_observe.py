"""A tool event as an observation's text: what ran, on which files, whether it failed, its output."""

from __future__ import annotations

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
