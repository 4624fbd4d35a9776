"""The everyday commands (init, path, add, show, ls, rm) and the options other commands share with them."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memcli.cli import completion, render
from memcli.cli.common import (
    Env,
    ProgressBars,
    echo_json,
    emit,
    limit_option,
    no_gitignore_option,
    output_options,
    pass_env,
    say_redacted,
    with_raw_option,
)
from memcli.config import ON_SIMILAR
from memcli.errors import NOTHING


def interactive() -> bool:
    """Whether a person is at the keyboard (prompts go to stderr only then)."""
    return sys.stdin.isatty()


def tag_option(help: str):
    """-t/--tag, completed from the tags in use."""
    return click.option("-t", "--tag", "tags", multiple=True, metavar="TAG", shell_complete=completion.tags, help=help)


def filter_options(func):
    """The filters that `ls`, `search`, `context` and `export` share."""
    func = click.option("--source", metavar="PATH|GLOB",
                        help="Only memories from this file (and its chunks), folder or glob, given from the "
                             "current folder (sources are written relative to the project).")(func)
    func = click.option("--until", metavar="WHEN", help="Created at or before WHEN (same forms as --since).")(func)
    func = click.option("--since", metavar="WHEN",
                        help="Created at or after WHEN: 2026-11-29, 30m (m is minutes), 12h, 3d, 2w, 1mo, 1y, "
                             "'last week', yesterday.")(func)
    func = tag_option("Only memories with this tag (repeat for all of several).")(func)
    return func


def versions_option(func):
    """`ls`, `search` and `context` return current versions only unless asked (memcli/features/versions.py)."""
    return click.option("--all-versions", is_flag=True, help="Include earlier versions that an update replaced.")(func)


def make_filters(mem, tags, since, until, source, all_versions=False):
    """The filters typed on the command line; a --source path is read from the working directory."""
    from memcli.index.filters import Filters

    return Filters.parse(list(tags), since, until, source, all_versions=all_versions, home=mem.home)


def text_options(func):
    """Where the text of `add` and `update` comes from, and how it is stored."""
    func = no_gitignore_option(func)
    func = click.option("--local-only", is_flag=True,
                        help="Never send this memory to a compression server (mem.yaml `provider`); compress it "
                             "here.")(func)
    func = click.option("--defer", is_flag=True, help="Store now, compress later with `mem compress --pending`.")(func)
    func = click.option("--no-compress", is_flag=True, help="Store the raw text only.")(func)
    func = click.option("--source", metavar="PATH|URI",
                        help="Where the memory came from (default: the --file path). A file or folder that exists "
                             "is written relative to the project (the folder around .mem/), else as given.")(func)
    func = click.option("-f", "--file", "file", type=click.Path(path_type=Path), help="Read the text from a file.")(func)
    func = click.argument("text", nargs=-1)(func)
    return func


def read_text(mem, text, file, source, no_gitignore=False):
    """(the text, its source) from arguments, `-` or a pipe, or --file (refused when .memignore names it);
    a source that names a local file is written as memcli.store.sources says."""
    from memcli.store.sources import from_typed, written
    from memcli.util.textio import read_stream

    mem.gitignore = not no_gitignore
    limit = mem.settings.max_input_bytes
    if file is not None and text:
        raise click.UsageError("give the text or --file, not both")
    source = from_typed(mem.home, source) if source else None
    if file is not None:
        return mem.gate.read_file(file, limit), source or written(mem.home, file)
    if text == ("-",) or (not text and not interactive()):
        return read_stream(sys.stdin.buffer, "stdin", limit), source
    if text:
        return " ".join(text), source
    raise click.UsageError("nothing to add: give the text as arguments, pipe it in, or use --file")


def say_versions(written, short_id) -> None:
    """stderr: what a write replaced, and which current memories it is close to (the hint names the
    short id: a beginning of the id would be ambiguous between memories made in the same second)."""
    if written.replaced:
        ids = ", ".join(m.id for m in written.replaced)
        fork = " (the fork is resolved)" if len(written.replaced) > 1 else ""
        click.echo(f"mem: {written.memory.id} replaces {ids}{fork}", err=True)
    if written.replaced:
        return
    for close in written.similar:
        click.echo(f"mem: similar to {close.memory.id} ({close.score:.2f}): "
                   f"{render.one_line(close.memory.content)[:70]}", err=True)
    if written.similar:
        click.echo(f"mem: if it replaces that memory, run the same add with --supersedes "
                   f"{short_id(written.similar[0].memory.id)} (it stores nothing twice)", err=True)


def announce_new_store(env: Env) -> None:
    mem = env.mem()
    if mem.created_store:
        click.echo(f"mem: created a new store at {mem.store.root}", err=True)


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--git", is_flag=True, help="Also write .gitattributes for a store shared through git.")
@click.option("--json", "as_json", is_flag=True, help="Print {store, created}.")
@click.pass_context
def init(ctx: click.Context, directory: Path | None, git: bool, as_json: bool) -> None:
    """Create a store in DIRECTORY (default: --dir or $MEM_DIR if given, else ./.mem).

    A store is mem.yaml (settings), memories/ (one YAML file per memory) and .index/ (caches,
    git-ignored). Run it again on an existing store to repair a missing piece; nothing is lost.
    """
    import os

    from memcli.store.files import Store

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


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print {store, exists, chosen_by}.")
@pass_env
def path(env: Env, as_json: bool) -> None:
    """Print the folder of the store mem would use here (and say why on stderr with -v)."""
    from memcli.store.files import Store, locate_store

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
      mem add "staging Postgres listens on 5433" --supersedes 01JDQ4
    """
    from memcli.core.mem import Compressing
    from memcli.features.versions import write

    mem = env.mem()
    body, source = read_text(mem, text, file, source, no_gitignore)
    with ProgressBars(delay=0) as progress:
        written = write(mem, body, tags=tags, source=source, allow_duplicate=allow_duplicate, supersedes=supersedes,
                        local_only=local_only,
                        compressing=Compressing(enabled=not no_compress, defer=defer, progress=progress),
                        on_similar=on_similar or mem.settings.on_similar,
                        confirm=_confirm_update if interactive() else None)
    announce_new_store(env)
    say_compressed(written, progress.enabled)
    say_written(written, as_json, mem.catalog.short_id)


