"""A cold `mem search` process for two checkouts, alternating, against its floor measured in the same run.

    .venv/bin/python bench/cold_search.py STORE --against CHECKOUT [--runs 10] [--due]
        [--other-store STORE2] [--changed N]

STORE is a store with vectors (e.g. 10,000 memories from `mem import --no-compress`). Each run times one
`mem search QUERY --json` process with this checkout's code and one with the other's (in turn first), and one process of
bench/floor.py (import llama_cpp and hnswlib, load the model and the graph, answer one query), with the
LoCoMo questions of bench/search_latency.py as queries. Medians, the ratios and the load average are
printed. With --due, each `mem search` waits until the periodic look at every file is due, as a search made
a while after the last command does (the checkouts share the store's catalog and its record of that look).
--other-store: the other checkout searches its own copy of the store (needed when the two catalogs'
schemas differ: each would make the other's anew). --changed N: before each search, N memory files of the
store that search reads are changed on disk (a comment line appended, renamed over the old file as a
`git pull` writes it),
so the search pays for taking them in: reading, parsing and, from schema 9 on, the guard's verdict on
each compressed form.
Compile both checkouts' .pyc files first (python -m compileall memcli), as an install does.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from search_latency import corpus, until_full_look_due  # noqa: E402
from store import code_env, timed, two_checkouts  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = two_checkouts(__doc__, runs=10)
    parser.add_argument("--due", action="store_true", help="every search with the look at every file due")
    parser.add_argument("--other-store", type=Path, help="the store the other checkout searches (default: STORE)")
    parser.add_argument("--changed", type=int, default=0, help="memory files changed on disk before each search")
    args = parser.parse_args()
    _, queries = corpus("locomo")
    codes = {"this": ROOT, "other": args.against.resolve()}
    stores = {"this": args.store.resolve(), "other": (args.other_store or args.store).resolve()}
    samples: dict[str, list[float]] = {"this": [], "other": [], "floor": []}
    for run in range(args.runs):
        query = queries[run % len(queries)]
        # Which one goes first alternates: the first after the floor's process pays the periodic look at
        # every file (its last one is then older than ten times its cost) more often than the second.
        for name, code in list(codes.items())[:: 1 if run % 2 == 0 else -1]:
            if args.due:
                until_full_look_due(stores[name])
            if args.changed:
                pull(stores[name], args.changed, run)
            samples[name].append(timed([sys.executable, "-m", "memcli", "search", query, "--json"],
                                       code_env(code, MEM_DIR=str(stores[name]))))
        samples["floor"].append(timed([sys.executable, str(ROOT / "bench" / "floor.py"), "cold", str(args.store), query],
                                      code_env(ROOT)))
    median = {name: statistics.median(values) for name, values in samples.items()}
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    for name in ("this", "other"):
        print(f"{str(codes[name]):<24} cold `mem search`: {median[name] * 1000:6.1f} ms, {median[name] / median['floor']:.2f}x"
              f" the floor")
    print(f"floor (bench/floor.py cold): {median['floor'] * 1000:6.1f} ms; this / other: {median['this'] / median['other']:.2f}"
          f" (medians of {args.runs}); load average at the end: {load}")


def pull(store: Path, count: int, run: int) -> None:
    """Change `count` memory files on disk, the next ones each run, as a pull that touched them would: git
    writes a new file and renames it over the old, so the folder changes too."""
    files = sorted((store / "memories").rglob("*.yaml"))
    for n in range(count):
        path = files[(run * count + n) % len(files)]
        fresh = path.with_name(f".{path.name}.pulled")
        fresh.write_text(path.read_text(encoding="utf-8") + f"# pulled in run {run}\n", encoding="utf-8")
        os.replace(fresh, path)


if __name__ == "__main__":
    main()
