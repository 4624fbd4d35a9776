"""An edit's diff is widened with lines of the file as it is on disk (memcli.capture.diffs): those lines
never went through the hook's redaction, so the runner redacts what it reads, and reads no ignored file
(issue 53, item 34)."""

from __future__ import annotations

import json

from helpers import ok, open_mem
from payloads import claude
from work_helpers import drain

from memcli.capture.hook import run as hook

TOKEN = "ghp_" + "Zq81Xy72Wv63Ut54Sr45Qp36On27Ml18Kj09"  # made up here, GitHub's shape


def stored() -> str:
    return ok("export").stdout


def test_the_whole_lines_an_edit_is_widened_to_are_redacted(project):
    (project / "config.py").write_text(f'timeout = 9; token = "{TOKEN}"\nretries = 3\n')
    hook(json.dumps(claude("PostToolUse", project, tool_name="Edit", tool_use_id="e1",
                           tool_input={"file_path": str(project / "config.py"), "old_string": "timeout = 5",
                                       "new_string": "timeout = 9"},
                           tool_response={"filePath": str(project / "config.py"), "success": True})))
    drain(open_mem())
    text = stored()
    assert TOKEN not in text and "-timeout = 5" in text and "+timeout = 9" in text

