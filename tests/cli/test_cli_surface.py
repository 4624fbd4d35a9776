"""The CLI as a newcomer types it: one limit flag, queries of several words, dates, short ids."""

from __future__ import annotations

import datetime as dt
import json
import sys

import pytest
from helpers import add, jsonl, ok, run, store_root

from memcli.index.when import parse_when


def test_one_limit_flag_for_every_listing():
    for n in range(5):
        add(f"deploy note number {n} about billing")
    assert len(jsonl(ok("ls", "-n", 2, "--jsonl").stdout)) == 2
    assert len(jsonl(ok("ls", "--limit", 3, "--jsonl").stdout)) == 3
    assert len(jsonl(ok("search", "deploy", "billing", "-n", 2, "--jsonl").stdout)) == 2
    assert len(jsonl(ok("search", "deploy", "-k", 4, "--jsonl").stdout)) == 4
    assert len(json.loads(ok("context", "deploy", "-n", 1, "--json").stdout)["memories"]) == 1
    exported = jsonl(ok("export", "--limit", 2).stdout)
    assert [r["raw"] for r in exported] == ["deploy note number 0 about billing", "deploy note number 1 about billing"]


def test_several_words_are_one_query():
    wanted = add("the scraper hits rate limits on amazon")
    add("billing moved to fly")
    quoted = jsonl(ok("search", "rate limits amazon", "--jsonl", "--mode", "text").stdout)
    unquoted = jsonl(ok("search", "rate", "limits", "amazon", "--jsonl", "--mode", "text").stdout)
    assert [r["id"] for r in unquoted] == [r["id"] for r in quoted] and unquoted[0]["id"] == wanted
    packed = json.loads(ok("context", "rate", "limits", "amazon", "--mode", "text", "--json").stdout)
    assert packed["memories"][0]["id"] == wanted


def test_context_has_a_documented_default_budget():
    add("the scraper hits rate limits on amazon")
    assert "default: 1000" in ok("context", "--help").stdout
    assert json.loads(ok("context", "scraper", "--json").stdout)["budget"] == 1000


def test_export_takes_the_filters_of_ls():
    add("scraper note", "-t", "scraper")
    add("billing note", "-t", "billing", "--source", "https://wiki.example/billing")
    assert [r["raw"] for r in jsonl(ok("export", "-t", "scraper").stdout)] == ["scraper note"]
    assert [r["raw"] for r in jsonl(ok("export", "--source", "https://wiki*").stdout)] == ["billing note"]
    assert jsonl(ok("export", "--since", "1d").stdout) and not jsonl(ok("export", "--until", "2020-01-01").stdout)


NOW = dt.datetime(2026, 3, 31, 12, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("typed, expected", [
    ("30m", "2026-03-31T11:30:00Z"),
    ("12h", "2026-03-31T00:00:00Z"),
    ("3d", "2026-03-28T12:00:00Z"),
    ("2w", "2026-03-17T12:00:00Z"),
    ("1mo", "2026-02-28T12:00:00Z"),
    ("2 months ago", "2026-01-31T12:00:00Z"),
    ("1y", "2025-03-31T12:00:00Z"),
    ("last week", "2026-03-24T12:00:00Z"),
    ("last month", "2026-02-28T12:00:00Z"),
    ("yesterday", "2026-03-30T00:00:00Z"),
    ("2026-01-15", "2026-01-15T00:00:00Z"),
    ("2026-01-15T08:30:00Z", "2026-01-15T08:30:00Z"),
])
def test_dates_people_type(typed, expected):
    assert parse_when(typed, now=NOW) == expected


def test_dates_through_the_cli():
    add("a note from today")
    for since in ("1mo", "1y", "last week", "yesterday", "30m", dt.date.today().isoformat()):
        assert len(jsonl(ok("ls", "--since", since, "--jsonl").stdout)) == 1, since
    bad = run("ls", "--since", "fortnight")
    assert bad.exit_code == 2 and "1mo" in bad.stderr and "30m (minutes)" in bad.stderr
    assert "(m is minutes)" in ok("ls", "--help").stdout.replace("\n", " ").replace("  ", " ")


def test_listings_show_short_ids_that_every_command_accepts():
    ids = [add(f"note {n} about the scraper") for n in range(3)]
    listed = ok("ls").stdout
    shown = [line.split()[0] for line in listed.splitlines() if not line.startswith(" ")]
    assert len(shown) == 3 and all(3 <= len(s) < 26 for s in shown)
    assert sorted(shown) == sorted(next(s for s in shown if i.endswith(s)) for i in ids)
    hits = ok("search", "scraper", "--mode", "text").stdout
    assert all(s in hits for s in shown) and not any(i in hits for i in ids)
    for short in shown:
        assert short in ok("show", short).stdout
        assert ok("show", short.lower(), "--json").stdout
    ok("rm", "-y", shown[0])
    assert len(jsonl(ok("ls", "--jsonl").stdout)) == 2


def test_an_ambiguous_prefix_lists_the_candidates():
    first = add("the first note")
    second = add("the second note")
    common = first[:4]
    assert second.startswith(common)
    result = run("show", common)
    assert result.exit_code == 4
    assert "ambiguous" in result.stderr and first in result.stderr and second in result.stderr
    assert "the first note" in result.stderr and "the second note" in result.stderr


def test_deferred_memories_are_information_for_doctor():
    ok("add", "x " * 300, "--defer")
    result = run("doctor")
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if "compression" in line)
    assert line.startswith("info") and "1 memory waits to be compressed" in line
    assert "fix: mem compress --pending" in result.stdout and "FAIL" not in result.stdout


