"""A store's own rules never hang a write,
versions never replace each other, an imported or edited text gets the checks a new one gets, ingest keeps
a correction, and doctor's fixes can be typed where doctor ran. Each test is named for what a user sees."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import add, jsonl, memory_files, ok, open_mem, run, store_root, write_tree


def set_settings(**values) -> None:
    path = store_root() / "mem.yaml"
    settings = yaml.safe_load(path.read_text()) | values
    path.write_text(yaml.safe_dump(settings, sort_keys=False))


def write_editor(tmp_path: Path, script: str) -> str:
    editor = tmp_path / "editor.py"
    editor.write_text(f"import sys, pathlib\np = pathlib.Path(sys.argv[1])\nt = p.read_text()\n{script}\n")
    return f"{sys.executable} {editor}"


def current_ids() -> list[str]:
    return [m["id"] for m in jsonl(ok("ls", "--jsonl").stdout)]


# -- a store's redact pattern cannot hang a write ----------------------------------------------

@pytest.mark.timeout(120)
def test_a_redact_pattern_with_nested_repetition_neither_hangs_a_write_nor_misses_its_secret():
    ok("init")
    set_settings(redact=[{"name": "clause", "regex": r"(\w+\s*)+;"}])
    memory_id = add("deploy_notes_for_the_staging_cluster_written_after_the_outage_of_march " * 3)
    assert current_ids() == [memory_id]
    secret = add("release words alpha bravo charlie;")
    assert json.loads(ok("show", secret, "--json", "--raw").stdout)["content"] == "[REDACTED:clause]"


@pytest.mark.timeout(120)
def test_a_redact_pattern_that_runs_too_long_refuses_the_write_and_names_the_pattern():
    ok("init")
    set_settings(redact=[{"name": "ticket", "regex": r"(a|a)+b"}])
    result = run("add", "a" * 40)
    assert result.exit_code == 5
    assert "redact pattern 'ticket'" in result.stderr and "mem.yaml" in result.stderr
    assert "nothing was stored" in result.stderr
    assert memory_files() == []


def test_an_invalid_redact_pattern_is_named_as_soon_as_mem_yaml_is_read():
    ok("init")
    set_settings(redact=[{"name": "half", "regex": r"(unclosed"}])
    report = run("doctor", "--json")
    assert report.exit_code == 1
    store = json.loads(report.stdout)["findings"][0]
    assert store["check"] == "store" and "redact pattern 'half'" in store["message"]
    assert "invalid regex" in store["message"]


@pytest.mark.timeout(120)
def test_a_memignore_line_with_many_stars_decides_a_long_name_at_once(tmp_path):
    ok("init")
    stars = "a*" * 24 + "b"
    (store_root() / ".memignore").write_text(stars + "\n")
    long_name = tmp_path / ("a" * 200 + ".txt")
    long_name.write_text("kept")
    matching = tmp_path / ("a" * 30 + "b")
    matching.write_text("ignored")
    assert run("ignore", "check", long_name).exit_code == 1
    assert run("ignore", "check", matching).exit_code == 0


# -- versions that replace each other -----------------------------------------------------------

def _chain() -> tuple[str, str]:
    first = add("The staging cluster is called kestrel")
    second = ok("update", first, "The staging cluster is called falcon").stdout.strip()
    return first, second


def test_edit_refuses_to_make_a_version_replace_its_own_successor(tmp_path):
    first, second = _chain()
    before = next(p for p in memory_files() if p.stem == first).read_bytes()
    editor = write_editor(tmp_path, f"p.write_text(t + 'supersedes: [{second}]\\n')")
    result = run("edit", first, env={"EDITOR": editor})
    assert result.exit_code == 5
    assert "loop" in result.stderr and second in result.stderr
    assert next(p for p in memory_files() if p.stem == first).read_bytes() == before
    assert current_ids() == [second]


def test_import_refuses_a_record_that_would_close_a_loop_of_versions():
    first, second = _chain()
    path = next(p for p in memory_files() if p.stem == first)
    gone = yaml.safe_load(path.read_text())
    path.unlink()  # the old version is missing; the import brings it back naming its successor
    record = gone | {"supersedes": [second]}
    result = run("import", "-", input=json.dumps(record) + "\n")
    assert "loop" in result.stderr
    assert current_ids() == [second]


def test_doctor_names_a_loop_of_versions_and_how_to_break_it():
    first, second = _chain()
    path = next(p for p in memory_files() if p.stem == first)
    data = yaml.safe_load(path.read_text()) | {"supersedes": [second]}
    path.write_text(yaml.safe_dump(data, sort_keys=False))  # a hand edit or a merge made the loop
    assert current_ids() == []
    report = run("doctor", "--json")
    assert report.exit_code == 1
    problems = [f for f in json.loads(report.stdout)["findings"] if not f["ok"]]
    assert [p["check"] for p in problems] == ["versions"]
    assert first in problems[0]["message"] and second in problems[0]["message"]
    assert problems[0]["fix"].startswith(f"mem edit {first}") and second in problems[0]["fix"]


# -- an imported short form passes the guard a made one passes ----------------------------------

RAW = "The deploy of the billing service runs every Tuesday at noon from the ops box in the basement"
FAITHFUL = "deploy of billing service runs every Tuesday at noon from ops box in basement"


def _import(*forms: str) -> tuple[list[str], str]:
    records = [{"id": f"01JDQ4R8ZK3M5N7P9Q1S3T5V7{n}", "raw": RAW.replace("basement", "basement" + "!" * n),
                "compressed": form,
                "compression": {"method": "prune", "status": "done"}} for n, form in enumerate(forms)]
    result = ok("import", "-", input="".join(json.dumps(record) + "\n" for record in records))
    return [json.loads(ok("show", r["id"], "--json").stdout)["content"] for r in records], result.stderr


def test_an_imported_short_form_that_invents_facts_is_dropped_with_the_reason():
    longer = "Deploy of billing runs 42 times each Friday, led by Alice Walker in Berlin from the ops box downstairs"
    shorter = "deploy of billing service runs every Tuesday at noon from ops box, 42 times, by Alice"
    contents, stderr = _import(longer, shorter)
    for content in contents:
        assert "42" not in content and "Alice" not in content
    assert "line 1: its compressed form was dropped (not smaller)" in stderr
    assert "line 2: its compressed form was dropped (" in stderr and "'42'" in stderr


def test_an_imported_faithful_short_form_is_kept_as_given():
    contents, stderr = _import(FAITHFUL)
    assert contents == [FAITHFUL]
    assert "dropped" not in stderr


def test_an_imported_short_form_that_reverses_its_raw_text_is_dropped():
    contents, stderr = _import("deploy of billing service runs every Tuesday at noon from basement in ops box")
    assert "from ops box in basement" in contents[0]  # made again from the raw text
    assert "line 1: its compressed form was dropped (departs from the raw text at 'basement'" in stderr


# -- an edited short form passes the same guard -------------------------------------------------

NEVER = "Never force-push to main, it rewrites the history that everyone else has pulled."


def form_editor(tmp_path: Path, form: str) -> str:
    """An editor that writes `form` as the file's compressed form (a JSON string is a YAML one)."""
    return write_editor(tmp_path, "p.write_text('\\n'.join('compressed: ' + " + repr(json.dumps(form))
                        + " if l.startswith('compressed:') else l for l in t.split('\\n')))")


