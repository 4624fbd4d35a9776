"""A team store after `git clone` and `git pull`: the time to the first hybrid search, with the vector cache.

    .venv/bin/python bench/clone.py [--size 10000] [--pull 1000] [--work DIR]

One run: a store of `--size` memories (two LoCoMo dev turns each, picked at random and numbered, as
bench/search_latency.py writes them) made by `mem import --no-compress`, committed to a git repository
with its vector cache (vectors/); a cold `mem search` in it (the original, whose index is built); then
`git clone` of it and the first `mem search` in the clone, which builds the catalog and takes every
vector from the cache, against the same search in the original. Then `--pull` more memories are imported
and committed in the original, `git pull` in the clone, and the next search there is timed. Last, the
disk: cache bytes per memory, and the packed repository (after `git gc`) with and without the cache's
objects. Without the cache, the clone's first search would embed every memory: the import's rate says
how long that takes on this machine, and is printed beside.

`--synthetic` (for sizes whose embedding would take hours here): the memory files are written directly
and the cache gets random unit vectors under the real model's key, so nothing is embedded anywhere and
the original's first search builds its index from the cache like the clone's. The times are real; the
search results mean nothing, and random vectors make the vector graph slower to build than real ones.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from search_latency import corpus, texts  # noqa: E402
from store import code_env  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "bench",
           "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com"}


def run(cmd: list[str], env: dict, stdin: str | None = None) -> tuple[float, str]:
    """(wall seconds, stdout) of one process; a failure stops the bench (exit 1, nothing found, is fine)."""
    began = time.perf_counter()
    done = subprocess.run(cmd, env=env, input=stdin, text=True, capture_output=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(map(str, cmd))} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - began, done.stdout


def git(repo: Path, *args: str) -> tuple[float, str]:
    """git without automatic gc in the background (it would run into the timed searches and `git gc`)."""
    return run(["git", "-c", "gc.auto=0", "-C", str(repo), *args], dict(os.environ, **GIT_ENV))


def mem(store: Path, *args: str, stdin: str | None = None) -> tuple[float, str]:
    return run([sys.executable, "-m", "memcli", "--dir", str(store), *args], code_env(ROOT), stdin)


def search(store: Path, query: str) -> tuple[float, list[str]]:
    seconds, out = mem(store, "search", query, "--jsonl", "-k", "10")
    return seconds, [json.loads(line)["id"] for line in out.splitlines() if line.strip()]


def import_texts(store: Path, items: list[str]) -> float:
    lines = "".join(json.dumps({"raw": text}) + "\n" for text in items)
    return mem(store, "import", "--no-compress", "-", stdin=lines)[0]


def write_synthetic(store: Path, items: list[str]) -> None:
    """Memory files of these texts, written directly, and their cache records: random unit vectors filed
    under the real embedding model's key (see --synthetic)."""
    import datetime as dt

    import numpy as np

    from memcli.index.sentence_vectors import MemoryEmbedder
    from memcli.index.vector_cache import VectorCache
    from memcli.providers.llama import get_embedder
    from memcli.store import ids
    from memcli.store.folder import Store
    from memcli.store.memory import Memory, format_time

    files = Store(store)
    embedder = MemoryEmbedder(get_embedder(files.settings.embed_model))
    cache = VectorCache(files, embedder.model_id, embedder.dim)
    rng = np.random.default_rng(len(items))
    start = time.time() - len(items)
    for first in range(0, len(items), 5000):
        chunk = items[first:first + 5000]
        for n, text in enumerate(chunk, first):
            moment = dt.datetime.fromtimestamp(start + n, dt.timezone.utc)
            memory = Memory(id=ids.new_id(int((start + n) * 1000)), created_at=format_time(moment),
                            updated_at=format_time(moment), raw=text, tags=[], compression={"status": "skipped"})
            path = store / memory.relpath()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(memory.to_yaml(), encoding="utf-8")
        vectors = rng.standard_normal((len(chunk), embedder.dim)).astype(np.float32)
        cache.append(chunk, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))