def test_path_says_why_this_store(tmp_path, monkeypatch):
    assert "given by $MEM_DIR" in ok("-v", "path").stderr
    assert "given by --dir" in ok("--dir", tmp_path / "elsewhere", "-v", "path").stderr
    project = tmp_path / "project"
    ok("--dir", project / ".mem", "init")
    (project / "src").mkdir()
    monkeypatch.chdir(project / "src")
    monkeypatch.delenv("MEM_DIR")
    told = json.loads(ok("path", "--json").stdout)
    assert told["store"] == str(project / ".mem") and told["exists"] is True
    assert "nearest project store upward" in told["chosen_by"]
    assert "nearest project store" in ok("-v", "path").stderr and "using" not in ok("path").stderr


def test_every_command_speaks_json(tmp_path):
    long_text = "We keep the nightly deploy window at 02:00 UTC because traffic is lowest then. " * 6
    deferred = json.loads(ok("add", long_text, "--defer", "--json").stdout)["id"]
    assert json.loads(ok("compress", "--pending", "--json").stdout) == {"memories": 1, "by_status": {"done": 1}}
    assert json.loads(ok("reindex", "--json").stdout)["memories"] == 1
    assert json.loads(ok("stats", "--json").stdout)["memories"] == 1
    assert json.loads(ok("tag", deferred, "+ops", "--json").stdout)[0]["added"] == ["ops"]
    assert json.loads(ok("tags", "--json").stdout) == [{"tag": "ops", "count": 1}]
    (tmp_path / "notes.md").write_text("# Notes\n\nthe scraper rotates proxies\n")
    assert json.loads(ok("ingest", tmp_path / "notes.md", "--json").stdout)["added"] == 1
    exported = ok("export").stdout
    imported = json.loads(ok("--dir", tmp_path / "copy", "import", "--json", input=exported).stdout)
    assert imported["imported"] == 2
    assert json.loads(ok("path", "--json").stdout)["exists"] is True
    assert json.loads(ok("init", "--json").stdout) == {"store": str(store_root()), "created": False}
    assert json.loads(ok("rm", "-y", deferred, "--json").stdout) == {"deleted": [deferred]}
    assert json.loads(ok("doctor", "--json").stdout)["healthy"] is True


def test_an_ignored_file_named_explicitly_is_refused_by_ingest_as_by_add(project):
    (project / ".env").write_text("API_TOKEN=abc\n")
    (project / "notes.md").write_text("the scraper rotates proxies\n")
    added = run("add", "--file", ".env")
    ingested = run("ingest", ".env", "notes.md")
    assert added.exit_code == ingested.exit_code == 7
    for result in (added, ingested):
        assert "refusing file .env" in result.stderr and "built-in defaults" in result.stderr and ".env*" in result.stderr
    assert not jsonl(ok("ls", "--jsonl").stdout)
    walked = ok("ingest", ".", "--json")
    assert json.loads(walked.stdout)["ignored"] >= 1 and json.loads(walked.stdout)["added"] == 1