def test_edit_refuses_a_compressed_form_changed_into_the_opposite(tmp_path):
    memory_id = add(NEVER)
    before = json.loads(ok("show", memory_id, "--json").stdout)["content"]
    assert before == "Never force-push to main, it rewrites history that everyone else has pulled."
    opposite = form_editor(tmp_path, "Always force-push main, it rewrites history")
    result = run("edit", memory_id, env={"EDITOR": opposite})
    assert result.exit_code == 5
    assert "the compressed form does not say what the raw text says (lost 'Never'" in result.stderr
    assert "the edit was not saved, nor kept" in result.stderr
    assert json.loads(ok("show", memory_id, "--json").stdout)["content"] == before


def test_edit_keeps_a_compressed_form_shortened_by_hand_as_the_method_would(tmp_path):
    memory_id = add(NEVER)
    shorter = "Never force-push to main, it rewrites history that everyone else has pulled"
    ok("edit", memory_id, env={"EDITOR": form_editor(tmp_path, shorter)})
    assert json.loads(ok("show", memory_id, "--json").stdout)["content"] == shorter


# -- edit has add's size limit ------------------------------------------------------------------

def test_edit_refuses_a_raw_text_over_max_input_bytes_as_add_does(tmp_path):
    memory_id = add("a short note")
    set_settings(max_input_bytes=100)
    editor = write_editor(tmp_path, "p.write_text(t.replace('a short note', 'y' * 200))")
    result = run("edit", memory_id, env={"EDITOR": editor})
    assert result.exit_code == 2 and "larger than the limit of 100 bytes" in result.stderr
    assert json.loads(ok("show", memory_id, "--json", "--raw").stdout)["content"] == "a short note"


