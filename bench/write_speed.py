"""What a write costs, this checkout against another, in one run: `mem add` of a note (compressed and embedded
by the real models before it returns) and `mem import` of JSON lines (with --defer: the write path and one
embedding call per batch; and compressed now).

    .venv/bin/python bench/write_speed.py --against /path/to/other/checkout [--runs 7] [--lines 300]

Each checkout gets its own store; the runs alternate between the two checkouts, so both see the same load.
Prints the median wall time of each command per checkout, the ratio (this / other), and per-second rates.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store import code_env  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
NOTE = ("We moved billing from Heroku to Fly.io in March because the dyno costs doubled; the staging "
        "database now listens on port 5433 and deploys run from the release branch. Run {n}.")


def timed(cmd: list[str], env: dict, stdin: str | None = None) -> float:
    began = time.perf_counter()
    done = subprocess.run(cmd, env=env, input=stdin, text=True, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr}")
    return time.perf_counter() - began


def lines(count: int, run: int, tag: str) -> str:
    return "".join(json.dumps({"raw": f"{tag} imported note {run}-{n}: the cache layer evicts after {n} minutes "
                                      f"unless the request carries a fresh token for {tag}."}) + "\n"
                   for n in range(count))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--lines", type=int, default=300)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mem-bench-write-"))
    codes = {"this": HERE, "other": args.against.resolve()}
    samples: dict[tuple[str, str], list[float]] = {}
    mem = [sys.executable, "-m", "memcli"]
    try:
        envs = {}
        for name, code in codes.items():
            envs[name] = code_env(code, MEM_DIR=str(work / name))
            subprocess.run(mem + ["init"], env=envs[name], check=True, capture_output=True)
            timed(mem + ["add", "warm the page cache and the models"], envs[name])
        for run in range(args.runs):
            for name in codes:
                env = envs[name]
                samples.setdefault((name, "add"), []).append(timed(mem + ["add", NOTE.format(n=f"{name} {run}")], env))
                samples.setdefault((name, "import --defer"), []).append(
                    timed(mem + ["import", "-", "--defer"], env, lines(args.lines, run, f"{name}-d")))
                samples.setdefault((name, "import (compressed now)"), []).append(
                    timed(mem + ["import", "-"], env, lines(max(1, args.lines // 10), run, f"{name}-c")))
        print(f"{'command':<26} {'this ms':>9} {'other ms':>9} {'this/other':>10}  rate here")
        for command, count in (("add", 1), ("import --defer", args.lines), ("import (compressed now)", args.lines // 10)):
            this = statistics.median(samples[("this", command)])
            other = statistics.median(samples[("other", command)])
            print(f"{command:<26} {this * 1000:9.0f} {other * 1000:9.0f} {this / other:10.2f}  "
                  f"{max(count, 1) / this:.1f}/s (other {max(count, 1) / other:.1f}/s)")
        print(f"(median of {args.runs} runs each, alternating; {args.against} is 'other')")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
