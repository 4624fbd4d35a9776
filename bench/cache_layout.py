"""Git's cost of the vector cache's layout: one file per writer per day (mem's) against one file per memory.

    .venv/bin/python bench/cache_layout.py [--memories 100000] [--days 100] [--commits 10]

For each layout, one repository receives `--memories` cache records (the format of
memcli.index.vector_cache: random unit vectors as float16, 384 dimensions, which pack as real ones do,
with no redundancy between them) spread over `--days` days, committed in `--commits` commits as a team
would (each commit adds the next days' records; in the per-day layout a commit's days are new files,
and each commit also appends to one file of an earlier day). Printed per layout: files in the checkout,
the seconds of all the `git add` + `git commit` runs, the packed repository after `git gc`, a `git
clone` through file:// (the protocol a remote uses) and a `git status` in the clone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memcli.index import vector_cache  # noqa: E402

DIM = 384
GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="bench",
               GIT_AUTHOR_EMAIL="bench@example.com", GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")


def git(repo: Path, *args: str) -> float:
    began = time.perf_counter()
    subprocess.run(["git", "-c", "gc.auto=0", "-C", str(repo), *args], env=GIT_ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - began


def records(count: int, seed: int) -> list[bytes]:
    import numpy as np

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    out = []
    for n, vector in enumerate(vectors):
        record = vector_cache.text_key(f"{seed} {n}") + vector.astype("<f2").tobytes()
        out.append(record + zlib.crc32(record).to_bytes(4, "little"))
    return out


def header() -> bytes:
    head = vector_cache.HEADER.pack(vector_cache.MAGIC, bytes(vector_cache.KEY_BYTES), DIM)
    return head + zlib.crc32(head).to_bytes(4, "little")


def append(path: Path, data: list[bytes]) -> None:
    fresh = not path.exists()
    with path.open("ab") as handle:
        handle.write((header() if fresh else b"") + b"".join(data))


def build(repo: Path, layout: str, memories: int, days: int, commits: int) -> float:
    """Commit the records in `layout`; the seconds git took."""
    folder = repo / "vectors" / "model"
    folder.mkdir(parents=True)
    git(repo.parent, "init", "-q", "-b", "main", str(repo))
    per_day = memories // days
    spent = 0.0
    for commit in range(commits):
        for day in range(commit * days // commits, (commit + 1) * days // commits):
            data = records(per_day, day)
            if layout == "per-day":
                append(folder / f"2026-01-{day:03d}-writer.vec", data)
            else:
                for n, record in enumerate(data):
                    (folder / f"{day:03d}-{n:05d}.vec").write_bytes(header() + record)
        if layout == "per-day" and commit:  # a day already committed gets a few more records (a late write)
            append(folder / f"2026-01-{commit * days // commits - 1:03d}-writer.vec", records(10, 10_000 + commit))
        spent += git(repo, "add", "-A") + git(repo, "commit", "-q", "-m", f"day batch {commit}")
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--commits", type=int, default=10)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mem-cache-layout-"))
    try:
        for layout in ("per-day", "per-memory"):
            repo = work / layout
            committing = build(repo, layout, args.memories, args.days, args.commits)
            git(repo, "gc", "-q", "--prune=now")
            pack = sum(p.stat().st_size for p in (repo / ".git" / "objects" / "pack").iterdir())
            clone_s = git(work, "clone", "-q", f"file://{repo}", str(work / f"{layout}-clone"))
            status_s = git(work / f"{layout}-clone", "status", "--porcelain")
            files = sum(1 for _ in (repo / "vectors").rglob("*.vec"))
            print(f"{layout:<11} {args.memories} records in {files:6d} files: add+commit {committing:6.1f} s over "
                  f"{args.commits} commits; packed {pack / 1e6:6.1f} MB ({pack / args.memories:.0f} B/record); "
                  f"clone {clone_s:5.1f} s; status in the clone {status_s:5.2f} s")
            shutil.rmtree(work / f"{layout}-clone")
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