def packed(repo: Path) -> tuple[int, int]:
    """(bytes of the packed repository, bytes of the packed objects under vectors/) after `git gc`."""
    git(repo, "gc", "-q", "--prune=now")
    _, listing = git(repo, "rev-list", "--objects", "--all")
    paths = dict(line.split(" ", 1) for line in listing.splitlines() if " " in line)
    _, sizes = run(["git", "-C", str(repo), "cat-file", "--batch-check=%(objectname) %(objectsize:disk)"],
                   dict(os.environ, **GIT_ENV), "\n".join(line.split(" ")[0] for line in listing.splitlines()) + "\n")
    total = cache = 0
    for line in sizes.splitlines():
        name, size = line.split()
        total += int(size)
        if paths.get(name, "").startswith(".mem/vectors/"):
            cache += int(size)
    return total, cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--pull", type=int, default=1_000)
    parser.add_argument("--synthetic", action="store_true", help="write files and random cached vectors directly")
    parser.add_argument("--work", type=Path, help="keep the repositories here (default: a temp folder, removed)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="mem-clone-"))
    work.mkdir(parents=True, exist_ok=True)
    writer, queries = corpus("locomo")
    items = texts(args.size + args.pull, writer)
    origin, clone = work / "origin", work / "clone"
    try:
        git(work, "init", "-q", "-b", "main", str(origin))
        store = origin / ".mem"
        mem(store, "init", str(store), "--git")
        if args.synthetic:
            write_synthetic(store, items[:args.size])
            rate = float(os.environ.get("MEM_BENCH_EMBED_RATE", "20"))
            print(f"synthetic store of {args.size} memories (random cached vectors; an embedding rate of "
                  f"{rate:g} memories/s assumed below, MEM_BENCH_EMBED_RATE)")
        else:
            seconds = import_texts(store, items[:args.size])
            print(f"import of {args.size} memories into the original: {seconds:.1f} s ({args.size / seconds:.1f} memories/s)")
            rate = args.size / seconds
        git(origin, "add", "-A")
        git(origin, "commit", "-q", "-m", f"{args.size} memories")
        query = queries[0]
        original_s, original_ids = search(store, query)
        print(f"search in the original ({'its first: index built from the cache' if args.synthetic else 'index built'}):"
              f" {original_s:.2f} s")

        clone_s, _ = git(work, "clone", "-q", str(origin), str(clone))
        first_s, clone_ids = search(clone / ".mem", query)
        second_s, _ = search(clone / ".mem", queries[1])
        print(f"git clone: {clone_s:.2f} s; first hybrid search in the clone: {first_s:.2f} s "
              f"(clone + search {clone_s + first_s:.2f} s; the search after it {second_s:.2f} s); "
              f"same top 10 as the original: {clone_ids == original_ids}")
        print(f"  without the cache, embedding {args.size} memories at the import's rate: ~{args.size / rate:.0f} s")

        if args.synthetic:
            write_synthetic(store, items[args.size:])
        else:
            import_texts(store, items[args.size:])
        git(origin, "add", "-A")
        git(origin, "commit", "-q", "-m", f"{args.pull} more memories")
        pull_s, _ = git(clone, "pull", "-q", "--no-rebase")
        after_s, _ = search(clone / ".mem", queries[2])
        print(f"git pull of {args.pull} memories: {pull_s:.2f} s; next search in the clone: {after_s:.2f} s "
              f"(without the cache ~{args.pull / rate:.0f} s of embedding)")

        count = args.size + args.pull
        cache_bytes = sum(p.stat().st_size for p in (clone / ".mem" / "vectors").rglob("*.vec"))
        total, cache = packed(clone)
        print(f"vector cache: {cache_bytes / count:.0f} bytes per memory on disk ({cache_bytes / 1e6:.1f} MB); "
              f"packed repository {total / 1e6:.1f} MB with the cache, {(total - cache) / 1e6:.1f} MB without "
              f"(the cache's objects {cache / count:.0f} bytes per memory packed)")
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
