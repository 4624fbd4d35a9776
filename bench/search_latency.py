"""Search and write latency at 10k and 100k memories, each against its physical floor measured in the same run.

    .venv/bin/python bench/search_latency.py [--sizes 10000 100000] [--runs 7] [--mcp-runs 100] [--corpus locomo|words]

For each size, in one run: `mem import --no-compress` of that many memories (memories/s, against plain
`Llama.embed` in batches of 32 on the same texts' sentences, which a write embeds, with the rate of the
whole texts beside it), the first `mem search` after it, a cold `mem search`
process (against a process that only imports llama_cpp and hnswlib, loads the model and the graph and
answers one query), run back to back and run when the periodic look at every file is due (a search
made a while after the last command), one query inside `mem search -` (150 queries minus 50 in one process, per query),
and `memory_search` through one `mem mcp` server spoken to by the MCP package's stdio client (p50 and
p90, with the server's peak RSS), both against embedding the query and asking hnswlib for k=10 in a
warm process (bench/floor.py). Beside it, `memory_list` of ten memories through the same client and
server: no search, so what any result of that size costs on top of the floor. A no-change refresh and
a full look at every file are in-process figures without a floor. The load average is printed: this
machine is shared, so read the ratios; the cold processes run in turn with their floor, and their ratio
is the median of the per-query ratios. `--before REF` also runs the cold search of that git revision of this
repository on the same store, in turn with this one's and the floor, and its warm search.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import floor  # noqa: E402
from mcp_latency import checked, timed  # noqa: E402
from store import WORDS, word_salad  # noqa: E402
from store import timed as wall

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = next((p / "shared" / "bench" / "locomo-dev" / "locomo-dev.json" for p in ROOT.parents
               if (p / "shared" / "bench" / "locomo-dev" / "locomo-dev.json").is_file()), None)


def turn_texts(sample: dict) -> dict[str, str]:
    """A LoCoMo conversation's turns as the memories of the `locomo` corpus hold them, by dia_id."""
    return {turn["dia_id"]: f"{turn['speaker']}: {turn['text']}" for key, session in sample["conversation"].items()
            if key.startswith("session_") and isinstance(session, list) for turn in session}


def corpus(name: str):
    """(a writer of memory texts, 150 queries).

    `locomo`: each memory is two conversation turns of LoCoMo picked at random, the queries its questions:
    words as common as in real notes. `words`: 8-40 words drawn from a 30-word list, so every query word
    is in about half the memories: the worst case for BM25, which must score every match."""
    if name == "words":
        queries = [f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7 + 3) % len(WORDS)]} {WORDS[(i * 13 + 5) % len(WORDS)]}"
                   for i in range(150)]
        return word_salad, queries
    samples = json.loads(LOCOMO.read_text())
    turns = [text for sample in samples for text in turn_texts(sample).values()]
    queries = [" ".join(str(qa["question"]).split()) for s in samples for qa in s["qa"]][:150]
    return (lambda rng: f"{rng.choice(turns)} {rng.choice(turns)}"), queries


def texts(size: int, writer) -> list[str]:
    rng = random.Random(size)
    return [f"{writer(rng)} #{n}" for n in range(size)]


def children_named(word: str) -> list[int]:
    """Pids of this process's children whose command line holds `word` (the MCP server)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            parent = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), "")
            if parent == str(os.getpid()) and word in cmdline:
                found.append(int(entry.name))
    return found


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024


async def through_mcp(mem: list[str], env: dict, queries: list[str]) -> tuple[list[float], list[float], float]:
    """Round trips of memory_search (after one warm-up call), then as many of memory_list for ten memories
    (the protocol's own cost of a result of that size: both ends of the SDK, the worker thread, the
    listing, without a search), and the server's peak RSS in MB."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp_types import Implementation

    params = StdioServerParameters(command=mem[0], args=mem[1:] + ["mcp"], env=env)
    async with Client(params, client_info=Implementation(name="bench", version="1"), read_timeout_seconds=3600) as client:
        await checked(client, "memory_search", {"query": queries[-1]})
        if len((await checked(client, "memory_list", {"limit": 10})).structured_content["memories"]) != 10:
            raise SystemExit("memory_list did not list ten memories")
        samples = [await timed(client, "memory_search", {"query": text, "limit": 10}) for text in queries]
        listings = [await timed(client, "memory_list", {"limit": 10}) for _ in queries]
        pids = children_named("mcp")
        rss = max((peak_rss_mb(pid) for pid in pids), default=float("nan"))
    return samples, listings, rss


