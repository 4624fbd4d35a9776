"""Knowing what a text is made of: the kind of each part, found without a model."""

import time

import dev_samples as samples
import pytest

from memcli.compress.kinds import detect, segments

TABLE = "| service | p95 ms | owner |\n|---|---|---|\n| billing | 120 | ana |\n| search | 340 | bo |"
SHELL = "$ git status --short\n M src/app/upload.py\n?? scratch.py\n$ wc -l src/app/upload.py\n  88 src/app/upload.py"
CODE = "import os\n\n\ndef home() -> str:\n    \"\"\"Where the user's files live.\"\"\"\n    return os.environ.get('HOME', '/')\n"
PROSE = ("We chose Postgres rather than MongoDB because the data is relational. Keep the read replica "
         "for reports that run longer than five minutes.")
MARKDOWN = "## Running\n\n- Start the worker before the web process.\n- Stop it only after the queue is empty."


@pytest.mark.parametrize("text, kind", [
    (samples.DIFF, "diff"), (samples.PYTEST, "test_output"), (samples.TRACEBACK, "traceback"),
    (samples.LOG, "log"), (samples.JSON_DOC, "json"), (TABLE, "table"), (SHELL, "shell"), (CODE, "code"),
    (PROSE, "prose"), (MARKDOWN, "markdown"),
])
def test_each_kind_of_text_is_recognised(text, kind):
    assert detect(text) == kind


def test_a_captured_tool_run_is_a_prose_header_and_the_output_of_its_own_kind():
    parts = segments(samples.CAPTURED)
    assert [p.kind for p in parts] == ["prose", "test_output"]
    assert detect(samples.CAPTURED) == "mixed"


def test_a_note_with_code_keeps_its_code_apart_from_its_prose():
    parts = segments(samples.NOTE_WITH_CODE)
    assert [p.kind for p in parts] == ["prose", "code", "prose", "code"]
    assert parts[1].lang == "python"


@pytest.mark.parametrize("text", [samples.DIFF, samples.CAPTURED, samples.NOTE_WITH_CODE, SHELL, MARKDOWN])
def test_the_segments_are_the_text_cut_into_pieces(text):
    assert "\n".join(p.text for p in segments(text)) == text


def test_detecting_a_long_text_needs_no_model_and_no_real_time():
    text = (samples.LOG + "\n") * 12  # about 16 KB
    started = time.perf_counter()
    assert detect(text) == "log"
    assert time.perf_counter() - started < 1.0  # a bound against a runaway, not the speed figure (bench/)
