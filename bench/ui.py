"""`mem ui` against the CLI on one store of 100,000 memories, in one run: the memories page's first page
against `mem ls -n 50`, and a search on the page against `mem search`.

    .venv/bin/python bench/ui.py [--size 100000] [--runs 9] [--work DIR]

The store: memory files written directly (two LoCoMo dev turns a memory, numbered, as bench/search_latency.py
writes them) and, in the vector cache, random unit vectors under the real embedding model's key (what
`bench/clone.py --synthetic` does): nothing is embedded, so a store of 100,000 takes minutes; the times are
real, the meaning side's ranking means nothing. A first `mem search` builds the catalog and the vector graph
(with --work, a store made before is used again). Then one `mem ui --no-open` process serves the store on
the real default models, and a warm-up asks it for the first page and one search (its first search loads
the embedding model and the graph, which a server does once: that time is printed apart). Each run, in
turn (which goes first alternates): a `mem ls -n 50 --json` process against GET / (the first page), and a
`mem search QUERY --json` process against GET /?q=QUERY (the page's search, which ranks as mem search
does, 10 results), with a new LoCoMo question each run, the same for both. The CLI's processes are warm:
the store's files and the catalog are in the page cache from the runs before. Times are wall times of the
process and of the HTTP request (httpx on the loopback). Medians, their ratios (page / CLI: the target is
at most 1.5) and the load average are printed, with how many searches gave the same ids on both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from clone import write_synthetic  # noqa: E402
from search_latency import corpus, texts  # noqa: E402
from store import code_env  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5


def cli(store: Path, *args: str) -> tuple[float, str]:
    """(wall seconds, stdout) of one `mem` process; exit 1 (nothing found) is fine."""
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memcli", "--dir", str(store), *args], env=code_env(ROOT),
                          capture_output=True, text=True)
    took = time.perf_counter() - began
    if done.returncode not in (0, 1):
        raise SystemExit(f"mem {' '.join(args)} failed: {done.stderr[-2000:]}")
    return took, done.stdout


def page(client, path: str, params: dict | None = None) -> tuple[float, str]:
    began = time.perf_counter()
    answer = client.get(path, params=params)
    took = time.perf_counter() - began
    if answer.status_code != 200:
        raise SystemExit(f"GET {path} {params}: {answer.status_code} {answer.text[:500]}")
    return took, answer.text


def ids_on(html: str) -> list[str]:
    import re

    return re.findall(r'<li class="memory card" data-id="([0-9A-Z]+)"', html)


def make_store(store: Path, size: int) -> None:
    from memcli.store.folder import Store

    if (store / "memories").is_dir():
        print(f"using the store at {store}")
        return
    Store(store).init()
    writer, _ = corpus("locomo")
    began = time.perf_counter()
    write_synthetic(store, texts(size, writer))
    print(f"wrote {size} memory files and their cached vectors in {time.perf_counter() - began:.0f} s")
    began = time.perf_counter()
    cli(store, "search", "warm up the catalog and the vector graph", "--json")
    print(f"the first `mem search` built the catalog and the graph in {time.perf_counter() - began:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--work", type=Path, help="keep the store here (default: a temp folder, removed)")
    args = parser.parse_args()
    import httpx

    work = (args.work or Path(tempfile.mkdtemp(prefix="mem-bench-ui-"))).resolve()
    store = work / f"store-{args.size}"
    _, queries = corpus("locomo")
    server = None
    try:
        make_store(store, args.size)
        server = subprocess.Popen([sys.executable, "-m", "memcli", "--dir", str(store), "ui", "--no-open"],
                                  env=code_env(ROOT), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        url = server.stdout.readline().strip()
        client = httpx.Client(base_url=url.split("/?")[0], timeout=120)
        assert client.get(url).status_code == 303
        first_page, _ = page(client, "/")
        first_search, _ = page(client, "/", {"q": "warm up the models"})
        print(f"a fresh server: first page {first_page * 1000:.0f} ms, first search {first_search * 1000:.0f} ms "
              "(loads the embedding model and the vector graph)")
        cli(store, "ls", "-n", "50", "--json")
        samples: dict[str, list[float]] = {"ls": [], "first page": [], "search": [], "page search": []}
        same = 0
        for run in range(args.runs):
            query = queries[run % len(queries)]
            pairs = [(lambda: cli(store, "ls", "-n", "50", "--json"), "ls", lambda: page(client, "/"), "first page"),
                     (lambda: cli(store, "search", query, "--json"), "search",
                      lambda: page(client, "/", {"q": query}), "page search")]
            for by_cli, cli_name, by_page, page_name in pairs:
                order = [(by_cli, cli_name), (by_page, page_name)][:: 1 if run % 2 == 0 else -1]
                outs = {}
                for measure, name in order:
                    took, outs[name] = measure()
                    samples[name].append(took)
                if cli_name == "ls":
                    assert ids_on(outs[page_name]) == [row["id"] for row in json.loads(outs[cli_name])]
                else:
                    same += ids_on(outs[page_name]) == [hit["id"] for hit in json.loads(outs[cli_name] or "[]")]
        median = {name: statistics.median(values) for name, values in samples.items()}
        print(f"{args.size} memories, medians of {args.runs} runs:")
        for cli_name, page_name, what in (("ls", "first page", "`mem ls -n 50`"), ("search", "page search", "`mem search`")):
            ratio = median[page_name] / median[cli_name]
            print(f"  the page's {page_name}: {median[page_name] * 1000:7.1f} ms; {what}: {median[cli_name] * 1000:7.1f} ms;"
                  f" page / CLI = {ratio:.2f} ({'within' if ratio <= TARGET else 'over'} {TARGET})")
        print(f"  searches giving the same ids on the page and from mem search: {same} of {args.runs}")
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        if server is not None:
            server.terminate()
            server.wait(60)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