# -- ingest keeps a correction made with `mem update` ----------------------------------

GUIDE = "The staging database is restored every night from the backup taken at two in the morning.\n"
CORRECTED = "The staging database is restored every night from the backup taken at four in the morning."


def _ingested_and_corrected(project: Path) -> tuple[str, str]:
    write_tree(project, {"docs/restore.md": GUIDE})
    ok("ingest", "docs/restore.md")
    chunk = jsonl(ok("ls", "--jsonl").stdout)[0]["id"]
    return chunk, ok("update", chunk, CORRECTED).stdout.strip()


def _by_source(source: str) -> list[dict]:
    return [m for m in jsonl(ok("ls", "--jsonl", "--raw").stdout) if m.get("source") == source]


def test_re_ingesting_an_unchanged_file_keeps_the_correction_and_adds_nothing(project):
    _, corrected = _ingested_and_corrected(project)
    summary = json.loads(ok("ingest", "docs/restore.md", "--json").stdout)
    assert summary["added"] == 0
    assert [m["id"] for m in _by_source("docs/restore.md#1")] == [corrected]
    hits = jsonl(ok("search", "staging database restored backup", "--jsonl").stdout)
    assert [hit["id"] for hit in hits] == [corrected]
    assert ok("doctor").exit_code == 0


def test_a_changed_file_replaces_its_corrected_chunk_with_one_new_version(project):
    _, corrected = _ingested_and_corrected(project)
    write_tree(project, {"docs/restore.md": GUIDE.replace("every night", "every Sunday")})
    ok("ingest", "docs/restore.md")
    now = _by_source("docs/restore.md#1")
    assert [m["content"] for m in now] == [GUIDE.replace("every night", "every Sunday").strip()]
    history = jsonl(ok("show", now[0]["id"], "--history", "--jsonl").stdout)
    assert corrected in [m["id"] for m in history]


def test_doctor_names_two_current_memories_of_one_ingested_chunk_and_ingest_mends_it(project):
    from memcli.core.writing import write_each

    _, corrected = _ingested_and_corrected(project)
    write_each(open_mem(), [(GUIDE.strip(), "docs/restore.md#1")], written_by="ingest")  # what older mem did
    report = run("doctor", "--json")
    assert report.exit_code == 1
    problems = [f for f in json.loads(report.stdout)["findings"] if not f["ok"]]
    assert [p["check"] for p in problems] == ["ingest"]
    assert "docs/restore.md#1" in problems[0]["message"] and corrected in problems[0]["message"]
    assert problems[0]["fix"].startswith("mem ingest docs/restore.md")
    ok(*shlex.split(problems[0]["fix"].split("   ")[0])[1:])
    assert [m["id"] for m in _by_source("docs/restore.md#1")] == [corrected]
    assert ok("doctor").exit_code == 0


# -- doctor's fix for a conflicted file works where doctor ran ---------------------------------

def test_doctors_fix_for_a_conflicted_file_names_paths_that_work_from_the_project_root(project):
    subprocess.run(["git", "init", "-q"], check=True)
    memory_id = add("The staging cluster is called kestrel")
    path = next(p for p in memory_files() if p.stem == memory_id)
    path.write_text("<<<<<<< HEAD\nraw: a\n=======\nraw: b\n>>>>>>> theirs\n")
    report = run("doctor", "--json")
    fix = next(f for f in json.loads(report.stdout)["findings"] if f["check"] == "files")["fix"]
    named = path.relative_to(project).as_posix()
    assert f"edit {named}" in fix and f"git add {named}" in fix
    git_add = fix.rpartition("then `")[2].rstrip("`")
    assert subprocess.run(shlex.split(git_add), capture_output=True).returncode == 0


def test_a_committed_mem_yaml_cannot_point_a_model_at_a_file_of_the_repository(project):
    subprocess.run(["git", "init", "-q"], check=True)
    ok("init")
    (project / "weights.gguf").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 64)
    set_settings(models={"embed": "weights.gguf", "compress": "smollm2-135m-instruct-q4_1"})
    result = run("add", "the staging database listens on 5433")
    assert result.exit_code == 5
    assert "weights.gguf, a file inside the project" in result.stderr
    assert memory_files() == []


def test_a_model_path_outside_the_project_is_the_users_own_choice(project, tmp_path):
    subprocess.run(["git", "init", "-q"], check=True)
    ok("init")
    outside = tmp_path / "models" / "mine.gguf"
    set_settings(models={"embed": str(outside), "compress": "smollm2-135m-instruct-q4_1"})
    assert "a file inside the project" not in run("add", "the staging database listens on 5433").stderr
