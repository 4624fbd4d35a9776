"""Latency of `memory_search` through MCP on a synthetic store, against a cold `mem search` process.

    .venv/bin/python bench/mcp_latency.py [--size 10000] [--runs 50] [--cold-runs 7] [--fakes]

Builds a store with bench/store.py's make_store and indexes it once (`mem reindex`), so both sides
start from a built index. Then, in one run: the median wall time of a fresh `mem search QUERY --json`
process (start Python, load the model and the index, one query), and, through one `mem mcp` server
spoken to by the MCP package's stdio client, the median round trip of `memory_search` (which includes
the server's look at the files before every call) and of `memory_context` (budget 200). The server's
start (connect) and its first search (warm-up) are shown apart. --fakes runs everything with the fake
models of tests/support/fakes.py instead of the real ones: it checks the bench works, its figures say nothing
about the models.
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

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from store import WORDS, make_store  # noqa: E402

QUERIES = [f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7 + 3) % len(WORDS)]} {WORDS[(i * 13 + 5) % len(WORDS)]}"
           for i in range(200)]


def wall(cmd: list[str], env: dict) -> float:
    began = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - began


async def through_mcp(mem: list[str], env: dict, runs: int) -> dict[str, float | list[float]]:
    params = StdioServerParameters(command=mem[0], args=mem[1:] + ["mcp"], env=env)
    figures: dict[str, float | list[float]] = {}
    began = time.perf_counter()
    async with Client(params, client_info=Implementation(name="bench", version="1"), read_timeout_seconds=600) as client:
        figures["connect"] = time.perf_counter() - began
        began = time.perf_counter()
        await checked(client, "memory_search", {"query": QUERIES[-1]})
        figures["first search"] = time.perf_counter() - began
        figures["search"] = [await timed(client, "memory_search", {"query": q, "limit": 10}) for q in QUERIES[:runs]]
        figures["context"] = [await timed(client, "memory_context", {"query": q, "budget": 200})
                              for q in QUERIES[:runs]]
    return figures


async def checked(client, tool: str, arguments: dict):
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise SystemExit(f"{tool} failed: {result.content[0].text}")
    return result


async def timed(client, tool: str, arguments: dict) -> float:
    began = time.perf_counter()
    await checked(client, tool, arguments)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=50, help="MCP calls per tool")
    parser.add_argument("--cold-runs", type=int, default=7, help="cold `mem search` processes")
    parser.add_argument("--fakes", action="store_true", help="use the fake models (checks the bench only)")
    args = parser.parse_args()
    mem = [sys.executable, str(ROOT / "tests" / "support" / "fake_mem.py")] if args.fakes else [sys.executable, "-m", "memcli"]
    work = Path(tempfile.mkdtemp(prefix="mem-bench-mcp-"))
    try:
        root = work / f"store-{args.size}"
        make_store(root, args.size)
        env = dict(os.environ, MEM_DIR=str(root), PYTHONPATH=str(ROOT))
        began = time.perf_counter()
        subprocess.run(mem + ["reindex"], env=env, check=True, stderr=subprocess.DEVNULL)
        print(f"models: {'fake (tests/support/fakes.py)' if args.fakes else 'real defaults'}; {args.size} memories; "
              f"indexed in {time.perf_counter() - began:.1f} s")
        cold = statistics.median(wall(mem + ["search", q, "--json"], env) for q in QUERIES[: args.cold_runs])
        figures = anyio.run(through_mcp, mem, env, args.runs)
        search, context = statistics.median(figures["search"]), statistics.median(figures["context"])
        rows = [
            ("cold `mem search` process", cold, args.cold_runs),
            ("mcp: server start (connect)", figures["connect"], 1),
            ("mcp: first memory_search", figures["first search"], 1),
            ("mcp: memory_search", search, args.runs),
            ("mcp: memory_context (200 tokens)", context, args.runs),
        ]
        print(f"{'what':<34} {'median ms':>10} {'runs':>5}")
        for label, value, runs in rows:
            print(f"{label:<34} {value * 1000:10.1f} {runs:>5}")
        print(f"memory_search through MCP is {cold / search:.0f}x faster than a cold `mem search` process "
              f"(p90 {statistics.quantiles(figures['search'], n=10)[-1] * 1000:.1f} ms)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
