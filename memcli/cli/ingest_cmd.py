"""`mem ingest`: files and folders into memories."""

from __future__ import annotations

from pathlib import Path

import click

from memcli.cli.common import (
    Env,
    ProgressBars,
    announce_new_store,
    echo_json,
    pass_env,
    redaction_note,
)
from memcli.cli.options import no_gitignore_option, tag_option
from memcli.errors import MemError, Refused
from memcli.util.words import counted


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path(path_type=Path))
@tag_option("Tag every chunk (repeatable, or a,b).")
@click.option("--dry-run", is_flag=True, help="Say what would change; store nothing.")
@click.option("--prune", "remove_orphans", is_flag=True,
              help="Delete the chunks of files under PATH that are gone (deleted, now ignored or binary).")
@click.option("--defer/--compress-now", default=True, show_default=True,
              help="Store chunks at once and queue their compression for `mem compress --pending`, "
                   "or compress each before storing it (seconds a chunk).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.option("--follow-links", is_flag=True,
              help="Follow links that lead out of a walked folder (each still decided by .memignore).")
@no_gitignore_option
@pass_env
def ingest(env: Env, paths, tags, dry_run, remove_orphans, defer, as_json, follow_links, no_gitignore) -> None:
    """Store text files and folders as memories, one per chunk, and keep them in step.

    Folders are walked; .memignore files (the store's, the walked folder's and those below it, and
    ~/.config/mem/ignore, on top of built-in defaults) and binary files are skipped. Long files are
    split into chunks of at most ingest_chunk_chars (mem.yaml, 1500 by default); each chunk is a
    memory with `source: PATH#N` and `written_by: ingest`, redacted, compressed and embedded like
    `mem add`, except that compression is queued (`mem compress --pending` does it; --compress-now
    waits for it). PATH is written relative to the project of a .mem/ store (or the store folder), else
    as ~/... or absolute.

    A chunk of a markdown file starts with the headings it sits under (`Install > Linux`) unless it
    opens with a heading, and a code block stays with the sentence before it. A PATH that does not exist is
    named on stderr, the others are still ingested, and the exit code is 3.

    Run it again after editing: unchanged chunks stay as they are (same ids), changed ones are
    replaced, and the chunks of a deleted file stay unless --prune. The summary goes to stderr.

    \b
      mem ingest docs/ README.md -t docs
      mem ingest notes/ --dry-run
      mem ingest docs/ --prune && mem compress --pending
    """
    from memcli.features.ingest.walk import ingest as run_ingest

    mem = env.mem()
    mem.gitignore = not no_gitignore
    with ProgressBars() as progress:
        report = run_ingest(mem, paths, tags=tags, dry_run=dry_run, remove_orphans=remove_orphans, defer=defer,
                            follow_links=follow_links, progress=progress)
    announce_new_store(env)
    for path in report.missing:
        click.echo(f"mem: no such file or folder: {path}", err=True)
    for refused in report.refused:
        click.echo(f"mem: {refused}", err=True)
    click.echo(_summary(report), err=True)
    if as_json:
        echo_json(report.to_dict())
    if report.missing:
        raise click.exceptions.Exit(MemError.exit_code)
    if report.refused:
        raise click.exceptions.Exit(Refused.exit_code)


def _summary(report) -> str:
    files = (f"{counted(report.seen, 'path')}: {counted(report.files, 'file')} read, {report.ignored} ignored, {report.binary} binary"
             + (f", {report.skipped} skipped" if report.skipped else "")
             + (f", {len(report.refused)} refused" if report.refused else "")
             + (f", {len(report.missing)} missing" if report.missing else ""))
    chunks = (f"chunks: {report.added} added, {report.updated} updated, {report.unchanged} unchanged, "
              f"{report.removed} removed")
    lines = [("dry run, nothing stored: " if report.dry_run else "") + f"{files}; {chunks}"]
    if report.orphaned:
        lines.append(f"kept {counted(report.orphaned, 'chunk')} of files no longer "
                     "there (--prune deletes them)")
    if report.pending:
        lines.append(f"{counted(report.pending, 'chunk')} {'waits' if report.pending == 1 else 'wait'} for compression: "
                     "run `mem compress --pending`")
    note = redaction_note(report.redacted)
    if note:
        lines.append(note)
    return "\n".join(f"mem: {line}" for line in lines)


COMMANDS = [ingest]
