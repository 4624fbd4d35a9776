"""Compression after the fact: `mem compress` (the queue, retries, re-dos) and `mem stats`."""

from __future__ import annotations

import click

from memcli.cli import completion
from memcli.cli.common import Env, ProgressBars, echo_json, pass_env
from memcli.compress.methods import METHODS
from memcli.errors import MemError


@click.command()
@click.argument("memory_ids", metavar="[ID...]", nargs=-1, shell_complete=completion.ids)
@click.option("--pending", is_flag=True, help="Memories queued by `mem add --defer`.")
@click.option("--failed", is_flag=True, help="Memories whose compression failed (to retry).")
@click.option("--all", "every", is_flag=True, help="Every memory (e.g. after changing the model or ratio).")
@click.option("--method", type=click.Choice(sorted(METHODS)), help="Override compress_method from mem.yaml.")
@click.option("--ratio", type=click.FloatRange(0.05, 0.95), help="Share of the raw tokens to keep (default 0.6).")
@click.option("--json", "as_json", is_flag=True, help="Print {memories, by_status} on stdout.")
@pass_env
def compress(env: Env, memory_ids, pending, failed, every, method, ratio, as_json) -> None:
    """(Re)make the compressed form of memories.

    Each memory is saved as soon as it is done: interrupting is safe, and running the same command
    again continues with what is left. Prints a summary on stderr.

    \b
      mem add --defer "..."   then later:   mem compress --pending
      mem compress --failed --method prune
      mem compress --all      after an upgrade: every memory by its kind (code, diffs, logs, ...)
    """
    mem = env.mem()
    if not (memory_ids or pending or failed or every):
        raise click.UsageError("say which memories: IDs, --pending, --failed or --all")
    from memcli.core.compressing import CompressOptions
    from memcli.core.reading import resolve, to_compress
    from memcli.core.write_jobs import recompress

    chosen = resolve(mem, memory_ids) if memory_ids else []
    if pending or failed or every:
        seen = {m.id for m in chosen}
        chosen += [m for m in to_compress(mem, pending=pending, failed=failed, every=every) if m.id not in seen]
    with ProgressBars() as progress:
        outcome = recompress(mem, chosen, options=CompressOptions(method=method, ratio=ratio), progress=progress)
    if as_json:
        echo_json({"memories": len(chosen), "by_status": outcome})
    summary = ", ".join(f"{count} {status}" for status, count in sorted(outcome.items())) or "nothing to do"
    click.echo(f"mem: compressed {len(chosen)} memories: {summary}", err=True)
    if outcome.get("failed"):
        raise click.exceptions.Exit(MemError.exit_code)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@pass_env
def stats(env: Env, as_json: bool) -> None:
    """How many tokens compression saves a reader, overall, by method and by kind of content.

    Memories compressed before mem knew kinds show as `unknown`: `mem compress --all` redoes them."""
    from memcli.features.savings import store_savings

    figures = store_savings(env.mem())
    if as_json:
        echo_json(figures)
        return
    click.echo(f"memories:        {figures['memories']} ({figures['optimized']} compressed, "
               f"{figures['optimized_percent']}%)")
    click.echo(f"raw tokens:      {figures['raw_tokens']}")
    click.echo(f"tokens to read:  {figures['read_tokens']} (saves {figures['saved_tokens']} tokens, "
               f"{figures['saved_percent']}%)")
    for method, row in sorted(figures["by_method"].items()):
        click.echo(f"  {method:<8} {row['memories']} memories, {row['raw_tokens']} → {row['tokens']} tokens "
                   f"({row['saved_percent']}% fewer)")
    if figures["by_kind"]:
        click.echo("by kind:")
        for kind, row in sorted(figures["by_kind"].items()):
            click.echo(f"  {kind:<12} {row['memories']} memories, {row['raw_tokens']} → {row['tokens']} tokens "
                       f"({row['saved_percent']}% fewer)")
    click.echo("status:          " + ", ".join(f"{k} {v}" for k, v in sorted(figures["by_status"].items())))
    click.echo(f"tokens counted with {figures['tokenizer']}")


COMMANDS = [compress, stats]