def until_full_look_due(root: Path) -> None:
    """Wait until the next command looks at every file, as one made some seconds after the last does."""
    from memcli.index.catalog import Catalog
    from memcli.store.folder import Store

    catalog = Catalog(Store(root))
    due = catalog.looks.full_look_due_at()
    catalog.close()
    time.sleep(max(0.0, due - time.time()) + 0.05)


def cold_due(mem: list[str], env: dict, root: Path, query: str) -> float:
    until_full_look_due(root)
    return wall(mem + ["search", query, "--json"], env)


def cold_runs(mem: list[str], env: dict, root: Path, queries: list[str]) -> tuple[list[float], ...]:
    """Per query, in turn: a search at once after the last, the floor, a search when the look at every file
    is due. Interleaved, so the drift of a shared machine falls on mem and its floor alike."""
    cold, due, base = [], [], []
    for query in queries:
        cold.append(wall(mem + ["search", query, "--json"], env))
        base.append(wall([sys.executable, str(ROOT / "bench" / "floor.py"), "cold", str(root), query], env))
        due.append(cold_due(mem, env, root, query))
    return cold, due, base


PAIRED = "ratio: median of the per-query ratios"


def paired(values: list[float], bases: list[float]) -> tuple[float, float, float]:
    """(median, median of the floor, median of the ratios of runs made side by side)."""
    return (statistics.median(values), statistics.median(bases),
            statistics.median(v / b for v, b in zip(values, bases)))


def refreshes(root: Path, runs: int) -> tuple[float, float]:
    """Medians of (a no-change refresh: one stat per folder, the vectors in step; a full look at every file)."""
    from memcli.core.mem import Mem
    from memcli.store.folder import Store

    quick, full = [], []
    for _ in range(runs):
        mem = Mem(Store(root))
        embedder = mem.embedder()
        began = time.perf_counter()
        mem.catalog.refresh()
        assert mem.vectors.in_step(embedder)
        quick.append(time.perf_counter() - began)
        began = time.perf_counter()
        assert mem.catalog.looks.behind() == (0, 0)
        full.append(time.perf_counter() - began)
        mem.catalog.close()
    return statistics.median(quick), statistics.median(full)