def test_a_missing_or_broken_editor_falls_back_or_says_what_to_set(tmp_path):
    memory_id = add("the scraper rotates proxies")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fallback = bin_dir / "vi"
    fallback.write_text(f"#!{sys.executable}\nimport sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                        "p.write_text(p.read_text().replace('rotates', 'rotates hourly'))\n")
    fallback.chmod(0o755)
    path_only = {"PATH": str(bin_dir)}
    result = run("edit", memory_id, env=path_only | {"EDITOR": "no-such-editor"})
    assert result.exit_code == 0, result.stderr
    assert "$EDITOR is 'no-such-editor', which cannot be found" in result.stderr
    assert "rotates hourly" in ok("show", memory_id, "--raw").stdout
    fallback.unlink()
    missing = run("edit", memory_id, env=path_only | {"EDITOR": "no-such-editor"})
    assert missing.exit_code == 2 and "set $VISUAL or $EDITOR" in missing.stderr and "Errno" not in missing.stderr
    broken = bin_dir / "broken"
    broken.write_text(f"#!{sys.executable}\nraise SystemExit(3)\n")
    broken.chmod(0o755)
    failed = run("edit", memory_id, env=path_only | {"VISUAL": "broken"})
    assert failed.exit_code == 2 and "the editor 'broken' failed" in failed.stderr and "export EDITOR" in failed.stderr


def complete(shell: str, line: str) -> str:
    """What the shell gets back from Click's completion for the command line typed so far."""
    import fakes
    from click.testing import CliRunner

    from memcli.cli import main

    words = line.split(" ")
    env = {"_MEM_COMPLETE": f"{shell}_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    return CliRunner().invoke(main, [], env=env, prog_name="mem", obj=fakes.current).output


def test_shell_completion_of_commands_flags_ids_and_tags():
    memory_id = add("the scraper rotates proxies", "-t", "scraper,infra")
    for shell in ("bash", "zsh"):
        assert "show" in complete(shell, "mem sh") and "search" in complete(shell, "mem s")
        assert "--limit" in complete(shell, "mem search --l")
        assert memory_id in complete(shell, f"mem show {memory_id[:3]}")
        assert memory_id in complete(shell, f"mem rm {memory_id[:3].lower()}")
        assert memory_id[-3:] in complete(shell, "mem show ")
        assert memory_id[-3:] in complete(shell, f"mem show {memory_id[-3:-1].lower()}")  # a short id typed in part
        assert "scraper" in complete(shell, "mem ls -t sc") and "infra" not in complete(shell, "mem ls -t sc")
        assert "+infra" in complete(shell, f"mem tag {memory_id[:8]} +")
    assert "the scraper rotates proxies" in complete("zsh", "mem show 0")
    from click.testing import CliRunner

    from memcli.cli import main
    for shell in ("bash", "zsh", "fish"):
        source = CliRunner().invoke(main, [], env={"_MEM_COMPLETE": f"{shell}_source"}, prog_name="mem").output
        assert f"{shell}_complete" in source and "_MEM_COMPLETE" in source


def test_completion_on_a_store_that_does_not_exist_completes_nothing_quietly(tmp_path):
    assert complete("bash", "mem show 01").strip() == ""


def test_every_command_a_module_defines_is_listed_and_answers():
    """The CLI imports a command's module only when the command is named (memcli.cli.COMMANDS), so a
    command missing from that table would be unreachable: each one is in `mem --help` and runs."""
    import importlib
    import pkgutil

    import memcli.cli

    defined = {command.name for info in pkgutil.iter_modules(memcli.cli.__path__)
               for command in getattr(importlib.import_module(f"memcli.cli.{info.name}"), "COMMANDS", [])}
    listed = ok("--help").stdout.split("Commands:")[1]
    assert {line.split()[0] for line in listed.splitlines() if line.strip()} == defined
    for name in sorted(defined):
        assert ok(name, "--help").stdout.split()[:3] == ["Usage:", "main", name]  # CliRunner names the program main
