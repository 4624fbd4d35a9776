"""The everyday commands on memories: init, path, add, show, ls, rm."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import click

from memcli.cli import completion, render
from memcli.cli.common import (
    Env,
    ProgressBars,
    after_write,
    announce_new_store,
    compress_options,
    echo_json,
    emit,
    pass_env,
    say_compressed,
    say_written,
)
from memcli.cli.options import (
    filter_options,
    interactive,
    limit_option,
    make_filters,
    output_options,
    read_text,
    tag_option,
    text_options,
    versions_option,
    with_raw_option,
)
from memcli.config import ON_SIMILAR
from memcli.errors import NOTHING


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--git", is_flag=True, help="Also write .gitattributes for a store shared through git.")
@click.option("--json", "as_json", is_flag=True, help="Print {store, created}.")
@click.pass_context
def init(ctx: click.Context, directory: Path | None, git: bool, as_json: bool) -> None:
    """Create a store in DIRECTORY (default: --dir or $MEM_DIR if given, else ./.mem).

    A store is mem.yaml (settings), memories/ (one YAML file per memory), vectors/ (each memory's
    embedding: a cache to commit with the memories, so a clone need not embed them again) and .index/
    (caches, git-ignored). Run it again on an existing store to repair a missing piece; nothing is lost.
    """
    import os

    from memcli.store.folder import Store

    env: Env = ctx.obj
    root = directory or env.store_dir or (Path(os.environ["MEM_DIR"]) if os.environ.get("MEM_DIR") else Path(".mem"))
    store = Store(root.expanduser().resolve())
    created = store.init(git=git)
    if as_json:
        echo_json({"store": str(store.root), "created": created})
    else:
        click.echo(str(store.root))
    click.echo(("mem: initialised a new store at " if created else "mem: store already exists at ") + str(store.root),
               err=True)
    if git or not store.private:  # shared through git: say what to commit
        click.echo(f"mem: commit mem.yaml, .gitignore, {'.gitattributes, ' if git else ''}memories/ and vectors/ "
                   "(the embeddings, so a clone need not make them again)", err=True)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print {store, exists, chosen_by}.")
@pass_env
def path(env: Env, as_json: bool) -> None:
    """Print the folder of the store mem would use here (and say why on stderr with -v)."""
    from memcli.store.folder import Store, locate_store

    root, reason = locate_store(env.store_dir)
    exists = Store(root).exists
    if as_json:
        echo_json({"store": str(root), "exists": exists, "chosen_by": reason})
    else:
        click.echo(str(root))
    if env.verbose:
        click.echo(f"mem: using {root}: {reason}", err=True)
    if not exists:
        click.echo("mem: that store does not exist yet; `mem add` or `mem init` creates it", err=True)


@click.command()
@text_options
@tag_option("Tag the memory (repeatable, or a,b).")
@click.option("--allow-duplicate", is_flag=True, help="Store it even if the same text is already stored.")
@click.option("--supersedes", metavar="ID", shell_complete=completion.ids,
              help="The new memory replaces this one (as `mem update ID` would).")
@click.option("--on-similar", type=click.Choice(ON_SIMILAR),
              help="When a current memory says nearly the same: keep both (and say so), update it, or ask "
                   "(default: on_similar in mem.yaml, keep).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored memory as JSON instead of its id.")
@pass_env
def add(env: Env, text, file, source, no_compress, defer, local_only, no_gitignore, tags, allow_duplicate,
        supersedes, on_similar, as_json) -> None:
    """Remember TEXT (several words are joined; `-` or a pipe reads stdin).

    Prints the new memory's id. If the same text is already stored, prints that id instead and
    stores nothing but the new tags, which it adds to that memory. Text of at least 50
    characters (mem.yaml compress_min_chars) also gets a compressed form made by the local
    model, what a reader gets by default. Secrets (keys, tokens, passwords) are replaced by
    [REDACTED:<kind>] first; a --file or --source that .memignore names is refused (exit 7).
    A current memory that says nearly the same is named on stderr ("similar to ID (score)").

    \b
      mem add "We moved billing from Heroku to Fly.io in March" -t infra
      git log -1 --format=%B | mem add -t build
      mem add --file notes/scraper.md -t scraper
      mem add "staging Postgres listens on 5433" --supersedes 8ZK
    """
    from memcli.core.writing import Text, write

    mem = env.mem()
    body, source = read_text(mem, text, file, source, no_gitignore)
    with ProgressBars(delay=0) as progress:
        options = compress_options(mem, no_compress=no_compress, defer=defer, progress=progress)
        written = write(mem, Text(body, tags, source, local_only=local_only), allow_duplicate=allow_duplicate,
                        supersedes=supersedes, compressing=options,
                        on_similar=on_similar or mem.settings.on_similar,
                        confirm=partial(_confirm_update, mem.catalog.short_id) if interactive() else None)
    announce_new_store(env)
    after_write(mem, written, options, defer)
    say_compressed(written, progress.enabled)
    say_written(written, as_json, mem.catalog.short_id)


def _confirm_update(short_id, close) -> bool:
    click.echo(f"mem: similar to {short_id(close.memory.id)} ({close.score:.2f}): "
               f"{render.one_line(close.memory.content)}", err=True)
    return click.confirm("Store it as the new version of that memory?", default=False, err=True)


@click.command()
@click.argument("memory_id", metavar="ID", shell_complete=completion.ids)
@click.option("--raw", is_flag=True, help="Show the raw text instead of the compressed form.")
@click.option("--history", is_flag=True, help="Every version, newest first.")
@with_raw_option
@output_options(one_memory=True)
@pass_env
def show(env: Env, memory_id: str, raw: bool, history: bool, with_raw: bool, fmt: str | None) -> None:
    """Show one memory (ID: a short id, the full id or a unique beginning of it): its current version, even when ID names an
    earlier one; --history lists every version. With --raw and stdout not a terminal, only the raw text."""
    from memcli.core.reading import get
    from memcli.index.versions import chain, heads

    mem = env.mem()
    named = get(mem, memory_id)
    versions = chain(mem.catalog, named.id)

    def row(memory):
        return memory.to_contract(raw=raw, include_raw=with_raw)

    if history:
        emit(versions, fmt, row=row, human=lambda m: render.line(m, env.short_id(m.id), raw=raw))
        return
    tips = heads(versions)
    earlier = len(versions) - len(tips)
    if named not in tips:
        click.echo(f"mem: {env.short_id(named.id)} was replaced; showing the current version", err=True)
    if len(tips) > 1:
        click.echo(f"mem: {len(tips)} current versions (a fork, from a merge): `mem update` either to resolve it",
                   err=True)
    # Piped, `--raw` is the text alone, so `mem show ID --raw | sed ... | mem update ID -` keeps no header.
    text_only = raw and not sys.stdout.isatty()
    emit(tips, fmt, row=lambda m: row(m) | ({"replaced": earlier} if earlier else {}),
         human=lambda m: m.raw if text_only else render.full(m, raw=raw, replaced=earlier), single=len(tips) == 1)


@click.command(name="ls")
@filter_options
@versions_option
@limit_option(None, "At most N memories.")
@click.option("--raw", is_flag=True, help="Show raw text instead of the compressed form.")
@with_raw_option
@output_options
@pass_env
def ls(env: Env, tags, since, until, source, all_versions, limit, raw, with_raw, fmt) -> None:
    """List memories, newest first (current versions only, unless --all-versions)."""
    from memcli.core.reading import listing

    mem = env.mem()
    memories = listing(mem, make_filters(mem, tags, since, until, source, all_versions), limit)
    emit(memories, fmt, row=lambda m: m.to_contract(raw=raw, include_raw=with_raw),
         human=lambda m: render.line(m, env.short_id(m.id), raw=raw))


@click.command()
@click.argument("memory_ids", metavar="ID...", nargs=-1, required=True, shell_complete=completion.ids)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print {deleted: [ids]} on stdout.")
@pass_env
def rm(env: Env, memory_ids, yes: bool, as_json: bool) -> None:
    """Delete memories, each with all its versions. Every ID must name exactly one memory, or nothing
    is deleted. A memory that replaces separate memories (`mem doctor` names it) goes alone: those are
    not its versions."""
    from memcli.core.reading import resolve
    from memcli.core.writing import remove
    from memcli.index.versions import own_versions

    mem = env.mem()
    chains = {memory.id: own_versions(mem.catalog, memory.id) for memory in resolve(mem, memory_ids)}
    short = {m.id: env.short_id(m.id) for versions in chains.values() for m in versions}  # named before they go
    memories = list({m.id: m for versions in chains.values() for m in versions}.values())
    hidden = {m.id: [env.short_id(old) for old in m.supersedes if old not in short and mem.catalog.exists(old)]
              for m in memories}  # separate memories it named as replaced: they stay, and show again
    if not yes and interactive():
        for memory in memories:
            click.echo(render.line(memory, env.short_id(memory.id)), err=True)
        noun = "memory" if len(memories) == 1 else "memories"
        if not click.confirm(f"Delete {len(memories)} {noun}?", err=True):
            raise click.exceptions.Exit(NOTHING)
    remove(mem, memories)
    if as_json:
        echo_json({"deleted": [memory.id for memory in memories]})
    for memory_id, versions in chains.items():
        others = [short[m.id] for m in versions if m.id != memory_id]
        plural = "s" if len(others) != 1 else ""
        more = f" with its {len(others)} other version{plural}: {', '.join(others)}" if others else ""
        click.echo(f"mem: deleted {short[memory_id]}{more}", err=True)
    for memory_id, kept in hidden.items():
        if kept:
            click.echo(f"mem: kept {', '.join(kept)}: {short[memory_id]} named them as versions it replaced, but "
                       "they are separate memories", err=True)


COMMANDS = [init, path, add, show, ls, rm]
