"""The `mem` executable. `mem hook ...` runs without the CLI's imports (click, the commands): an
assistant waits for every synchronous hook, so that path pays only for what it uses."""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from memcli.capture.relay import main as hook

        sys.exit(hook(args[1:]))
    from memcli.cli import main as cli

    cli()
