"""Each kind compressed to its shape, nothing invented, code never altered."""

import json
import re

import dev_samples as samples
from compress_fakes import FakeModel

from memcli.compress import bykind, diffs, guard, structured
from memcli.compress.pipeline import compress


def keep(text):
    return text


def shape(text):
    result = bykind.compress(text, keep)
    assert result.kept_raw == []
    assert guard.invented_tokens(text, result.text) == []
    return result.text


def test_a_diff_keeps_who_why_where_and_the_changed_lines_without_context():
    form = shape(samples.DIFF)
    for kept in ("Author: Ada Lovelace", "Retry uploads with exponential backoff", "2 files changed",
                 "+++ b/src/app/upload.py", "@@ -10,12 +10,16 @@ class Uploader:",
                 '-        return self.client.post("/upload", payload, timeout=5)',
                 "+def test_send_retries_five_times(flaky_client):"):
        assert kept in form
    assert "self.sent = 0" not in form  # an unchanged context line
    assert "index 9c1ce489" not in form
    changed = [r for r in form.split("\n") if re.match(r"^[+-](?![+-]{2} )", r)]
    assert changed and all(r in samples.DIFF.split("\n") for r in changed)


def test_a_pytest_failure_keeps_the_summary_the_failed_test_its_error_and_where():
    form = shape(samples.PYTEST)
    for kept in ("1 failed, 51 passed in 0.84s", "FAILED tests/test_upload.py::test_send_retries_five_times",
                 "E       assert 1 == 5", "tests/test_upload.py:12: AssertionError", "plugins: hypothesis-6.170.17"):
        assert kept in form
    assert "......" not in form and "=====" not in form


def test_a_traceback_keeps_the_exception_and_own_frames_and_counts_library_frames():
    form = shape(samples.TRACEBACK)
    assert form.endswith("yaml.parser.ParserError: while parsing a block mapping")
    assert 'File "/home/dev/src/app/cli.py", line 37, in main' in form
    assert "[... 4 frames in libraries]" in form
    assert "^^^" not in form


def test_a_log_collapses_repeats_keeps_alerts_once_and_the_first_and_last_timestamps():
    form = shape(samples.LOG)
    rows = form.split("\n")
    assert rows[0] == "2026-11-29T23:40:00Z INFO worker started pid=4121"
    assert rows[-1] == "2026-11-29T23:40:36Z INFO worker stopped"
    assert "similar lines]" in form
    assert form.count("WARNING disk usage at 91% on /var/lib/app") == 1 and "[x3]" in form
    assert "ERROR upload failed: timeout after 5s (attempt 5)" in form
    assert len(form) < len(samples.LOG) / 4


def test_a_json_document_is_compacted_with_every_key_and_value():
    form = shape(samples.JSON_DOC)
    assert json.loads(form) == json.loads(samples.JSON_DOC)
    assert "\n" not in form and len(form) < len(samples.JSON_DOC)
    assert structured.same_json(samples.JSON_DOC, form)


def test_code_inside_a_note_is_never_altered():
    result = compress(samples.NOTE_WITH_CODE, lm=FakeModel(), min_chars=0)
    assert result.info["kind"] == "mixed" and "code" in result.info["kinds"]
    code_rows = [r for r in samples.NOTE_WITH_CODE.split("\n") if r.startswith(("def ", "    ", "```"))]
    form_rows = result.text.split("\n")
    assert all(r in form_rows for r in code_rows)
    assert '(payload.get("delay") or 0)' in result.text


def test_the_guard_rejects_an_invented_path():
    raw = "FAILED tests/test_upload.py::test_send - assert 1 == 5\n1 failed in 0.2s"
    reason = guard.check_part(raw, "FAILED tests/test_download.py::test_send\n1 failed in 0.2s", "test_output")
    assert reason and "test_download.py" in reason


def test_a_part_whose_form_the_guard_rejects_stays_raw(monkeypatch):
    monkeypatch.setattr(diffs, "compress", lambda text, prose=None: "+++ b/src/app/invented.py\n+x = 1")
    result = bykind.compress(samples.DIFF, keep)
    assert result.text == samples.DIFF.strip("\n")
    assert result.kept_raw and "invented" in result.kept_raw[0]


def test_compressing_a_diff_records_its_kind():
    result = compress(samples.DIFF * 3, lm=FakeModel())
    assert result.info["status"] == "done"
    assert (result.info["method"], result.info["kind"]) == ("prune", "diff")
    assert result.info["tokens"] < result.info["raw_tokens"]
