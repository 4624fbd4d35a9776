"""What `mem thread ls` costs on a store with many threads, against `mem --version` in the same run.

    .venv/bin/python bench/thread_list.py [--threads 300] [--messages 100] [--runs 7]

The threads are written through the library (Threads.create/append, as `mem thread append` does);
their folders are then dated an hour back, as a store's threads are between conversations. A listing
reads each thread's folder (its title file and the names of its messages) and asks the catalog once
for the folds of all of them; the first run and the median of the later ones are printed.
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

from memcli.core.mem import Mem
from memcli.store.folder import Store
from memcli.threads.storage import Threads


def timed(args: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memcli", *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=300)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mem-bench-thread-ls-"))
    try:
        threads = Threads(Mem(Store(root)))
        for n in range(args.threads):
            thread = threads.create(f"thread {n}")
            threads.append(thread.id, [{"role": "user" if i % 2 else "assistant", "content": f"message {i} of {n}"}
                                       for i in range(args.messages)])
        old = time.time() - 3600
        for folder in (root / "threads").iterdir():
            os.utime(folder, (old, old))
        env = {**os.environ, "MEM_DIR": str(root)}
        first = timed(["thread", "ls", "--json"], env)
        listing = statistics.median(timed(["thread", "ls", "--json"], env) for _ in range(args.runs))
        version = statistics.median(timed(["--version"], env) for _ in range(args.runs))
        print(f"{args.threads} threads of {args.messages} messages; load average {os.getloadavg()[0]:.1f}")
        print(f"mem --version          {version * 1000:7.0f} ms  1.00")
        print(f"mem thread ls, first   {first * 1000:7.0f} ms  {first / version:.2f}")
        print(f"mem thread ls, median  {listing * 1000:7.0f} ms  {listing / version:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