def checkout(ref: str, into: Path) -> Path:
    """The package of git revision `ref` of this repository, unpacked under `into`."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "memcli"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--runs", type=int, default=7, help="cold processes per figure")
    parser.add_argument("--mcp-runs", type=int, default=100, help="memory_search calls")
    parser.add_argument("--corpus", choices=["locomo", "words"], default="locomo",
                        help="what the memories and queries say (see corpus())")
    parser.add_argument("--before", metavar="REF", help="also the cold and warm search of this git revision")
    args = parser.parse_args()
    writer, queries = corpus(args.corpus)
    mem = [sys.executable, "-m", "memcli"]
    work = Path(tempfile.mkdtemp(prefix="mem-bench-latency-"))
    before = checkout(args.before, work / "before") if args.before else None
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        print(f"{'memories':>9} {'what':<36} {'mem':>11} {'floor':>11} {'ratio':>6}  note")

        def row(size, label, value, base=None, ratio=None, unit="ms", note=""):
            shown = (lambda v: f"{v:.1f} s" if unit == "s" else f"{v:.0f}/s" if unit == "/s" else f"{v * 1000:.1f} ms")
            times = f"{value / base if ratio is None else ratio:6.2f}" if base else ""
            print(f"{size:>9} {label:<36} {shown(value):>11} {shown(base) if base else '':>11} {times:>6}  {note}",
                  flush=True)

        for size in args.sizes:
            root = work / f"store-{size}"
            env["MEM_DIR"] = str(root)
            corpus_texts = texts(size, writer)
            lines = "\n".join(json.dumps({"raw": text}) for text in corpus_texts) + "\n"
            imported = wall(mem + ["import", "--no-compress", "-"], env, lines)
            load = os.getloadavg()[0]
            # At once: a search made later pays the periodic look at every file, which is not the import's.
            first = wall(mem + ["search", queries[0], "--json"], env)
            plain = floor.embed_rate(corpus_texts[: min(size, 1000)], sentences=True)
            whole = floor.embed_rate(corpus_texts[: min(size, 1000)])
            row(size, "import --no-compress", size / imported, plain, unit="/s", note=
                f"{imported:.0f} s; floor: its sentences embedded; whole texts {whole:.0f}/s; load {load:.1f}")
            cold, due, cold_floor = cold_runs(mem, env, root, queries[1: args.runs + 1])
            row(size, "first `mem search` after the import", first, statistics.median(cold),
                note="against a later cold search")
            row(size, "cold `mem search` process", *paired(cold, cold_floor), note="back to back; " + PAIRED)
            row(size, "cold, the look at every file due", *paired(due, cold_floor),
                note="as a search a while after the last; " + PAIRED)
            few = wall(mem + ["search", "-"], env, "\n".join(queries[:50]) + "\n")
            many = wall(mem + ["search", "-"], env, "\n".join(queries) + "\n")
            per_query = (many - few) / 100
            warm_floor = floor.per_query(root, queries[: args.mcp_runs])
            row(size, "per query in `mem search -`", per_query, warm_floor)
            if before:
                # -P: the working directory (this checkout) must not come before the revision's code.
                old, old_env = [sys.executable, "-P", "-m", "memcli"], dict(env, PYTHONPATH=str(before))
                now, then, base = [], [], []
                for query in queries[1: args.runs + 1]:  # in turn, so the machine's drift falls on both alike
                    now.append(wall(mem + ["search", query, "--json"], env))
                    then.append(wall(old + ["search", query, "--json"], old_env))
                    base.append(wall([sys.executable, str(ROOT / "bench" / "floor.py"), "cold", str(root), query], env))
                row(size, "cold `mem search` process (in turn)", *paired(now, base), note=PAIRED)
                row(size, f"cold `mem search` process ({args.before})", *paired(then, base), note=PAIRED)
                few = wall(old + ["search", "-"], old_env, "\n".join(queries[:50]) + "\n")
                many = wall(old + ["search", "-"], old_env, "\n".join(queries) + "\n")
                row(size, f"per query in `mem search -` ({args.before})", (many - few) / 100, warm_floor)
            samples, listings, rss = anyio.run(through_mcp, mem, env, (queries * 2)[: args.mcp_runs])
            row(size, "memory_search (MCP) p50", statistics.median(samples), warm_floor,
                note=f"p90 {statistics.quantiles(samples, n=10)[-1] * 1000:.1f} ms; server peak RSS {rss:.0f} MB")
            listed = statistics.median(listings)
            row(size, "memory_list of 10 (MCP) p50", listed, note=f"{listed / warm_floor:.2f} of the floor; no search: "
                "what the protocol and the listing cost a result of ten memories")
            refresh, full_look = refreshes(root, args.runs)
            row(size, "no-change refresh (in-process)", refresh)
            row(size, "full look at every file", full_look)
            shutil.rmtree(root, ignore_errors=True)
        print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
