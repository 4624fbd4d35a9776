"""The store and the everyday commands, as a user at a shell meets them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from helpers import add, jsonl, load_file, memory_files, ok, run, short_id, store_root
from locations import FAKE_MEM

from memcli.cli import memory_cmd
from memcli.store import ids
from memcli.store.folder import Store, find_store

LONG = ("Rate limiting has been the hardest part of the scraper project. Amazon blocks IPs after about 30 "
        "requests per second, so we rotate through a pool of 12 residential proxies and back off "
        "exponentially starting at 250 ms. eBay is more lenient but returns HTTP 429 with a Retry-After "
        "header that we now honour. We never scrape logged-in pages. The crawler runs on a single "
        "Hetzner box with 4 cores and keeps its queue in Redis.")


# -- the store -------------------------------------------------------------------------------------

def test_init_creates_the_layout_and_is_idempotent(tmp_path):
    target = tmp_path / "team-store"
    result = ok("init", target)
    assert result.stdout.strip() == str(target.resolve())
    assert (target / "mem.yaml").is_file()
    assert (target / "memories").is_dir()
    assert ".index/" in (target / ".gitignore").read_text().splitlines()
    settings = yaml.safe_load((target / "mem.yaml").read_text())
    assert settings["compress_min_chars"] == 50
    assert settings["models"] == {"embed": "all-minilm-l6-v2", "compress": "smollm2-135m-instruct-q4_1"}
    (target / "mem.yaml").write_text((target / "mem.yaml").read_text() + "# my note\n")
    again = ok("init", target)
    assert "already exists" in again.stderr
    assert "# my note" in (target / "mem.yaml").read_text()


def test_init_without_directory_uses_mem_dir():
    ok("init")
    assert (store_root() / "mem.yaml").is_file()


def test_init_git_writes_gitattributes(tmp_path):
    ok("init", tmp_path / "s", "--git")
    assert "memories/**/*.yaml text eol=lf diff" in (tmp_path / "s" / ".gitattributes").read_text()


def test_store_resolution_order(tmp_path, monkeypatch):
    project = tmp_path / "project"
    nested = project / "src" / "deep"
    nested.mkdir(parents=True)
    Store(project / ".mem").init()
    monkeypatch.delenv("MEM_DIR")
    assert find_store(cwd=nested) == (project / ".mem").resolve()
    plain = tmp_path / "plain"
    Store(plain).init()
    assert find_store(cwd=plain) == plain.resolve()
    monkeypatch.setenv("MEM_DIR", str(tmp_path / "env-store"))
    assert find_store(cwd=nested) == (tmp_path / "env-store").resolve()
    assert find_store(tmp_path / "explicit", cwd=nested) == (tmp_path / "explicit").resolve()
    monkeypatch.delenv("MEM_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert find_store(cwd=tmp_path) == (tmp_path / "xdg" / "mem").resolve()


def test_path_prints_the_store_in_use(tmp_path):
    assert ok("path").stdout.strip() == str(store_root().resolve())
    assert ok("--dir", tmp_path / "other", "path").stdout.strip() == str((tmp_path / "other").resolve())


def test_reading_a_missing_store_creates_nothing():
    result = ok("ls")
    assert result.stdout == ""
    assert not store_root().exists()


# -- add -------------------------------------------------------------------------------------------

def test_add_prints_an_id_and_writes_the_documented_file():
    memory_id = add("We moved billing from Heroku to Fly.io in March", "-t", "infra", "-t", "billing,ops",
                    "--source", "notes/infra.md")
    assert ids.is_valid(memory_id)
    [path] = memory_files()
    assert path.name == f"{memory_id}.yaml"
    assert path.parent.parent.parent.name == "memories"
    text = path.read_text()
    assert list(load_file(path)) == ["id", "created_at", "updated_at", "tags", "source", "written_by", "raw",
                                     "compressed", "compression"]
    assert "tags: [infra, billing, ops]" in text
    assert "raw: |-\n  We moved billing" in text
    data = load_file(path)
    assert data["source"] == "notes/infra.md" and data["written_by"] == "cli"
    assert data["compressed"] is None and data["compression"]["status"] == "skipped"


def test_add_joins_words_and_reads_stdin_in_three_ways():
    first = add("remember", "the", "milk")
    assert ok("show", first, "--json").stdout and json.loads(ok("show", first, "--json").stdout)["content"] == \
        "remember the milk"
    dash = ok("add", "-", input="from a dash\n").stdout.strip()
    piped = ok("add", "-t", "build", input="from a pipe\n").stdout.strip()
    contents = {m["id"]: m["content"] for m in jsonl(ok("ls", "--jsonl").stdout)}
    assert contents[dash] == "from a dash"
    assert contents[piped] == "from a pipe"


def test_add_from_file_records_the_source(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("# Deploys\nWe deploy on Tuesdays only.\n")
    memory_id = ok("add", "--file", note, "-t", "ops").stdout.strip()
    shown = json.loads(ok("show", memory_id, "--json").stdout)
    assert shown["source"] == str(note)
    assert shown["content"] == "# Deploys\nWe deploy on Tuesdays only."


@pytest.mark.parametrize("text", [
    "Zoë's café in Łódź 🦀🚀 — naïve «quotes» 日本語のテキスト",
    "line one\n  indented line two\n\n\nafter blank lines\n\ttabbed",
    "  starts with spaces and ends with a space ",
    "windows\r\nline endings\r\nkept",
    "key: value # not a comment\n- not a list\n'quotes' and \"doubles\" and \\backslash",
    "null",
])
def test_text_round_trips_byte_for_byte(text):
    memory_id = ok("add", "-", input=text.encode("utf-8")).stdout.strip()
    [path] = memory_files()
    assert load_file(path)["raw"] == text
    assert json.loads(ok("show", memory_id, "--raw", "--json").stdout)["content"] == text
    assert jsonl(ok("export").stdout)[0]["raw"] == text


def test_duplicate_text_is_not_stored_twice():
    first = add("Use ruff for linting", "-t", "python")
    again = ok("add", "  use RUFF for\nlinting ")
    assert again.stdout.strip() == first
    assert "already stored" in again.stderr
    assert len(memory_files()) == 1
    forced = ok("add", "Use ruff for linting", "--allow-duplicate").stdout.strip()
    assert forced != first and len(memory_files()) == 2


def test_add_json_output_follows_the_read_contract():
    result = json.loads(ok("add", "A JSON memory", "--json", "-t", "x").stdout)
    assert result["content"] == "A JSON memory" and "content_raw" not in result and "optimized" not in result
    assert result["tags"] == ["x"] and result["duplicate"] is False


@pytest.mark.parametrize("args, stdin, message", [
    (["add"], "", "empty"),
    (["add", "-"], "   \n\n", "empty"),
    (["add", "--file", "missing.txt"], None, "no such file"),
    (["add", "--file", "."], None, "is a directory"),
    (["add", "-"], b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
    (["add", "-"], b"caf\xe9 latin-1", "binary"),
    (["add", "text", "--file", "x"], None, "not both"),
    (["add", "tagged", "-t", "two words"], None, "spaces"),
])
def test_bad_input_is_refused_and_nothing_is_written(args, stdin, message):
    result = run(*args, input=stdin)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""
    assert memory_files() == []


def test_input_over_the_size_limit_is_refused(tmp_path):
    ok("init")
    settings = store_root() / "mem.yaml"
    settings.write_text(settings.read_text().replace("max_input_bytes: 1048576", "max_input_bytes: 100"))
    result = run("add", "-", input="x" * 101)
    assert result.exit_code == 2 and "larger than the limit of 100 bytes" in result.stderr
    big = tmp_path / "big.txt"
    big.write_text("y" * 5000)
    assert run("add", "--file", big).exit_code == 2
    assert memory_files() == []
    assert ok("add", "-", input="z" * 100).stdout.strip()


def test_long_text_is_compressed_on_add(fakes):
    compressor, _ = fakes
    memory_id = add(LONG)
    shown = json.loads(ok("show", memory_id, "--json").stdout)
    assert shown["optimized"] is True and "content_raw" not in shown
    assert json.loads(ok("show", memory_id, "--json", "--with-raw").stdout) == shown | {"content_raw": LONG}
    assert len(shown["content"]) < len(LONG)
    assert compressor.seen == [LONG]
    raw = json.loads(ok("show", memory_id, "--json", "--raw").stdout)
    assert raw["content"] == LONG and "content_raw" not in raw
    assert ok("add", LONG, "--no-compress", "--allow-duplicate").stdout
    assert compressor.seen == [LONG]


# -- show, ls --------------------------------------------------------------------------------------

def test_show_takes_a_unique_prefix_and_refuses_ambiguous_ones():
    first = add("first memory")
    second = add("second memory")
    common = os.path.commonprefix([first, second])
    unique_first = first[: len(common) + 1]
    assert "first memory" in ok("show", unique_first.lower()).stdout
    ambiguous = run("show", common)
    assert ambiguous.exit_code == 4 and "ambiguous" in ambiguous.stderr
    unknown = run("show", "7ZZZZZZZ")
    assert unknown.exit_code == 4 and "no memory" in unknown.stderr
    assert run("show", "../../etc/passwd").exit_code == 4


def test_a_handle_shorter_than_any_short_id_is_refused_and_a_long_ambiguity_is_counted():
    records = [{"id": ids.new_id(), "raw": f"note number {n}"} for n in range(60)]
    ok("import", input="\n".join(json.dumps(r) for r in records))
    last = records[-1]["id"]
    for handle in (last[-1:], last[-2:]):  # the end of one id, maybe of no other: still no guess
        refused = run("rm", "-y", handle)
        assert refused.exit_code == 4 and "too short" in refused.stderr
    assert len(memory_files()) == 60
    crowded = run("show", os.path.commonprefix([r["id"] for r in records]))
    assert crowded.exit_code == 4 and "matches more than 50 memories" in crowded.stderr


def test_show_human_output_names_the_fields():
    memory_id = add("Deploy with fly deploy --remote-only", "-t", "ops", "--source", "runbook.md")
    text = ok("show", memory_id).stdout
    assert memory_id in text and "ops" in text and "runbook.md" in text
    assert text.rstrip().endswith("Deploy with fly deploy --remote-only")


def test_ls_lists_newest_first_with_filters(tmp_path):
    records = [
        {"id": ids.new_id(), "created_at": "2026-10-01T09:00:00Z", "raw": "october note", "tags": ["a"]},
        {"id": ids.new_id(), "created_at": "2026-11-01T09:00:00Z", "raw": "november note", "tags": ["a", "b"]},
        {"id": ids.new_id(), "created_at": "2026-11-20T09:00:00Z", "raw": "late november note", "tags": ["b"],
         "source": "docs/x.md"},
    ]
    ok("import", input="\n".join(json.dumps(r) for r in records))
    listed = jsonl(ok("ls", "--jsonl").stdout)
    assert [m["content"] for m in listed] == ["late november note", "november note", "october note"]
    assert listed[0] == {"id": listed[0]["id"], "content": "late november note", "tags": ["b"],
                         "source": "docs/x.md", "created_at": "2026-11-20T09:00:00Z"}
    assert set(listed[2]) == {"id", "content", "tags", "created_at"}
    assert [m["content"] for m in json.loads(ok("ls", "--json", "--tag", "a").stdout)] == \
        ["november note", "october note"]
    assert [m["content"] for m in jsonl(ok("ls", "--jsonl", "-t", "a", "-t", "b").stdout)] == ["november note"]
    assert [m["content"] for m in jsonl(ok("ls", "--jsonl", "--since", "2026-11-01").stdout)] == \
        ["late november note", "november note"]
    assert [m["content"] for m in jsonl(ok("ls", "--jsonl", "--until", "2026-11-01").stdout)] == \
        ["november note", "october note"]
    assert [m["content"] for m in jsonl(ok("ls", "--jsonl", "-n", "1").stdout)] == ["late november note"]
    assert [m["content"] for m in jsonl(ok("ls", "--jsonl", "--source", "docs/*").stdout)] == \
        ["late november note"]
    human = ok("ls").stdout
    assert human.index("late november note") < human.index("october note")
    assert "#a #b" in human
    bad = run("ls", "--since", "last tuesday-ish")
    assert bad.exit_code == 2 and "cannot read" in bad.stderr


def test_ls_since_accepts_relative_times():
    add("just now")
    assert [m["content"] for m in jsonl(ok("ls", "--jsonl", "--since", "1h").stdout)] == ["just now"]
    assert jsonl(ok("ls", "--jsonl", "--until", "2d").stdout) == []


# -- rm --------------------------------------------------------------------------------------------

def test_rm_deletes_several_and_never_guesses():
    first, second, third = add("one"), add("two"), add("three")
    common = os.path.commonprefix([first, second, third])
    refused = run("rm", "-y", third, common)
    assert refused.exit_code == 4
    assert len(memory_files()) == 3
    named = short_id(first)
    result = ok("rm", "-y", first, second[:24])
    assert f"deleted {named}" in result.stderr
    assert [m["id"] for m in jsonl(ok("ls", "--jsonl").stdout)] == [third]


def test_rm_asks_on_a_terminal(monkeypatch):
    memory_id = add("keep me unless I say yes")
    monkeypatch.setattr(memory_cmd, "interactive", lambda: True)
    declined = run("rm", memory_id, input="n\n")
    assert declined.exit_code == 1 and "Delete 1 memory?" in declined.stderr
    assert len(memory_files()) == 1
    ok("rm", memory_id, input="y\n")
    assert memory_files() == []


# -- edit ------------------------------------------------------------------------------------------

def write_editor(tmp_path: Path, script: str) -> str:
    editor = tmp_path / "editor.py"
    editor.write_text(f"import sys, pathlib\np = pathlib.Path(sys.argv[1])\nt = p.read_text()\n{script}\n")
    return f"{sys.executable} {editor}"


def test_edit_saves_a_valid_change_and_recompresses(tmp_path, fakes):
    compressor, _ = fakes
    memory_id = add(LONG)
    editor = write_editor(tmp_path, "p.write_text(t.replace('single Hetzner box', 'single Scaleway box', 1)"
                                    ".replace('tags: []', 'tags: [x]'))")  # the raw text, not its form
    result = ok("edit", memory_id, env={"EDITOR": editor})
    assert f"saved {short_id(memory_id)}" in result.stderr
    shown = json.loads(ok("show", memory_id, "--json", "--with-raw").stdout)
    assert "Scaleway" in shown["content_raw"] and "Scaleway" in shown["content"] and "Hetzner" not in shown["content"]
    assert shown["tags"] == ["x"]
    assert len(compressor.seen) == 2
    data = load_file(memory_files()[0])
    assert data["updated_at"] >= data["created_at"]


def test_edit_with_no_change_writes_nothing(tmp_path):
    memory_id = add("unchanged")
    before = memory_files()[0].read_bytes()
    result = ok("edit", memory_id, env={"EDITOR": write_editor(tmp_path, "p.write_text(t)")})
    assert "no change" in result.stderr
    assert memory_files()[0].read_bytes() == before


# -- export and import -----------------------------------------------------------------------------

def test_export_then_import_into_a_new_store_keeps_everything(tmp_path, fakes):
    add("short one", "-t", "a")
    add(LONG, "-t", "b", "--source", "x.md")
    exported = ok("export").stdout
    records = jsonl(exported)
    assert len(records) == 2 and records[0]["raw"] == "short one"
    assert set(records[1]) >= {"id", "created_at", "updated_at", "tags", "source", "written_by", "raw",
                               "compressed", "compression"}
    other = tmp_path / "other"
    result = ok("--dir", other, "import", input=exported)
    assert "imported 2, skipped 0 already stored, 0 invalid" in result.stderr
    assert jsonl(ok("--dir", other, "export").stdout) == records
    again = ok("--dir", other, "import", "--json", input=exported)
    assert json.loads(again.stdout) == {"imported": 0, "duplicates": 2, "invalid": 0, "refused": 0,
                                       "forms_dropped": 0, "redacted": {}}


def test_import_reports_bad_lines_and_keeps_the_good_ones(tmp_path):
    lines = textwrap.dedent("""\
        {"raw": "good one"}
        not json at all
        {"raw": ""}
        ["a list"]

        {"raw": "good two", "created_at": "2025-01-02T03:04:05+02:00", "tags": "solo"}
        """)
    source = tmp_path / "in.jsonl"
    source.write_text(lines)
    result = run("import", source)
    assert result.exit_code == 3
    assert "line 2: not JSON" in result.stderr and "line 3:" in result.stderr and "line 4:" in result.stderr
    listed = jsonl(ok("ls", "--jsonl").stdout)
    assert [m["content"] for m in listed] == ["good one", "good two"]
    assert listed[1]["created_at"] == "2025-01-02T01:04:05Z" and listed[1]["tags"] == ["solo"]
    assert jsonl(ok("export").stdout)[-1]["written_by"] == "import"
    assert run("import", tmp_path / "nope.jsonl").exit_code == 2


# -- safety ----------------------------------------------------------------------------------------

def test_a_broken_file_is_named_and_skipped(tmp_path):
    keep = add("a good memory")
    broken = add("soon to be broken")
    path = next(p for p in memory_files() if p.stem == broken)
    path.write_text("id: [this is not\n")
    result = ok("ls", "--jsonl")
    assert [m["id"] for m in jsonl(result.stdout)] == [keep]
    assert "skipped unreadable memory file" in result.stderr and path.name in result.stderr
    assert ok("show", keep).stdout
    assert ok("add", "still writable").stdout
    assert len(jsonl(ok("export").stdout)) == 2
    path.write_text(path.read_text().replace("id: [this is not\n", f"id: {broken}\nraw: fixed by hand\n"))
    fixed = ok("ls", "--jsonl")
    assert "fixed by hand" in fixed.stdout and "unreadable" not in fixed.stderr


def test_files_added_changed_and_removed_behind_mems_back_are_seen(tmp_path):
    first = add("original text")
    second = add("to be deleted")
    path_first = next(p for p in memory_files() if p.stem == first)
    path_first.write_text(path_first.read_text().replace("original text", "changed by hand"))
    next(p for p in memory_files() if p.stem == second).unlink()
    copied_id = ids.new_id()
    target = store_root() / "memories" / "2025" / "01" / f"{copied_id}.yaml"
    target.parent.mkdir(parents=True)
    target.write_text(f"id: {copied_id}\ncreated_at: 2025-01-05T10:00:00Z\nraw: copied in by git\n")
    contents = {m["id"]: m["content"] for m in jsonl(ok("ls", "--jsonl").stdout)}
    assert contents == {first: "changed by hand", copied_id: "copied in by git"}


def test_a_deleted_index_is_rebuilt(tmp_path):
    memory_id = add("survives index loss")
    import shutil

    shutil.rmtree(store_root() / ".index")
    assert memory_id in ok("ls", "--jsonl").stdout
    (store_root() / ".index" / "catalog.sqlite").write_bytes(b"garbage" * 100)
    result = ok("ls", "--jsonl")
    assert memory_id in result.stdout


def test_nothing_is_written_outside_the_store():
    ok("init")
    with pytest.raises(Exception, match="outside the store"):
        Store(store_root()).file_path("memories/../../escape.yaml")


def test_concurrent_adds_from_eight_processes_all_land(tmp_path):
    ok("init")
    script = FAKE_MEM
    procs = [subprocess.Popen([sys.executable, str(script), "add", f"concurrent memory number {n}", "-t", "race"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(8)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in outputs]
    printed = {out.strip() for out, _ in outputs}
    assert len(printed) == 8
    files = memory_files()
    assert {p.stem for p in files} == printed
    assert sorted(load_file(p)["raw"] for p in files) == sorted(f"concurrent memory number {n}" for n in range(8))
    assert len(jsonl(ok("ls", "--jsonl", "-t", "race").stdout)) == 8
    assert not list(store_root().glob("memories/**/.*.tmp"))


def test_a_memory_of_year_one_is_listed_in_any_time_zone(monkeypatch):
    """A valid file with a date at the calendar's edge must not stop `mem ls` where the local zone would
    move it out of range (it did: OverflowError west of UTC)."""
    import time

    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        ok("import", "--no-compress", "-", input='{"raw": "The first note", "created_at": "0001-01-01T00:00:00Z"}')
        assert "0001-01-01 00:00" in ok("ls").stdout
        assert "The first note" in ok("search", "first note", "--mode", "text").stdout
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
