"""Sources typed as paths: written relative to the project, found again from any folder of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import jsonl, ok, run, write_tree

from memcli.errors import Refused


@pytest.fixture
def docs(project) -> Path:
    write_tree(project, {
        "docs/pkgs/click.md": "Click builds command line interfaces from decorated functions.\n",
        "docs/pkgs/rich.md": "Rich prints tables and progress bars in the terminal.\n",
        "docs/setup.md": "Install with pipx; the config lives in ~/.config/tool.\n",
        "notes/deploy.md": "We deploy on Fridays after the freeze lifts.\n",
    })
    return project / "docs"


def sources(*args) -> list[str]:
    return sorted(m.get("source", "") for m in jsonl(ok("ls", "--jsonl", *args).stdout))


def test_ingest_from_a_subfolder_then_filter_by_a_path_typed_from_another(docs, monkeypatch):
    monkeypatch.chdir(docs / "pkgs")
    ok("ingest", ".")
    assert sources() == ["docs/pkgs/click.md#1", "docs/pkgs/rich.md#1"]  # relative to the project, not the cwd
    monkeypatch.chdir(docs.parent / "notes")
    assert sources("--source", "../docs/pkgs/click.md") == ["docs/pkgs/click.md#1"]
    monkeypatch.chdir(docs)
    assert sources("--source", "pkgs/click.md") == ["docs/pkgs/click.md#1"]
    found = run("search", "command line interfaces", "--source", "pkgs/click.md", "--json")
    assert found.exit_code == 0 and [h["source"] for h in json.loads(found.stdout)] == ["docs/pkgs/click.md#1"]
    assert run("search", "command line interfaces", "--source", "pkgs/rich.md").exit_code == 1
    assert [json.loads(line)["source"] for line in ok("export", "--source", "pkgs/rich.md").stdout.splitlines()] \
        == ["docs/pkgs/rich.md#1"]
    assert sources("--source", "pkgs") == ["docs/pkgs/click.md#1", "docs/pkgs/rich.md#1"]  # a folder: what is in it


def test_globs_keep_working_from_the_project_and_below(docs, monkeypatch):
    ok("ingest", "docs")
    assert sources("--source", "docs/*") == ["docs/pkgs/click.md#1", "docs/pkgs/rich.md#1", "docs/setup.md#1"]
    assert sources("--source", "docs/pkgs/r*.md") == ["docs/pkgs/rich.md#1"]
    assert sources("--source", "*setup.md#1") == ["docs/setup.md#1"]
    monkeypatch.chdir(docs)
    assert sources("--source", "pkgs/c*") == ["docs/pkgs/click.md#1"]
    assert sources("--source", "docs/setup.md#*") == ["docs/setup.md#1"]  # a written form, typed from elsewhere


def test_add_writes_a_file_source_relative_to_the_project(docs, monkeypatch):
    monkeypatch.chdir(docs.parent / "notes")
    ok("add", "--file", "deploy.md", "--no-compress")
    ok("add", "Click needs Python 3.7 or newer", "--source", "../docs/pkgs/click.md", "--no-compress")
    ok("add", "Rich renders markdown", "--source", "../docs/pkgs/rich.md#1", "--no-compress")
    ok("add", "From the call with Dana", "--source", "call with Dana", "--no-compress")
    ok("add", "The changelog says so", "--source", "https://example.com/CHANGES", "--no-compress")
    assert sources() == ["call with Dana", "docs/pkgs/click.md", "docs/pkgs/rich.md#1", "https://example.com/CHANGES",
                         "notes/deploy.md"]
    monkeypatch.chdir(docs)
    assert sources("--source", "../notes/deploy.md") == ["notes/deploy.md"]
    assert sources("--source", "pkgs/*") == ["docs/pkgs/click.md", "docs/pkgs/rich.md#1"]
    assert sources("--source", "https://example.com/*") == ["https://example.com/CHANGES"]


def test_sources_stored_absolute_or_from_home_by_an_older_mem_are_still_found(docs, monkeypatch):
    monkeypatch.setenv("HOME", str(docs.parent.parent))
    old = [{"id": "01JDQ4R8ZK3M5N7P9Q1S3T5V7X", "raw": "Pin click below 9 until the plugins move.",
            "source": f"{docs}/pkgs/click.md"},
           {"id": "01JDQ4R8ZK3M5N7P9Q1S3T5V7Y", "raw": "Setup needs the VPN on.",
            "source": f"~/{docs.parent.name}/docs/setup.md#2"}]
    ok("import", input="".join(json.dumps(record) + "\n" for record in old))
    assert sources("--source", "docs/pkgs/click.md") == [f"{docs}/pkgs/click.md"]
    monkeypatch.chdir(docs)
    assert sources("--source", "setup.md") == [f"~/{docs.parent.name}/docs/setup.md#2"]
    assert sources("--source", "pkgs/click.md") == [f"{docs}/pkgs/click.md"]


def test_a_user_store_writes_project_files_from_home_and_finds_them_by_relative_paths(docs, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MEM_DIR", str(tmp_path / "user-store"))
    monkeypatch.chdir(docs)
    ok("ingest", "pkgs")
    assert sources() == ["~/project/docs/pkgs/click.md#1", "~/project/docs/pkgs/rich.md#1"]
    monkeypatch.chdir(docs / "pkgs")
    assert sources("--source", "click.md") == ["~/project/docs/pkgs/click.md#1"]


def test_a_source_typed_from_a_subfolder_is_checked_against_the_denylist(docs, monkeypatch):
    write_tree(docs, {".env": "TOKEN=abc\n"})
    monkeypatch.chdir(docs)
    refused = run("add", "notes from the env file", "--source", ".env")
    assert refused.exit_code == Refused.exit_code and "refusing source" in refused.stderr
    assert sources() == []


def test_help_says_how_sources_are_written():
    assert "relative to the project" in " ".join(ok("ls", "--help").stdout.split())
    assert "relative to the project" in " ".join(ok("add", "--help").stdout.split())
