"""`mem queue`: the store's work queue: what waits, what was parked and why, running it by hand."""

from __future__ import annotations

import datetime as dt

import click

from memcli.cli.common import Env, MemGroup, emit, pass_env
from memcli.cli.options import output_options
from memcli.cli.render import shown
from memcli.errors import NOTHING


@click.group(cls=MemGroup, invoke_without_command=True)
@output_options
@click.pass_context
def queue(ctx, fmt) -> None:
    """The work a write or a hook left for later: compressions, vectors, thread folds, captured events.

    Runners take it on their own (after a hook or a thread append, in `mem mcp` when idle); a job that
    keeps failing is parked with its reason and never holds up the others.

    \b
      mem queue                 what waits and what is parked (`mem queue ls`)
      mem queue run             do what is due now
      mem queue retry --all     put the parked jobs back
      mem queue drop JOB        forget a parked job
    """
    if ctx.invoked_subcommand is None:
        _list(ctx.find_object(Env), fmt)


def _queue(env: Env):
    from memcli.store.queue import WorkQueue

    return WorkQueue(env.mem().store.root)


def _row(job, parked: bool) -> dict:
    row = {"name": job.name, "kind": job.kind, "state": "parked" if parked else "waiting",
           "queued_at": _clock(job.at), "tries": job.tries}
    if job.error:
        row["error"] = job.error
    return row


@queue.command(name="ls")
@output_options
@pass_env
def ls(env: Env, fmt) -> None:
    """List the jobs waiting, then the parked ones with their reason."""
    _list(env, fmt)


def _list(env: Env, fmt) -> None:
    work = _queue(env)
    rows = [_row(job, False) for job in work.waiting()] + [_row(job, True) for job in work.parked()]

    def human(row: dict) -> str:
        line = f"{row['state']:<8} {row['name'][:48]:<48} {row['queued_at']}"
        return shown(line + (f"  {row['error']}" if row.get("error") else ""))

    emit(rows, fmt, row=lambda row: row, human=human)
    if not rows and not fmt:
        click.echo("mem: nothing waits", err=True)


@queue.command()
@click.option("--linger", type=float, default=0.0, show_default=True,
              help="Wait this many seconds for more jobs before stopping.")
@click.option("--background", is_flag=True, help="Run at a lower priority, one such runner per store (how a "
                                                 "hook or a thread append starts it).")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@pass_env
def run(env: Env, linger, background, as_json) -> None:
    """Do every job that is due now, oldest first."""
    from memcli.features.work import Work

    mem = env.mem()
    if background:
        import os

        os.nice(10)
        with _queue(env).runner() as held:
            if held:
                Work(mem).run(linger=linger)
        return
    _say(Work(mem).run(linger=linger), as_json)


def _say(counts, as_json: bool) -> None:
    import json

    if as_json:
        click.echo(json.dumps(dict(counts)))
    else:
        click.echo(", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing due", err=True)


@queue.command()
@click.argument("names", metavar="[JOB...]", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Every parked job.")
@pass_env
def retry(env: Env, names, every) -> None:
    """Put parked jobs (JOB: a name `mem queue` shows, or its beginning) back in the queue."""
    _on_parked(_queue(env).retry, names, every, "queued again")


@queue.command()
@click.argument("names", metavar="[JOB...]", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Every parked job.")
@pass_env
def drop(env: Env, names, every) -> None:
    """Forget parked jobs (what they would have made is not made)."""
    _on_parked(_queue(env).drop, names, every, "dropped")


def _on_parked(act, names, every, done: str) -> None:
    """Act on the parked jobs named (or all); say how many; exit 1 when none was."""
    if not names and not every:
        raise click.UsageError("name the jobs (as `mem queue` shows them), or give --all")
    if any(not name.strip() for name in names):  # "" begins every name: it would act on them all
        raise click.UsageError("an empty job name names no job: give a name as `mem queue` shows it, or --all")
    count = act(None if every else list(names))
    click.echo(f"mem: {count} parked job{'s' if count != 1 else ''} {done}", err=True)
    if not count:
        raise click.exceptions.Exit(NOTHING)


def _clock(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


COMMANDS = [queue]
