"""`mem ignore check`: the denylist, explained (which files mem never reads, and the rule that decides)."""

from __future__ import annotations

from pathlib import Path

import click

from memcli.cli.common import Env, MemGroup, emit, pass_env
from memcli.cli.options import no_gitignore_option, output_options
from memcli.errors import NOTHING


@click.group(cls=MemGroup)
def ignore():
    """The denylist: which files mem never reads (.memignore, in .gitignore syntax)."""


@ignore.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True)
@click.option("-v", "--verbose", is_flag=True, help="Show the deciding rule as FILE:LINE:PATTERN<TAB>PATH.")
@click.option("-n", "--non-matching", is_flag=True, help="Also show paths no rule matches (implies -v).")
@click.option("--root", type=click.Path(file_okay=False, exists=True, path_type=Path), metavar="DIR",
              help="Check as `mem ingest DIR` would: DIR's .memignore files apply too.")
@output_options
@no_gitignore_option
@pass_env
def check(env: Env, paths, verbose, non_matching, root, fmt, no_gitignore) -> None:
    """Say which PATHs mem would refuse to read, like `git check-ignore`.

    Prints the ignored paths; with -v, the rule that decides each matched path (a `!` rule that
    re-includes it too); with -n, `::<TAB>PATH` for paths no rule matches. --json/--jsonl give
    every path with `ignored`, `source`, `line` and `pattern`. Exits 0 if any PATH is ignored, else 1.
    """
    mem = env.mem()
    mem.gitignore = not no_gitignore
    rules = mem.gate.ignore_rules(walk_root=root)
    decided = [(path, rules.match(path)) for path in paths]
    if fmt:
        emit(decided, fmt, row=_row, human=str)
    else:
        verbose = verbose or non_matching
        for path, found in decided:
            if found is not None and found.ignored and not verbose:
                click.echo(path)
            elif verbose and found is not None:
                click.echo(str(found))
            elif non_matching and found is None:
                click.echo(f"::\t{path}")
    if not any(found is not None and found.ignored for _, found in decided):
        raise click.exceptions.Exit(NOTHING)


def _row(decided) -> dict:
    path, found = decided
    if found is None:
        return {"path": path, "ignored": False, "source": None, "line": None, "pattern": None, "via": None}
    return {"path": path, "ignored": found.ignored, "source": found.source_name, "line": found.line,
            "pattern": found.pattern, "via": found.via}


COMMANDS = [ignore]
