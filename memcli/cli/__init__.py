"""`mem`: the command-line entry point. Each command parses, calls memcli.api, and formats."""

from __future__ import annotations

from pathlib import Path

import click

from memcli import __version__
from memcli.cli import (
    assist_cmd,
    compress_cmd,
    core,
    doctor_cmd,
    edit_cmd,
    ingest_cmd,
    search_cmd,
    status_cmd,
    tag_cmd,
    thread_cmd,
    transfer_cmd,
    versions_cmd,
)
from memcli.cli.common import Env, MemGroup, setup_logging
from memcli.cli.models_cmd import models


@click.group(cls=MemGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dir", "store_dir", type=click.Path(path_type=Path), metavar="PATH",
              help="Use the store at PATH (default: $MEM_DIR, then the nearest .mem/ or mem.yaml upward, "
                   "then the user store).")
@click.option("-v", "--verbose", count=True, help="Say more on stderr (-vv includes llama.cpp's own logs).")
@click.version_option(__version__, prog_name="mem")
@click.pass_context
def main(ctx: click.Context, store_dir: Path | None, verbose: int) -> None:
    """mem: a command-line memory whose memories cost fewer tokens to read.

    Every memory is a plain YAML file holding your text and a shorter form made on this machine by a
    small local model. Data goes to stdout, messages to stderr; listings take --json and --jsonl.

    \b
    Quick tour:
      mem add "Amazon blocks IPs after about 30 requests per second" -t scraper
      git log -1 --format=%B | mem add -t build
      mem ls --tag scraper
      mem show 8ZK           (the short id listings show; full ids work too)
      mem export > backup.jsonl
    """
    setup_logging(verbose)
    # `main(obj=providers)` runs the CLI on other providers (tests pass fakes this way).
    ctx.obj = Env(store_dir, verbose, providers=ctx.obj)


for command in (core.COMMANDS + edit_cmd.COMMANDS + transfer_cmd.COMMANDS + search_cmd.COMMANDS
                + compress_cmd.COMMANDS + assist_cmd.COMMANDS + doctor_cmd.COMMANDS + ingest_cmd.COMMANDS + tag_cmd.COMMANDS + thread_cmd.COMMANDS
                + status_cmd.COMMANDS + versions_cmd.COMMANDS + [models]):
    main.add_command(command)
