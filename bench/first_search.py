"""The first `mem search` after an import into a large store, against the search after it, for two checkouts.

    .venv/bin/python bench/first_search.py STORE --against CHECKOUT [--runs 7] [--batch 300]

STORE is a store with vectors (e.g. 10,000 memories from `mem import --no-compress`). Each run, for this
checkout and then the other: `mem import --no-compress` of `--batch` new memories (LoCoMo turns, as
bench/search_latency.py writes them), then two cold `mem search` processes, the first right after the
import. Medians of the import, the first search and the second search are printed per checkout, with
the ratio of the first searches and the load average. The store grows by 2 x runs x batch memories.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from search_latency import corpus, texts  # noqa: E402
from store import code_env, timed, two_checkouts  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = two_checkouts(__doc__, runs=7)
    parser.add_argument("--batch", type=int, default=300, help="memories per import")
    args = parser.parse_args()
    writer, queries = corpus("locomo")
    fresh = iter(texts(2 * args.runs * args.batch, writer))
    codes = {"this": ROOT, "other": args.against.resolve()}
    figures = {name: {"import": [], "first": [], "second": []} for name in codes}
    for run in range(args.runs):
        for name, code in codes.items():
            env = code_env(code, MEM_DIR=str(args.store.resolve()))
            mem = [sys.executable, "-m", "memcli"]
            lines = "".join(json.dumps({"raw": f"{next(fresh)} ({name} {run})"}) + "\n" for _ in range(args.batch))
            figures[name]["import"].append(timed(mem + ["import", "--no-compress", "-"], env, lines))
            figures[name]["first"].append(timed(mem + ["search", queries[run % len(queries)], "--json"], env))
            figures[name]["second"].append(timed(mem + ["search", queries[-1 - run % len(queries)], "--json"], env))
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    for name, code in codes.items():
        median = {what: statistics.median(values) for what, values in figures[name].items()}
        print(f"{str(code):<28} import of {args.batch}: {median['import']:6.2f} s; first search {median['first'] * 1000:6.1f} ms;"
              f" the one after it {median['second'] * 1000:6.1f} ms (medians of {args.runs})")
    ratio = statistics.median(figures["this"]["first"]) / statistics.median(figures["other"]["first"])
    print(f"first search, this / other: {ratio:.2f}; load average at the end: {load}")


if __name__ == "__main__":
    main()
