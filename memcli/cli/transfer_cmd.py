"""`mem export` and `mem import`: memories as JSON lines, every field kept."""

from __future__ import annotations

import json

import click

from memcli.cli.common import (
    Env,
    ProgressBars,
    announce_new_store,
    echo_json,
    pass_env,
    say_redacted,
)
from memcli.cli.options import filter_options, limit_option, make_filters
from memcli.errors import MemError, Refused


@click.command()
@filter_options
@limit_option(None, "At most N memories (the oldest N).")
@pass_env
def export(env: Env, tags, since, until, source, limit) -> None:
    """Write memories, with every field, as JSON lines (oldest first) to stdout; the filters are those
    of `mem ls`, and every version is written (`mem import` rebuilds the history). Without a filter or
    a limit the threads follow (a line per thread, then one per message), so the file is a whole backup."""
    from memcli.features.transfer import export

    mem = env.mem()
    for record in export(mem, make_filters(mem, tags, since, until, source, all_versions=True), limit):
        click.echo(json.dumps(record, ensure_ascii=False))


@click.command(name="import")
@click.argument("source", required=False, default="-", metavar="[FILE|-]")
@click.option("--no-compress", is_flag=True, help="Store records without a compressed form as raw only.")
@click.option("--defer", is_flag=True, help="Queue compression for `mem compress --pending`.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@pass_env
def import_(env: Env, source: str, no_compress: bool, defer: bool, as_json: bool) -> None:
    """Read memories as JSON lines (as `mem export` writes them) from FILE or stdin.

    Ids and timestamps are kept; a memory whose id or text the store already held is skipped (a text
    stored twice in the file is imported twice, as it was), and threads and their messages are added
    unless already there. Lines that
    are not valid records are reported with their line number; the others are still imported.
    Records are redacted like `mem add` (a redacted one gets a new compressed form); a record that
    keeps a private key, or whose source .memignore names, is refused (exit 7 if nothing was invalid).
    A record's compressed form passes the guard a form made here passes; one that fails is dropped,
    with the reason, and the memory is compressed again.
    """
    mem = env.mem()
    from memcli.core.compressing import CompressOptions
    from memcli.features.transfer import import_lines
    from memcli.util.textio import RECORD_FACTOR, bounded_lines, open_input

    stream = open_input(source)
    with stream:
        lines = bounded_lines(stream, RECORD_FACTOR * mem.settings.max_input_bytes)
        with ProgressBars() as progress:
            report = import_lines(mem, lines, CompressOptions(enabled=not no_compress, defer=defer), progress)
    announce_new_store(env)
    for error in report.invalid + report.refused:
        click.echo(f"mem: skipped {error}", err=True)
    for dropped in report.dropped:
        click.echo(f"mem: {dropped}", err=True)
    say_redacted(report.redacted)
    summary = {"imported": report.imported, "duplicates": report.duplicates, "invalid": len(report.invalid),
               "refused": len(report.refused), "forms_dropped": len(report.dropped), "redacted": report.redacted}
    if report.thread_lines:
        summary.update(threads=report.threads, messages=report.messages)
    if as_json:
        echo_json(summary)
    refused = f", {len(report.refused)} refused" if report.refused else ""
    threads = (f"; {_count(report.threads, 'thread')} and {_count(report.messages, 'message')} added"
               if report.thread_lines else "")
    click.echo(f"mem: imported {report.imported}, skipped {report.duplicates} already stored, "
               f"{len(report.invalid)} invalid{refused}{threads}", err=True)
    if report.invalid:
        raise click.exceptions.Exit(MemError.exit_code)
    if report.refused:
        raise click.exceptions.Exit(Refused.exit_code)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


COMMANDS = [export, import_]
