"""One id scheme for memories and threads: listings show the shortest unique end of an
id (3+ characters), every command takes that back, the full id or a unique beginning; messages on stderr
name what listings show, and help examples use that form."""

from __future__ import annotations

import json
import os
import re

import click
from helpers import add, ok, run
from thread_helpers import new_thread

from memcli.cli import main


def shown_ids(*args) -> list[str]:
    """The ids a human listing shows (the first word of each line that starts at the margin)."""
    return [line.split()[0] for line in ok(*args).stdout.splitlines() if line and not line[0].isspace()]


def test_thread_ls_shows_the_short_id_that_thread_commands_take_back():
    first, second = new_thread("--title", "trip"), new_thread("--title", "hiring")
    shown = shown_ids("thread", "ls")
    assert len(shown) == 2
    for thread_id in (first, second):
        [short] = [s for s in shown if thread_id.endswith(s)]
        assert 3 <= len(short) < 10
        ok("thread", "append", short, "a message to", thread_id)
        assert thread_id in ok("thread", "show", short).stdout
        assert thread_id in ok("thread", "context", short).stdout


def test_a_thread_is_named_by_the_end_of_its_id_like_a_memory():
    thread_id = new_thread()
    ok("thread", "append", thread_id, "Book the Lisbon flight")
    assert "Lisbon" in ok("thread", "show", thread_id[-4:]).stdout
    assert "Lisbon" in ok("thread", "show", thread_id[-4:].lower()).stdout


def test_the_older_forms_of_a_thread_id_keep_working():
    thread_id = new_thread()
    ok("thread", "append", thread_id[:10], "typed as thread ls used to show it")
    assert "typed as" in ok("thread", "show", thread_id).stdout


def test_a_handle_two_threads_share_is_refused_as_ambiguous_between_threads():
    first, second = new_thread(), new_thread()
    common = os.path.commonprefix([first, second])  # made within a second: their time parts agree
    result = run("thread", "show", common)
    assert result.exit_code == 4
    assert "2 threads" in result.stderr and first in result.stderr and second in result.stderr


def test_thread_rm_names_the_thread_as_listings_show_it():
    thread_id = new_thread()
    [short] = shown_ids("thread", "ls")
    result = ok("thread", "rm", short, "-y")
    assert f"removed thread {short} " in result.stderr and thread_id not in result.stderr


def test_add_names_a_similar_memory_by_the_short_id_ls_shows():
    first = add("the nightly backup job starts at two UTC on the ops host")
    result = ok("add", "the nightly backup job starts at three UTC on the ops host")
    [short] = [s for s in shown_ids("ls") if first.endswith(s)]
    assert f"similar to {short} (" in result.stderr
    assert first not in result.stderr


def test_update_and_replacement_messages_name_short_ids():
    first = add("the staging database listens on 5432")
    result = ok("update", first, "the staging database listens on 5433")
    new = result.stdout.strip()
    shown = shown_ids("ls", "--all-versions")
    assert first not in result.stderr and new not in result.stderr
    assert any(new.endswith(short) and f"{short} replaces" in result.stderr for short in shown)


def commands(group: click.Group, path: tuple = ()):
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        yield path + (name,)
        if isinstance(command, click.Group):
            yield from commands(command, path + (name,))


def test_help_examples_name_memories_and_threads_by_the_short_ids_listings_show():
    id_beginnings = re.compile(r"\b0[0-9A-HJKMNP-TV-Z]*[A-HJKMNP-TV-Z][0-9A-HJKMNP-TV-Z]*\b")
    found = {}
    for path in [()] + list(commands(main)):
        text = ok(*path, "--help").stdout
        found.update({" ".join(path): hit for hit in id_beginnings.findall(text)})
    assert found == {}


def test_an_assistant_reads_short_ids_of_threads_and_writes_and_they_work_back():
    from mcp_client import call, session, text_of

    ok("init")

    async def scenario(client):
        appended = await call(client, "thread_append", messages=[{"role": "user", "content": "Book the Lisbon flight"}])
        listed = await text_of(client, "thread_list")
        short = listed.split()[0]
        context = await call(client, "thread_context", thread=short)
        written = await text_of(client, "memory_write", content="the staging database listens on 5433")
        memory_id = (await call(client, "memory_list"))["memories"][0]["id"]
        return appended["thread"], short, context, written, memory_id

    thread_id, short, context, written, memory_id = session(scenario)
    assert thread_id.endswith(short) and 3 <= len(short) < 10
    assert "Lisbon" in json.dumps(context)
    [said] = re.findall(r"Stored as (\S+)\.", written)
    assert memory_id.endswith(said) and len(said) < len(memory_id)
