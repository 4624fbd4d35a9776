"""Search latency on synthetic stores of 10k and 100k memories, with the real embedding model.

    .venv/bin/python bench/search_latency.py [--sizes 10000 100000] [--runs 7] [--corpus locomo|words]

Prints medians of: a cold `mem search` process (start, load model and index, one query), one query
inside `mem search -` (150 queries minus 50 queries in one process, per query), a no-change refresh (a stat per
folder, the vectors checked in step; in-process), a full look at every file (what a refresh does every few
seconds to catch files rewritten in place), and a full `mem reindex`
(catalog, embeddings, graph; fewer runs at 100k because it takes minutes). `mem --version` is the
baseline process start measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from store import WORDS, make_store, word_salad  # noqa: E402
from store import timed as wall

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo-dev" / "locomo-dev.json"


def corpus(name: str):
    """(a writer of memory texts for make_store, 150 queries).

    `locomo`: each memory is two conversation turns of LoCoMo picked at random, the queries its questions:
    words as common as in real notes. `words`: 8-40 words drawn from a 30-word list, so every query word
    is in about half the memories: the worst case for BM25, which must score every match."""
    if name == "words":
        queries = [f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7 + 3) % len(WORDS)]} {WORDS[(i * 13 + 5) % len(WORDS)]}"
                   for i in range(150)]
        return word_salad, queries
    samples = json.loads(LOCOMO.read_text())
    turns = [f"{t['speaker']}: {t['text']}" for s in samples for key, session in s["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]
    queries = [" ".join(str(qa["question"]).split()) for s in samples for qa in s["qa"]][:150]
    return (lambda rng: f"{rng.choice(turns)} {rng.choice(turns)}"), queries


def refreshes(root: Path, runs: int) -> tuple[float, float]:
    """Medians of (a no-change refresh: one stat per folder, the vectors in step; a full look at every file)."""
    from memcli.api import Mem
    from memcli.store.files import Store

    quick, full = [], []
    for _ in range(runs):
        mem = Mem(Store(root))
        embedder = mem.embedder()
        began = time.perf_counter()
        mem.catalog.refresh()
        assert mem.vectors.in_step(embedder)
        quick.append(time.perf_counter() - began)
        began = time.perf_counter()
        assert mem.catalog.behind() == (0, 0)
        full.append(time.perf_counter() - began)
        mem.catalog.close()
    return statistics.median(quick), statistics.median(full)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--corpus", choices=["locomo", "words"], default="locomo",
                        help="what the memories and queries say (see corpus())")
    args = parser.parse_args()
    writer, queries = corpus(args.corpus)
    mem = [sys.executable, "-m", "memcli"]
    work = Path(tempfile.mkdtemp(prefix="mem-bench-latency-"))
    try:
        env = dict(os.environ)
        baseline = statistics.median(wall(mem + ["--version"], env) for _ in range(args.runs))
        print(f"baseline `mem --version`: {baseline * 1000:.1f} ms")
        print(f"{'memories':>9} {'what':<34} {'median':>12} {'runs':>5}")
        for size in args.sizes:
            root = work / f"store-{size}"
            make_store(root, size, writer)
            env["MEM_DIR"] = str(root)
            reindex_runs = 1 if size > 20000 else 3
            reindex = statistics.median(wall(mem + ["reindex"], env) for _ in range(reindex_runs))
            cold = statistics.median(wall(mem + ["search", q, "--json"], env) for q in queries[: args.runs])
            # The marginal cost of a query: 150 queries minus 50 queries in one process, over 100.
            few = wall(mem + ["search", "-"], env, "\n".join(queries[:50]) + "\n")
            many = wall(mem + ["search", "-"], env, "\n".join(queries) + "\n")
            per_query = (many - few) / 100
            refresh, full_look = refreshes(root, args.runs)
            rows = (("full reindex", reindex, "s", reindex_runs),
                    ("cold `mem search` process", cold, "ms", args.runs),
                    ("per query in `mem search -`", per_query, "ms", 1),
                    ("no-change refresh (in-process)", refresh, "ms", args.runs),
                    ("full look at every file", full_look, "ms", args.runs))
            for label, value, unit, runs in rows:
                shown = f"{value:.1f} s" if unit == "s" else f"{value * 1000:.1f} ms"
                print(f"{size:>9} {label:<34} {shown:>12} {runs:>5}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