def say_compressed(written, on_a_terminal: bool) -> None:
    """The one-line summary after the progress of a long write, on a terminal only."""
    info = written.memory.compression or {}
    if on_a_terminal and not written.duplicate and info.get("status") == "done":
        click.echo(f"mem: compressed {info.get('raw_tokens')} → {info.get('tokens')} tokens ({info.get('method')})",
                   err=True)


def say_written(written, as_json: bool, short_id) -> None:
    """What `add` and `update` print: the id (or JSON) on stdout, what happened on stderr."""
    say_redacted(written.redacted)
    if written.tags_added:
        click.echo(f"mem: already stored as {written.memory.id}; merged the new tags into it: "
                   f"{', '.join(written.tags_added)}", err=True)
    elif written.duplicate:
        click.echo(f"mem: already stored as {written.memory.id} (--allow-duplicate stores it again)", err=True)
    say_versions(written, short_id)
    if as_json:
        extra = {"replaces": [m.id for m in written.replaced], "similar": [s.to_contract() for s in written.similar]}
        payload = written.memory.to_contract() | {"duplicate": written.duplicate, "redacted": written.redacted,
                                                  "tags_added": written.tags_added}
        echo_json(payload | {k: v for k, v in extra.items() if v})
    else:
        click.echo(written.memory.id)


def _confirm_update(close) -> bool:
    click.echo(f"mem: similar to {close.memory.id} ({close.score:.2f}): {render.one_line(close.memory.content)}",
               err=True)
    return click.confirm("Store it as the new version of that memory?", default=False, err=True)


@click.command()
@click.argument("memory_id", metavar="ID", shell_complete=completion.ids)
@click.option("--raw", is_flag=True, help="Show the raw text instead of the compressed form.")
@click.option("--history", is_flag=True, help="Every version, newest first.")
@with_raw_option
@output_options
@pass_env
def show(env: Env, memory_id: str, raw: bool, history: bool, with_raw: bool, fmt: str | None) -> None:
    """Show one memory (ID: a short id, the full id or a unique beginning of it): its current version, even when ID names an
    earlier one; --history lists every version."""
    from memcli.features.versions import chain, heads

    mem = env.mem()
    named = mem.get(memory_id)
    versions = chain(mem, named.id)

    def row(memory):
        return memory.to_contract(raw=raw, include_raw=with_raw)

    if history:
        emit(versions, fmt, row=row, human=lambda m: render.line(m, env.short_id(m.id), raw=raw))
        return
    tips = heads(versions)
    earlier = len(versions) - len(tips)
    if named not in tips:
        click.echo(f"mem: {named.id} was replaced; showing the current version", err=True)
    if len(tips) > 1:
        click.echo(f"mem: {len(tips)} current versions (a fork, from a merge): `mem update` either to resolve it",
                   err=True)
    emit(tips, fmt, row=lambda m: row(m) | ({"replaced": earlier} if earlier else {}),
         human=lambda m: render.full(m, raw=raw, replaced=earlier), single=len(tips) == 1)


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
    mem = env.mem()
    memories = mem.list(make_filters(mem, tags, since, until, source, all_versions), limit)
    emit(memories, fmt, row=lambda m: m.to_contract(raw=raw, include_raw=with_raw),
         human=lambda m: render.line(m, env.short_id(m.id), raw=raw))


@click.command()
@click.argument("memory_ids", metavar="ID...", nargs=-1, required=True, shell_complete=completion.ids)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print {deleted: [ids]} on stdout.")
@pass_env
def rm(env: Env, memory_ids, yes: bool, as_json: bool) -> None:
    """Delete memories, each with all its versions. Every ID must name exactly one memory, or nothing
    is deleted."""
    from memcli.features.versions import chain

    mem = env.mem()
    chains = {memory.id: chain(mem, memory.id) for memory in mem.resolve(memory_ids)}
    memories = list({m.id: m for versions in chains.values() for m in versions}.values())
    if not yes and interactive():
        for memory in memories:
            click.echo(render.line(memory, env.short_id(memory.id)), err=True)
        noun = "memory" if len(memories) == 1 else "memories"
        if not click.confirm(f"Delete {len(memories)} {noun}?", err=True):
            raise click.exceptions.Exit(NOTHING)
    mem.remove(memories)
    if as_json:
        echo_json({"deleted": [memory.id for memory in memories]})
    for memory_id, versions in chains.items():
        others = [m.id for m in versions if m.id != memory_id]
        plural = "s" if len(others) != 1 else ""
        more = f" with its {len(others)} other version{plural}: {', '.join(others)}" if others else ""
        click.echo(f"mem: deleted {memory_id}{more}", err=True)


COMMANDS = [init, path, add, show, ls, rm]
