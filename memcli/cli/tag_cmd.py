"""Tags: `mem tag ID... +new -old` changes them, `mem tags` lists them with counts."""

from __future__ import annotations

import click

from memcli.cli import completion
from memcli.cli.common import Env, emit, pass_env
from memcli.cli.options import filter_options, make_filters, output_options
from memcli.cli.render import shown


@click.command(context_settings={"ignore_unknown_options": True, "help_option_names": ["--help"]})
@click.argument("words", metavar="ID... [+TAG|-TAG]...", nargs=-1, required=True,
                shell_complete=completion.ids_then_tags)
@output_options
@pass_env
def tag(env: Env, words, fmt) -> None:
    """Add (+TAG) and remove (-TAG) tags of memories; with no change, show their tags.

    Each ID may be a short id or any unique beginning of one. The text, id and compressed form stay as they are. Prints each
    memory's short id and tags.

    \b
      mem tag 8ZK +scraper -draft
      mem tag 8ZK 3TV +infra
    """
    from memcli.core.reading import resolve
    from memcli.core.writing import retag

    ids = [w for w in words if w[:1] not in "+-"]
    add = [w[1:] for w in words if w.startswith("+")]
    remove = [w[1:] for w in words if w.startswith("-")]
    if not ids:
        raise click.UsageError("name at least one memory ID before the tag changes")
    mem = env.mem()
    results = [retag(mem, memory, add, remove) for memory in resolve(mem, ids)]
    emit(results, fmt, row=lambda r: r.to_dict(),
         human=lambda r: f"{env.short_id(r.memory.id)}  " + (" ".join(f"#{t}" for t in r.memory.tags) or "(no tags)"))
    changed = sum(bool(r.added or r.removed) for r in results)
    if add or remove:
        click.echo(f"mem: changed the tags of {changed} of {len(results)} memories", err=True)


@click.command()
@filter_options
@output_options
@pass_env
def tags(env: Env, tags, since, until, source, fmt) -> None:
    """List the tags in use with how many memories carry each, most used first.

    The filters are those of `mem ls` (with -t, the tags that go with those tags).
    """
    from memcli.core.reading import tag_counts

    mem = env.mem()
    counts = tag_counts(mem, make_filters(mem, tags, since, until, source))
    emit(counts, fmt, row=lambda c: {"tag": c[0], "count": c[1]}, human=lambda c: shown(f"{c[1]:>6}  {c[0]}"))


COMMANDS = [tag, tags]
