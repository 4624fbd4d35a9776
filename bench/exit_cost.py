"""What a `mem` process spends leaving, with and without the freeze of its objects at exit (memcli/cli).

    .venv/bin/python bench/exit_cost.py STORE [--runs 9]

Runs `mem search QUERY --json` and `mem ls -n 20 --json` on STORE in fresh processes, in turn with the
freeze and without it (that run unregisters the hook), and prints the medians of each process's wall
time and of its teardown: from the end of its last exit hook to the end of the process, as the parent
sees it. The interpreter's teardown runs its garbage collector over every object, several times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The marker is registered before memcli.cli registers gc.freeze, so it runs after it: the last hook.
PROCESS = """
import atexit, gc, sys, time
atexit.register(lambda: sys.stderr.write(f"\\nhooks done at {{time.time()!r}}\\n"))
import memcli.cli
if not {freeze}:
    atexit.unregister(gc.freeze)
sys.argv = ["mem", *{args!r}]
memcli.cli.main()
"""


def one(args: list[str], freeze: bool, env: dict) -> tuple[float, float]:
    """(wall seconds, teardown seconds) of one process."""
    began = time.time()
    done = subprocess.run([sys.executable, "-c", PROCESS.format(freeze=freeze, args=args)], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ended = time.time()
    marks = [line for line in done.stderr.splitlines() if line.startswith("hooks done at ")]
    if done.returncode not in (0, 1) or not marks:
        raise SystemExit(f"mem {' '.join(args)} failed: {done.stderr}")
    return ended - began, ended - float(marks[-1].removeprefix("hooks done at "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--query", default="Where did Caroline move from?")
    args = parser.parse_args()
    env = dict(os.environ, MEM_DIR=str(args.store.resolve()), PYTHONPATH=str(ROOT), PYTHONSAFEPATH="1")
    print(f"{'command':<28} {'exit hooks':<12} {'wall ms':>8} {'teardown ms':>12}")
    for command in (["search", args.query, "--json"], ["ls", "-n", "20", "--json"]):
        samples: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for run in range(args.runs):
            for freeze in (True, False) if run % 2 == 0 else (False, True):
                samples[freeze].append(one(command, freeze, env))
        for freeze, rows in samples.items():
            print(f"{' '.join(command).replace(args.query, 'QUERY'):<28} {'gc.freeze' if freeze else 'as Python':<12}"
                  f" {statistics.median(w for w, _ in rows) * 1000:8.1f}"
                  f" {statistics.median(t for _, t in rows) * 1000:12.1f}")
    print(f"medians of {args.runs}; load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
