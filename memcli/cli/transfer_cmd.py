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
from memcli.capture.past import CLIENTS
from memcli.cli.options import filter_options, limit_option, make_filters
from memcli.errors import MemError, Refused
from memcli.util.words import counted


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
@click.argument("source", required=False, default="-", metavar="[FILE|-|PATH]")
@click.option("--from", "client", type=click.Choice(sorted(CLIENTS)),
              help="Import past coding sessions from this client's transcripts (SOURCE: a file or folder of "
                   "them; without one, the current project's).")
@click.option("--since", metavar="WHEN", help="With --from: only what happened since WHEN (2026-11-01, 2w, yesterday).")
@click.option("--dry-run", is_flag=True, help="With --from: say, by session, what would be stored; store nothing.")
@click.option("--no-compress", is_flag=True, help="Store records without a compressed form as raw only.")
@click.option("--defer", is_flag=True, help="Queue compression for `mem compress --pending`.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@pass_env
def import_(env: Env, source: str, client: str | None, since: str | None, dry_run: bool, no_compress: bool,
            defer: bool, as_json: bool) -> None:
    """Read memories as JSON lines (as `mem export` writes them) from FILE or stdin; or, with --from,
    the coding sessions a client kept on disk before mem's hooks ran (PATH: a transcript or a folder
    of them; without it, the current project's).

    \b
      mem import backup.jsonl
      mem import --from claude-code --dry-run     # this project's sessions in ~/.claude/projects
      mem import --from codex --since 2w          # ~/.codex/sessions
      mem import --from gemini ~/.gemini/tmp/<project>/chats

    With --from, each session is stored as the hooks would have stored it (docs/capture.md): its
    observations, thread and summary, redacted, with .memignore/.gitignore and <private> honoured, and
    compression queued. Running it again, or over sessions the hooks captured, stores nothing twice; a
    malformed transcript line is skipped and counted.

    Ids and timestamps are kept; a memory whose id or text the store already held is skipped (a text
    stored twice in the file is imported twice, as it was), and threads and their messages are added
    unless already there. Lines that
    are not valid records are reported with their line number; the others are still imported.
    Records are redacted like `mem add` (a redacted one gets a new compressed form); a record that
    keeps a private key, or whose source .memignore names, is refused (exit 7 if nothing was invalid).
    A record's compressed form passes the guard a form made here passes; one that fails is dropped,
    with the reason, and the memory is compressed again.
    """
    if client is not None:
        if no_compress or defer:
            raise click.UsageError("--from always queues compression; --defer and --no-compress go without it")
        _import_sessions(env, client, source, since, dry_run, as_json)
        return
    if since or dry_run:
        raise click.UsageError("--since and --dry-run go with --from")
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


def _import_sessions(env: Env, client: str, source: str, since: str | None, dry_run: bool, as_json: bool) -> None:
    """`mem import --from CLIENT`: the summary line (and, with --dry-run, a line a session) on stderr;
    --json puts the report on stdout."""
    from pathlib import Path

    from memcli.capture.past import import_sessions, transcripts
    from memcli.capture.projects import project_of
    from memcli.capture.transcripts import seconds
    from memcli.index.when import parse_when

    mem = env.mem()
    paths = [] if source == "-" else [Path(source)]
    for path in paths:
        if not path.exists():
            raise MemError(f"no such file or folder: {path}")
    project = project_of(str(Path.cwd().resolve()))
    files = transcripts(client, paths, project)
    with ProgressBars(counts=False) as progress:
        report = import_sessions(mem, client, files, project=None if paths else project,
                                 since=seconds(parse_when(since)) if since else None, dry_run=dry_run,
                                 progress=progress)
    announce_new_store(env)
    if dry_run:
        for session in report.sessions.values():
            if session.state != "elsewhere":
                click.echo(f"mem: {_told(session)}", err=True)
    if as_json:
        echo_json(report.to_dict())
    click.echo(f"mem: {_sessions_summary(report, client, paths)}", err=True)


def _told(session) -> str:
    """One session of a dry run: what it would add."""
    import time

    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(session.first)) if session.first else "?"
    head = f"{session.client} session {session.id[:12]} ({when}, {session.cwd or '?'}): "
    if session.state == "hooks":
        return head + "captured by hooks; skipped"
    new = session.events
    if not new:
        return head + ("already stored" if session.known else "nothing to store")
    parts = [_count(new["prompt"], "prompt"), _count(new["tool"], "tool event"), _count(new["stop"], "answer")]
    if new["compact"]:
        parts.append(_count(new["compact"], "compaction"))
    return head + ", ".join(parts) + (f" ({session.known} already stored)" if session.known else "")


def _sessions_summary(report, client: str, paths) -> str:
    if not report.files:
        return (f"no {client} transcripts found" + ("" if paths else " for this project") + "; nothing imported")
    verb = "would queue" if report.dry_run else "queued"
    sessions = [s for s in report.sessions.values() if s.state != "elsewhere"]
    line = (f"{'dry run, nothing stored: ' if report.dry_run else ''}{_count(report.files, 'file')}, "
            f"{_count(len(sessions), 'session')}: {verb} {_count(report.queued, 'event')}")
    skipped = [(report.count("stored"), "already stored"), (report.count("hooks"), "captured by hooks")]
    line += "".join(f", {n} {what}" for n, what in skipped if n)
    if report.stored:
        made = report.stored
        line += (f"; stored {_count(made.get('stored', 0), 'observation')}, {counted(made.get('summaries', 0), 'summary', 'summaries')}"
                 f", {made.get('merged', 0)} merged, {sum(v for k, v in made.items() if k.startswith('skipped'))} skipped")
    if report.refused:
        line += f"; {report.refused} refused (a private key survived redaction)"
    if report.bad_lines:
        line += f"; {_count(report.bad_lines, 'malformed line')} skipped"
    return line


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


COMMANDS = [export, import_]
