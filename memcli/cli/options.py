"""The options several commands share, and where the text of a write comes from (arguments, a pipe, --file)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memcli.cli import completion


def output_options(func=None, *, one_memory: bool = False):
    """--json / --jsonl on every listing; human text otherwise. `one_memory`: the command shows one memory
    (`mem show`), which --json gives as an object."""
    def add(func):
        func = click.option("--jsonl", "fmt", flag_value="jsonl", help="One JSON object per line.")(func)
        return click.option("--json", "fmt", flag_value="json",
                            help="A JSON object for one memory (an array for several)." if one_memory
                            else "A JSON array.")(func)

    return add(func) if func is not None else add


def with_raw_option(func):
    """--with-raw: the read contract's opt-in for `content_raw` beside `content`."""
    return click.option("--with-raw", is_flag=True,
                        help="In --json/--jsonl, also give the raw text as content_raw where it differs.")(func)


def no_gitignore_option(func):
    """--no-gitignore: every command that decides paths takes it (.gitignore counts by default)."""
    return click.option("--no-gitignore", is_flag=True,
                        help="Inside a git work tree, do not treat .gitignore'd files as ignored.")(func)


def limit_option(default: int | None, help: str, *aliases: str):
    """-n/--limit: the one way every command that lists says how many. Where every memory is the default
    (`ls`, `export`), 0 asks for that too, rather than being an error."""
    if default is None:
        return click.option("-n", *aliases, "--limit", "limit", type=click.IntRange(min=0), metavar="N",
                            callback=lambda ctx, param, value: value or None, help=f"{help} 0: all of them.")
    return click.option("-n", *aliases, "--limit", "limit", type=click.IntRange(min=1), default=default,
                        show_default=True, metavar="N", help=help)


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
    """`ls`, `search` and `context` return current versions only unless asked (memcli/index/versions.py)."""
    return click.option("--all-versions", is_flag=True, help="Include earlier versions that an update replaced.")(func)


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


def make_filters(mem, tags, since, until, source, all_versions=False):
    """The filters typed on the command line; a --source path is read from the working directory."""
    from memcli.index.filters import Filters

    return Filters.parse(list(tags), since, until, source, all_versions=all_versions, home=mem.home)


def query_text(words: tuple[str, ...]) -> str:
    """Several words are one query, as `mem add` takes several words as one text."""
    return " ".join(words)


def interactive() -> bool:
    """Whether a person is at the keyboard (prompts go to stderr only then)."""
    return sys.stdin.isatty()


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
