"""The everyday commands: init, path, add, show, ls, rm, edit, export, import."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import click

from memcli.cli import render
from memcli.cli.common import (
    Env,
    echo_json,
    emit,
    limit_option,
    no_gitignore_option,
    output_options,
    pass_env,
    say_redacted,
)
from memcli.errors import NOTHING, InputError, InvalidMemory, MemError, Refused


def interactive() -> bool:
    """Whether a person is at the keyboard (prompts go to stderr only then)."""
    return sys.stdin.isatty()


def filter_options(func):
    """The filters that `ls`, `search`, `context` and `export` share."""
    func = click.option("--source", metavar="GLOB", help="Only memories whose source matches GLOB.")(func)
    func = click.option("--until", metavar="WHEN", help="Created at or before WHEN (same forms as --since).")(func)
    func = click.option("--since", metavar="WHEN",
                        help="Created at or after WHEN: 2026-11-29, 30m (m is minutes), 12h, 3d, 2w, 1mo, 1y, "
                             "'last week', yesterday.")(func)
    func = click.option("-t", "--tag", "tags", multiple=True, metavar="TAG",
                        help="Only memories with this tag (repeat for all of several).")(func)
    return func


def make_filters(tags, since, until, source):
    from memcli.index.filters import Filters
    from memcli.store.memory import normalise_tags
    from memcli.when import parse_when

    return Filters(
        tags=tuple(normalise_tags(list(tags))),
        since=parse_when(since) if since else None,
        until=parse_when(until, end_of_day=True) if until else None,
        source=source,
    )


def announce_new_store(env: Env) -> None:
    mem = env.mem()
    if mem.created_store:
        click.echo(f"mem: created a new store at {mem.store.root}", err=True)


@click.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--git", is_flag=True, help="Also write .gitattributes for a store shared through git.")
@click.pass_context
def init(ctx: click.Context, directory: Path | None, git: bool) -> None:
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
    click.echo(str(store.root))
    click.echo(("mem: initialised a new store at " if created else "mem: store already exists at ") + str(store.root), err=True)


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
@click.argument("text", nargs=-1)
@click.option("-f", "--file", "file", type=click.Path(path_type=Path), help="Read the text from a file.")
@click.option("-t", "--tag", "tags", multiple=True, metavar="TAG", help="Tag the memory (repeatable, or a,b).")
@click.option("--source", metavar="PATH|URI", help="Where the memory came from (default: the --file path).")
@click.option("--allow-duplicate", is_flag=True, help="Store it even if the same text is already stored.")
@click.option("--no-compress", is_flag=True, help="Store the raw text only.")
@click.option("--defer", is_flag=True, help="Store now, compress later with `mem compress --pending`.")
@click.option("--local-only", is_flag=True,
              help="Never send this memory to a compression server (mem.yaml `provider`); compress it here.")
@click.option("--json", "as_json", is_flag=True, help="Print the stored memory as JSON instead of its id.")
@no_gitignore_option
@pass_env
def add(env: Env, text, file, tags, source, allow_duplicate, no_compress, defer, local_only, as_json,
        no_gitignore) -> None:
    """Remember TEXT (several words are joined; `-` or a pipe reads stdin).

    Prints the new memory's id. If the same text is already stored, prints that id instead and
    stores nothing but the new tags, which it adds to that memory. Long text (mem.yaml compress_min_chars, 400 by default) also gets a compressed
    form made by the local model. Secrets (keys, tokens, passwords) are replaced by
    [REDACTED:<kind>] first; a --file or --source that .memignore names is refused (exit 7).

    \b
      mem add "We moved billing from Heroku to Fly.io in March" -t infra
      git log -1 --format=%B | mem add -t build
      mem add --file notes/scraper.md -t scraper
    """
    from memcli.textio import read_stream

    mem = env.mem()
    mem.gitignore = not no_gitignore
    limit = mem.settings.max_input_bytes
    if file is not None and text:
        raise click.UsageError("give the text or --file, not both")
    if file is not None:
        body = mem.gate.read_file(file, limit)
        source = source or str(file)
    elif text == ("-",) or (not text and not interactive()):
        body = read_stream(sys.stdin.buffer, "stdin", limit)
    elif text:
        body = " ".join(text)
    else:
        raise click.UsageError("nothing to add: give the text as arguments, pipe it in, or use --file")
    from memcli.api import Compressing

    result = mem.add(body, tags=tags, source=source, allow_duplicate=allow_duplicate, local_only=local_only,
                     compressing=Compressing(enabled=not no_compress, defer=defer))
    announce_new_store(env)
    say_redacted(result.redacted)
    if result.tags_added:
        click.echo(f"mem: already stored as {result.memory.id}; merged the new tags into it: {', '.join(result.tags_added)}",
                   err=True)
    elif result.duplicate:
        click.echo(f"mem: already stored as {result.memory.id} (--allow-duplicate stores it again)", err=True)
    if as_json:
        payload = result.memory.to_contract() | {"duplicate": result.duplicate, "redacted": result.redacted,
                                                 "tags_added": result.tags_added}
        echo_json(payload)
    else:
        click.echo(result.memory.id)


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option("--raw", is_flag=True, help="Show the raw text instead of the compressed form.")
@output_options
@pass_env
def show(env: Env, memory_id: str, raw: bool, fmt: str | None) -> None:
    """Show one memory (ID may be any unique prefix)."""
    memory = env.mem().get(memory_id)
    emit([memory], fmt, row=lambda m: m.to_contract(raw=raw), human=lambda m: render.full(m, raw=raw), single=True)


@click.command(name="ls")
@filter_options
@limit_option(None, "At most N memories.")
@click.option("--raw", is_flag=True, help="Show raw text instead of the compressed form.")
@output_options
@pass_env
def ls(env: Env, tags, since, until, source, limit, raw, fmt) -> None:
    """List memories, newest first."""
    memories = env.mem().list(make_filters(tags, since, until, source), limit)
    emit(memories, fmt, row=lambda m: m.to_contract(raw=raw), human=lambda m: render.line(m, env.short_id(m.id), raw=raw))


@click.command()
@click.argument("memory_ids", metavar="ID...", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print {deleted: [ids]} on stdout.")
@pass_env
def rm(env: Env, memory_ids, yes: bool, as_json: bool) -> None:
    """Delete memories. Every ID must name exactly one memory, or nothing is deleted."""
    mem = env.mem()
    memories = mem.resolve(memory_ids)
    if not yes and interactive():
        for memory in memories:
            click.echo(render.line(memory, env.short_id(memory.id)), err=True)
        noun = "memory" if len(memories) == 1 else "memories"
        if not click.confirm(f"Delete {len(memories)} {noun}?", err=True):
            raise click.exceptions.Exit(NOTHING)
    mem.remove(memories)
    if as_json:
        echo_json({"deleted": [memory.id for memory in memories]})
    for memory in memories:
        click.echo(f"mem: deleted {memory.id}", err=True)


@click.command()
@click.argument("memory_id", metavar="ID")
@pass_env
def edit(env: Env, memory_id: str) -> None:
    """Open a memory's YAML file in $EDITOR; it is checked before it is saved.

    If the raw text changed, a new compressed form is made. An invalid edit is never saved, nor kept:
    on a terminal you may reopen it. The editor works on a private temp file inside the store
    (.index/), removed when mem is done whatever happens.
    """
    from memcli.fsutil import scratch_file

    mem = env.mem()
    memory = mem.get(memory_id)
    with scratch_file(mem.store.index_dir / f"edit-{memory.id}.yaml", mem.edit_text(memory)) as path:
        while True:
            edited = _edit(path)
            if edited is None:
                click.echo("mem: no change", err=True)
                return
            try:
                saved = mem.save_edit(memory, edited)
            except (InvalidMemory, InputError, Refused) as exc:
                click.echo(f"mem: error: {exc}", err=True)
                if interactive() and click.confirm("Reopen the editor?", default=True, err=True):
                    continue
                raise type(exc)("the edit was not saved, nor kept") from None
            say_redacted(saved.redacted)
            click.echo("mem: no change" if saved.memory is None else f"saved {memory.id}", err=True)
            return


def _edit(path: Path) -> str | None:
    """The file's text after the editor closed, or None when it was not saved."""
    import os

    before = os.stat(path).st_mtime_ns - 2_000_000_000  # an editor that saves within the same tick still counts
    os.utime(path, ns=(before, before))
    click.edit(filename=str(path))
    if os.stat(path).st_mtime_ns == before:
        return None
    return path.read_text(encoding="utf-8")


