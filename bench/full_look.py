"""The look at every file (what a command makes when the last one is stale), per file, at 10k and 100k memories.

    .venv/bin/python bench/full_look.py [--sizes 10000 100000] [--runs 7] [--looks 5] [--against CHECKOUT]

Makes the memory files without models (YAML files as the store writes them, without its fsync), waits
2 s (no file racy), then for this checkout (and the one `--against` names, e.g. a worktree at main) a
store of its own on those files (its memories/ a link to them) whose catalog that checkout's code makes.
Then times the periodic look at every file, made due (`Catalog.refresh(force=True)` with the record of the
last one made old, finding nothing changed: a stat of every file, tallied with the catalog's stamps), in
fresh processes, the median of `--looks` looks each after a warm-up, the checkouts alternating. The load
average is printed: the machine is shared, so read the ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from store import make_store

ROOT = Path(__file__).resolve().parents[1]

LOOKS = """
import statistics, sys, time
from pathlib import Path
from memcli.index.catalog import Catalog
from memcli.store.folder import Store

catalog = Catalog(Store(Path(sys.argv[1])))
catalog.refresh()
assert catalog.looks.behind() == (0, 0)
samples = []
for _ in range(int(sys.argv[2])):
    catalog.db.execute("UPDATE meta SET value = '[0, 1]' WHERE key = 'full_look'")  # due
    began = time.perf_counter()
    assert not catalog.refresh(force=True)
    samples.append(time.perf_counter() - began)
    assert catalog.looks.full_look_due_at() > time.time()  # it was the look at every file
print(statistics.median(samples))
"""


def look(checkout: Path, root: Path, looks: int) -> float:
    """Median seconds of a look at every file, by the code of `checkout`, in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONSAFEPATH="1")  # not the code in the current folder
    done = subprocess.run([sys.executable, "-c", LOOKS, str(root), str(looks)], env=env, capture_output=True,
                          text=True, check=True)
    return float(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--runs", type=int, default=7, help="processes per checkout")
    parser.add_argument("--looks", type=int, default=5, help="looks per process")
    parser.add_argument("--against", type=Path, help="another checkout, timed in alternation")
    args = parser.parse_args()
    codes = [ROOT] + ([args.against.resolve()] if args.against else [])
    work = Path(tempfile.mkdtemp(prefix="mem-bench-look-"))
    try:
        for size in args.sizes:
            files = work / f"files-{size}"
            make_store(files, size, durable=False)
            time.sleep(2)  # past the racy window (memcli.index.stamps.SETTLED_NS): every file is recorded clean
            roots = {}
            for n, code in enumerate(codes):
                roots[code] = work / f"store-{size}-{n}"
                roots[code].mkdir()
                (roots[code] / "memories").symlink_to(files / "memories")
            samples: dict[Path, list[float]] = {code: [] for code in codes}
            for _ in range(args.runs):
                for code in codes:
                    samples[code].append(look(code, roots[code], args.looks))
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            this = statistics.median(samples[ROOT])
            line = f"{size:>7} files: {this * 1000:7.1f} ms, {this / size * 1e6:5.2f} µs a file"
            if args.against:
                other = statistics.median(samples[codes[1]])
                line += (f"; {args.against}: {other * 1000:7.1f} ms, {other / size * 1e6:5.2f} µs a file;"
                         f" ratio {this / other:.2f}")
            print(f"{line} (median of {args.runs} processes x {args.looks} looks; load {load})", flush=True)
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
