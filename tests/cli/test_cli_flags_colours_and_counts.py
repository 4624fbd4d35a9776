"""Where flags may stand, when colour is used, how counts and `show --raw` read in a pipe, and clean errors
for a missing store folder and a span before year one: each test is a recipe or command and what it shows."""

from __future__ import annotations

import json

from helpers import add, ok, on_a_terminal, run

NOTE = ("The staging Postgres listens on port 5432 behind the bastion host; the nightly backup job copies it "
        "to the archive bucket at two in the morning, and the restore drill runs on the first Monday of the "
        "month so that the team knows the backups can actually be read back when they are needed.")


# -- `mem update --help`'s own recipe ----------------------------------------------------------

def test_show_raw_piped_prints_only_the_text_so_the_update_recipe_works():
    memory_id = add(NOTE)
    piped = ok("show", memory_id, "--raw").stdout
    assert piped == NOTE + "\n"
    new_id = ok("update", memory_id, "-", input=piped.replace("5432", "5433")).stdout.strip()
    assert json.loads(ok("show", new_id, "--raw", "--json").stdout)["content"] == NOTE.replace("5432", "5433")


# -- -v and --dir after the subcommand --------------------------------------------------------

def test_verbose_and_dir_work_after_the_subcommand_too(tmp_path):
    other = tmp_path / "other-store"
    ok("--dir", other, "add", "the other store's only memory")
    assert "the other store's only memory" in ok("ls", "--dir", other).stdout
    assert "the other store's only memory" in ok("ls", f"--dir={other}", "--json").stdout
    assert ok("path", "-v").stderr == ok("-v", "path").stderr != ""
    add("a memory in the default store")
    assert "a memory in the default store" not in ok("ls", "--dir", other).stdout


def test_a_commands_own_verbose_flag_stays_its_own(project):
    (project / "notes.log").write_text("x\n")
    (project / ".memignore").write_text("*.log\n")
    assert ".memignore:1:*.log" in ok("ignore", "check", "notes.log", "-v").stdout


# -- NO_COLOR and --color ------------------------------------------------------------------------

def test_no_color_and_color_never_print_no_colour_codes_on_a_terminal():
    add("the deploy runs at noon", "-t", "ops")
    assert "\x1b[" in on_a_terminal("ls")
    assert "\x1b[" not in on_a_terminal("ls", env={"NO_COLOR": "1"})
    assert "\x1b[" not in on_a_terminal("ls", "--color", "never")
    assert "\x1b[" in on_a_terminal("--color", "always", "ls", env={"NO_COLOR": "1"})


def test_color_always_colours_a_pipe_and_auto_does_not():
    add("the deploy runs at noon", "-t", "ops")
    assert "\x1b[" in ok("--color", "always", "ls").stdout
    assert "\x1b[" not in ok("ls").stdout


# -- words, limits, a missing store, help texts ---------------------------------------------------

def test_ls_n_0_lists_every_memory():
    for n in range(3):
        add(f"memory number {n} about the deploy")
    assert len(json.loads(ok("ls", "-n", "0", "--json").stdout)) == 3
    assert len(json.loads(ok("ls", "-n", "2", "--json").stdout)) == 2
    assert len(ok("export", "-n", "0").stdout.splitlines()) == 3


def test_a_read_of_a_store_folder_that_does_not_exist_is_an_error(tmp_path):
    missing = tmp_path / "nonexistent"
    for args in (["--dir", missing, "ls"], ["ls", "--dir", missing], ["--dir", missing, "search", "deploy"]):
        result = run(*args)
        assert result.exit_code == 5 and f"no store at {missing}" in result.stderr and result.stdout == ""
    assert not missing.exists()
    ok("--dir", missing, "add", "a write makes the store")
    assert "a write makes the store" in ok("--dir", missing, "ls").stdout


def test_json_help_speaks_of_memories_only_where_one_memory_is_shown():
    for args in (["tags"], ["thread", "ls"], ["thread", "show"], ["ignore", "check"], ["ls"]):
        help_text = " ".join(ok(*args, "--help").stdout.split())
        assert "--json A JSON array." in help_text and "one memory" not in help_text, args
    assert "A JSON object for one memory" in " ".join(ok("show", "--help").stdout.split())


def test_counts_of_one_are_said_in_the_singular():
    from memcli.util.words import counted

    ok("add", "to compress later: " + "the nightly backup job copies the database to the archive bucket. " * 8,
       "--defer")
    assert "1 memory waits to be compressed" in ok("doctor").stdout + ok("doctor").stderr
    assert (counted(1, "more result"), counted(2, "summary", "summaries")) == ("1 more result", "2 summaries")


def test_memory_list_says_more_follow_on_a_line_of_its_own():
    import mcp_client

    for n in range(3):
        add(f"memory number {n} about the deploy")

    async def scenario(client):
        return await mcp_client.text_of(client, "memory_list", limit=2)

    text = mcp_client.session(scenario)
    assert "\n(more: offset 2)" in text


# -- a span longer than the calendar ------------------------------------------------------------

def test_a_span_back_before_year_one_is_a_clean_error_in_the_cli_and_over_mcp():
    import mcp_client

    add("the deploy runs at noon")
    for span in ("2026y", "3000y", "30000mo"):
        result = run("ls", "--since", span)
        assert result.exit_code == 2 and f"{span!r} is outside the years 0001-9999" in result.stderr

    async def scenario(client):
        return await mcp_client.error(client, "memory_list", since="3000y")

    assert "outside the years 0001-9999" in mcp_client.session(scenario)
