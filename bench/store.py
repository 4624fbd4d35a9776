"""Times the everyday commands on stores of 1k and 10k memories (no compression, no vectors).

    .venv/bin/python bench/store.py [--sizes 1000 10000] [--runs 9]

Each figure is the median wall time of a fresh `mem` process, next to `mem --version` (the cost of
starting Python and importing the CLI) measured in the same run, so the ratio shows what the store
itself adds. Short texts are used so that no compression model is involved.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memcli.store import ids
from memcli.store.folder import Store
from memcli.store.memory import Memory, format_time

WORDS = ("rate limit proxy queue deploy billing heroku fly postgres redis cache retry backoff scraper amazon "
         "ebay tuesday review ruff uv pytest release branch merge token budget context search index").split()


def word_salad(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))


def make_store(root: Path, size: int, writer=word_salad, *, durable: bool = True) -> None:
    """A store of `size` memories, one a minute up to now; `writer(rng)` writes each (a number keeps them apart).
    Not `durable`: each file is written without the store's fsync (minutes instead of an hour at 100k),
    for a bench that times reading the store, not writing it."""
    store = Store(root)
    store.init()
    rng = random.Random(size)
    start = time.time() - size * 60
    for n in range(size):
        stamp = format_time(dt.datetime.fromtimestamp(start + n * 60, dt.timezone.utc))
        text = writer(rng) + f" #{n}"
        memory = Memory(id=ids.new_id(int((start + n * 60) * 1000)), created_at=stamp, updated_at=stamp,
                        raw=text, tags=[rng.choice(WORDS)], compression={"status": "skipped"})
        if durable:
            store.write(memory)
        else:
            path = root / memory.relpath()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(memory.to_yaml(), encoding="utf-8")


def timed(cmd: list[str], env: dict, stdin: str | None = None) -> float:
    """Wall seconds of one process (exit 1, "nothing found", is fine; other failures stop the bench)."""
    began = time.perf_counter()
    done = subprocess.run(cmd, env=env, input=stdin, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr}")
    return time.perf_counter() - began


def two_checkouts(doc: str, runs: int) -> argparse.ArgumentParser:
    """The arguments of a bench that runs this checkout against another on a store: STORE, --against, --runs."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--against", type=Path, required=True, help="another checkout, e.g. a worktree at main")
    parser.add_argument("--runs", type=int, default=runs)
    return parser


def code_env(code: Path, **extra: str) -> dict:
    """An environment whose `python -m memcli` runs the memcli of checkout `code`, not one in the current folder."""
    return dict(os.environ, PYTHONPATH=str(code), PYTHONSAFEPATH="1", **extra)


def median_of(runs: int, cmd, env: dict, prepare=None) -> float:
    """cmd is an argv list, or a function of the run number returning one (to vary the input)."""
    samples = []
    for n in range(runs):
        if prepare:
            prepare(n)
        samples.append(timed(cmd(n) if callable(cmd) else cmd, env))
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    mem = [sys.executable, "-m", "memcli"]
    work = Path(tempfile.mkdtemp(prefix="mem-bench-store-"))
    try:
        env = dict(os.environ, MEM_MODELS_DIR=str(work / "models"))
        baseline = median_of(args.runs, mem + ["--version"], env)
        print(f"baseline `mem --version`: {baseline * 1000:7.1f} ms (median of {args.runs})")
        print(f"{'memories':>9} {'command':<30} {'median ms':>10} {'x baseline':>10}")
        for size in args.sizes:
            root = work / f"store-{size}"
            make_store(root, size)
            env["MEM_DIR"] = str(root)
            cold = median_of(max(3, args.runs // 3), mem + ["ls", "--json"], env,
                             prepare=lambda _n: shutil.rmtree(root / ".index", ignore_errors=True))
            warm = median_of(args.runs, mem + ["ls", "--json"], env)
            limited = median_of(args.runs, mem + ["ls", "--json", "-n", "20"], env)
            added = median_of(args.runs, lambda n: mem + ["add", f"bench note {size} {n} {time.time()}"], env)
            for label, value in (("ls --json (index rebuilt)", cold), ("ls --json", warm),
                                 ("ls --json -n 20", limited), ("add (short text)", added)):
                print(f"{size:>9} {label:<30} {value * 1000:10.1f} {value / baseline:10.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
