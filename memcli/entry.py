"""The `mem` executable. `mem hook ...` runs without the CLI's imports (click, the commands): an
assistant waits for every synchronous hook, so that path pays only for what it uses.

mem runs on Linux and macOS (on Windows, inside WSL): its store lock, queues and caches rely on POSIX
file locks (fcntl), owner-only file modes and atomic renames over open files. Where fcntl is missing
every command says so in one line (a hook too, and exits 0, as hooks always do) rather than dying
with an ImportError from deep inside the store."""

from __future__ import annotations

import sys

UNSUPPORTED = ("mem runs on Linux and macOS (on Windows, inside WSL): it needs POSIX file locks (fcntl), "
               "which this Python ({platform}) lacks")


def main() -> None:
    args = sys.argv[1:]
    hook = args[:1] == ["hook"] and not {"-h", "--help"} & set(args)
    try:
        import fcntl  # noqa: F401  (the store's lock; see the module's docstring)
    except ImportError:
        sys.stderr.write(f"mem: error: {UNSUPPORTED.format(platform=sys.platform)}\n")
        from memcli.errors import MemError

        sys.exit(0 if hook else MemError.exit_code)
    if hook:
        from memcli.capture.relay import main as hook_main

        sys.exit(hook_main(args[1:]))
    from memcli.cli import main as cli

    cli()
