"""`mem`: the command-line entry point. Each command parses, calls memcli.core.mem, and formats."""

from __future__ import annotations

import atexit
import gc
import os
from pathlib import Path

# A command's objects go with its process. The interpreter's teardown would first walk all of them with
# its garbage collector, several times: 30 ms of a cold search at 10,000 memories, 17 ms of `mem ls`,
# against 10 and 5 frozen (bench/exit_cost.py). Frozen, they are left out of those walks; registered
# first, this runs last of the exit hooks, so every other hook (closing models, flushing logs) still runs
# as before, and what must be closed is closed before (the catalog: Env.close).
atexit.register(gc.freeze)
# numpy's OpenBLAS starts a thread at import that spins on the other core for a while: a cold search
# imports numpy in two processes at once (memcli/util/forked.py), and mem's arrays are too small to gain
# from a second BLAS thread. Read by OpenBLAS when it loads, in this process and its children.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click  # noqa: E402

from memcli import __version__  # noqa: E402
from memcli.cli.common import Env, LazyGroup, setup_logging

# The module (under memcli.cli, in its COMMANDS) of each command: only the one a command line names is
# imported, so `mem search` does not import what `mem thread`, `mem ingest` or `mem mcp` need.
COMMANDS = {
    **dict.fromkeys(["init", "path", "add", "show", "ls", "rm"], "memory_cmd"),
    "edit": "edit_cmd",
    **dict.fromkeys(["export", "import"], "transfer_cmd"),
    **dict.fromkeys(["search", "reindex"], "search_cmd"),
    **dict.fromkeys(["compress", "stats"], "compress_cmd"),
    "context": "context_cmd",
    "mcp": "mcp_cmd",
    "doctor": "doctor_cmd",
    "ingest": "ingest_cmd",
    "ignore": "ignore_cmd",
    **dict.fromkeys(["tag", "tags"], "tag_cmd"),
    "thread": "thread_cmd",
    "status": "status_cmd",
    "queue": "queue_cmd",
    "share": "share_cmd",
    "update": "update_cmd",
    "ui": "ui_cmd",
    "models": "models_cmd",
    **dict.fromkeys(["hook", "capture", "hooks"], "capture_cmd"),
}

# Commands that only read a store: with --dir naming a folder that is not there, an error rather than an
# empty answer (a write makes the store; `mem doctor` says so itself).
READS = {"ls", "show", "search", "context", "tags", "export", "stats", "status", "rm", "tag", "compress",
         "reindex", "edit", "update", "share", "ui"}


@click.group(cls=LazyGroup, modules=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--dir", "store_dir", type=click.Path(path_type=Path), metavar="PATH",
              help="Use the store at PATH (default: $MEM_DIR, then the nearest .mem/ or mem.yaml upward, "
                   "then the user store).")
@click.option("-v", "--verbose", count=True, help="Say more on stderr (-vv includes llama.cpp's own logs).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour on a terminal (auto), even when piped (always), or never; auto honours $NO_COLOR.")
@click.version_option(__version__, prog_name="mem")
@click.pass_context
def main(ctx: click.Context, store_dir: Path | None, verbose: int, color: str) -> None:
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
    if store_dir is not None and ctx.invoked_subcommand in READS and not store_dir.exists():
        from memcli.errors import StoreError

        raise StoreError(f"no store at {store_dir} (--dir names a folder that does not exist; "
                         f"`mem --dir {store_dir} init` makes one)")
    ctx.color = {"always": True, "never": False}.get(color, False if os.environ.get("NO_COLOR") else None)
    setup_logging(verbose)
    # `main(obj=providers)` runs the CLI on other providers (tests pass fakes this way).
    ctx.obj = Env(store_dir, verbose, providers=ctx.obj)
    ctx.call_on_close(ctx.obj.close)