@click.command()
@filter_options
@limit_option(None, "At most N memories (the oldest N).")
@pass_env
def export(env: Env, tags, since, until, source, limit) -> None:
    """Write memories, with every field, as JSON lines (oldest first) to stdout; the filters are those
    of `mem ls`. `mem import` reads it back."""
    from memcli.transfer import export

    for record in export(env.mem(), make_filters(tags, since, until, source), limit):
        click.echo(json.dumps(record, ensure_ascii=False))


@click.command(name="import")
@click.argument("source", required=False, default="-", metavar="[FILE|-]")
@click.option("--no-compress", is_flag=True, help="Store records without a compressed form as raw only.")
@click.option("--defer", is_flag=True, help="Queue compression for `mem compress --pending`.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@pass_env
def import_(env: Env, source: str, no_compress: bool, defer: bool, as_json: bool) -> None:
    """Read memories as JSON lines (as `mem export` writes them) from FILE or stdin.

    Ids and timestamps are kept; a memory whose id or text is already stored is skipped. Lines that
    are not valid records are reported with their line number; the others are still imported.
    Records are redacted like `mem add` (a redacted one gets a new compressed form); a record that
    keeps a private key, or whose source .memignore names, is refused (exit 7 if nothing was invalid).
    """
    mem = env.mem()
    if source == "-":
        stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8")
    else:
        file = Path(source)
        if not file.is_file():
            raise InputError(f"no such file: {source}")
        stream = file.open(encoding="utf-8")
    from memcli.api import Compressing
    from memcli.transfer import import_lines

    with stream:
        report = import_lines(mem, stream, Compressing(enabled=not no_compress, defer=defer))
    announce_new_store(env)
    for error in report.invalid + report.refused:
        click.echo(f"mem: skipped {error}", err=True)
    say_redacted(report.redacted)
    summary = {"imported": report.imported, "duplicates": report.duplicates, "invalid": len(report.invalid),
               "refused": len(report.refused), "redacted": report.redacted}
    if as_json:
        echo_json(summary)
    refused = f", {len(report.refused)} refused" if report.refused else ""
    click.echo(f"mem: imported {report.imported}, skipped {report.duplicates} already stored, "
               f"{len(report.invalid)} invalid{refused}", err=True)
    if report.invalid:
        raise click.exceptions.Exit(MemError.exit_code)
    if report.refused:
        raise click.exceptions.Exit(Refused.exit_code)


COMMANDS = [init, path, add, show, ls, rm, edit, export, import_]
