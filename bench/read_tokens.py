"""What a reading model pays for its memories, end to end: tokens of MCP tool results against the raw texts.

    .venv/bin/python bench/read_tokens.py [--data ../shared/bench/locomo-dev/locomo-dev.json] [--questions N]
                                          [--stores DIR] [--min-chars N] [--no-heldout]

Each LoCoMo development conversation gets its own store, filled through `mem import` with the real
default models: its session summaries (~650 characters, compressed by the default model) and its
conversation turns (short, stored raw), each at its session's date. Then a real MCP client (the MCP
package's, over stdio) talks to `mem mcp` and asks every category 1-4 question:

- memory_search with limit 5, by default and with raw: true, and memory_get of each hit the default
  result cut to one line (what a reader that fetched every one of them would pay: an upper bound);
- memory_context with its default budget, by default and with raw: true.

Tokens are counted with the compression model's tokenizer (SmolLM2, as mem counts), on what a model
reads of each result: its text blocks. For each tool the baseline is the raw texts of the same hits alone,
one per line (1.00); "compressed texts alone" is what the stored short forms of those hits would cost with
nothing around them. The structured result (compact JSON, for clients that hand that to the model
instead) is shown too. Figures per conversation and pooled; the targets are memory_search <= 0.65x
(issue 54) and memory_context <= 0.65x (issue 12), and neither above its raw: true mode.

The read shape was chosen on the LoCoMo stores, so one store it was not chosen on is measured after
them, apart from the pooled figure: the fresh notes and chat turns of bench/data/fresh_heldout.json
(issue 18's held-out data, written with their questions), each dated one day after the one before, two
items a day, so that hits spread over days as a person's memories do.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from itertools import zip_longest
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from corpora import FRESH  # noqa: E402
from retrieval import DEFAULT_DATA, questions, session_time, turns  # noqa: E402

LIMIT = 5


def summaries(conversation: dict, sample: dict):
    for key, text in sample["session_summary"].items():
        number = int(key.split("_")[1])
        stamp = session_time(conversation[f"session_{number}_date_time"])
        yield {"raw": text, "created_at": stamp, "source": f"summary:{number}", "tags": ["summary"]}


def locomo(sample: dict) -> tuple[list[dict], list[str]]:
    """The records of one conversation's store and the questions asked of it."""
    records = list(summaries(sample["conversation"], sample))
    records += [{"raw": text, "created_at": stamp, "source": dia_id}
                for dia_id, text, stamp in turns(sample["conversation"])]
    known = {dia_id for dia_id, _, _ in turns(sample["conversation"])}
    return records, [question for question, _ in questions(sample, known)]


def heldout() -> tuple[list[dict], list[str]]:
    """The fresh notes and turns as one store, interleaved, two a day from 3 Jan 2026."""
    fresh = json.loads(FRESH.read_text())
    items = [item for pair in zip_longest(fresh["notes"], fresh["turns"]) for item in pair if item]
    start = dt.datetime(2026, 1, 3, 9, 0, tzinfo=dt.timezone.utc)
    records = [{"raw": item["text"], "source": item["id"],
                "created_at": (start + dt.timedelta(days=n // 2, hours=n % 2)).strftime("%Y-%m-%dT%H:%M:%SZ")}
               for n, item in enumerate(items)]
    return records, [qa["q"] for item in items for qa in item["qa"]]


def build(folder: Path, records: list[dict], env: dict, min_chars: int | None) -> dict[str, dict]:
    """The store of one set of records, through the real CLI (kept when --stores names a folder that has
    it already); returns every stored record by id."""
    mem = [sys.executable, "-m", "memcli"]
    if not folder.exists():
        if min_chars is not None:
            folder.mkdir(parents=True)
            (folder / "mem.yaml").write_text(f"compress_min_chars: {min_chars}\n")
        lines = "\n".join(json.dumps(record) for record in records)
        subprocess.run(mem + ["import"], input=lines, text=True, env=env, check=True, capture_output=True)
        subprocess.run(mem + ["reindex"], env=env, check=True, capture_output=True)
    exported = subprocess.run(mem + ["export"], env=env, check=True, capture_output=True, text=True).stdout
    return {record["id"]: record for record in map(json.loads, exported.splitlines())}


def reads(result) -> str:
    """What a model reads of a tool result: its text blocks."""
    return "\n".join(block.text for block in result.content)


async def ask(env: dict, asked: list[str]) -> list[dict]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "memcli", "mcp"], env=env)
    out = []
    async with Client(params, client_info=Implementation(name="bench", version="1"), read_timeout_seconds=600) as client:
        for question in asked:
            row = {}
            for tool, arguments in (("search", {"limit": LIMIT}), ("context", {})):
                for mode in ("default", "raw"):
                    extra = {"raw": True} if mode == "raw" else {}
                    result = await client.call_tool(f"memory_{tool}", {"query": question, **arguments, **extra})
                    if result.is_error:
                        raise SystemExit(f"memory_{tool} failed: {reads(result)}")
                    row[f"{tool} {mode}"] = {"text": reads(result), "json": compact(result.structured_content),
                                             "ids": [m["id"] for m in result.structured_content["memories"]]}
                    cut = [m["id"] for m in result.structured_content["memories"] if m.get("cut")]
                    row[f"{tool} {mode}"]["fetched"] = [reads(await client.call_tool("memory_get", {"id": i}))
                                                        for i in cut]
            out.append(row)
    return out


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tally(rows: list[dict], stored: dict[str, dict], count) -> dict[str, dict[str, int]]:
    """Token totals per tool: the raw texts of its hits, their compressed texts, and each mode's result."""
    totals = {}
    for tool in ("search", "context"):
        sums = dict.fromkeys(("raw texts", "compressed texts", "default text", "raw text", "default json",
                              "raw json", "default fetched"), 0)
        for row in rows:
            ids = row[f"{tool} default"]["ids"]
            if ids:  # the raw mode may differ from the default in what fits; each is compared with its own hits
                sums["raw texts"] += count("\n".join(stored[i]["raw"] for i in ids))
                sums["compressed texts"] += count("\n".join(stored[i]["compressed"] or stored[i]["raw"] for i in ids))
                sums["default text"] += count(row[f"{tool} default"]["text"])
                sums["default json"] += count(row[f"{tool} default"]["json"])
                sums["default fetched"] += sum(count(text) for text in row[f"{tool} default"]["fetched"])
            raw_ids = row[f"{tool} raw"]["ids"]
            if raw_ids:
                sums["raw text"] += count(row[f"{tool} raw"]["text"])
                sums["raw json"] += count(row[f"{tool} raw"]["json"])
                sums.setdefault("raw-mode raw texts", 0)
                sums["raw-mode raw texts"] += count("\n".join(stored[i]["raw"] for i in raw_ids))
        totals[tool] = sums
    return totals


def table(name: str, totals: dict[str, dict[str, int]]) -> str:
    lines = [f"\n{name}", "| what the reader received | tokens | vs the raw texts alone |", "|---|---|---|"]
    for tool, label in (("search", f"memory_search (limit {LIMIT})"), ("context", "memory_context (default budget)")):
        sums = totals[tool]
        base, raw_base = sums["raw texts"] or 1, sums.get("raw-mode raw texts") or 1
        lines += [
            f"| {tool}: the raw texts of the hits, nothing else | {sums['raw texts']:,} | 1.000 |",
            f"| {tool}: the compressed texts of the hits, nothing else | {sums['compressed texts']:,} | "
            f"{sums['compressed texts'] / base:.3f} |",
            f"| `{label}` with `raw: true` | {sums['raw text']:,} | {sums['raw text'] / raw_base:.3f} |",
            f"| `{label}` by default | {sums['default text']:,} | {sums['default text'] / base:.3f} |",
            *([f"| the same, and memory_get of every hit it cut | {sums['default text'] + sums['default fetched']:,} | "
               f"{(sums['default text'] + sums['default fetched']) / base:.3f} |"] if tool == "search" else []),
            f"| ({tool}: structuredContent as compact JSON, default / raw) | {sums['default json']:,} / "
            f"{sums['raw json']:,} | {sums['default json'] / base:.3f} / {sums['raw json'] / raw_base:.3f} |",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--questions", type=int, default=0, help="At most N questions per conversation (0: all).")
    parser.add_argument("--stores", type=Path, help="Keep the built stores here and reuse them on the next run.")
    parser.add_argument("--min-chars", type=int, help="compress_min_chars of the stores built (default: mem's).")
    parser.add_argument("--no-heldout", action="store_true", help="Leave out the held-out store (fresh notes and turns).")
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    work = args.stores or Path(tempfile.mkdtemp(prefix="mem-bench-read-tokens-"))
    from memcli.config import Settings
    from memcli.core import engines

    count = engines.local().token_counter(Settings().compress_model)
    pooled: dict[str, dict[str, int]] = {}
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    try:
        def measure(name: str, records: list[dict], asked: list[str], note: str = "") -> dict[str, dict[str, int]]:
            env = {**os.environ, "MEM_DIR": str(work / name), "PYTHONPATH": str(ROOT)}
            stored = build(work / name, records, env, args.min_chars)
            asked = asked[:args.questions] if args.questions else asked
            totals = tally(anyio.run(ask, env, asked), stored, count)
            optimized = sum(1 for record in stored.values() if record["compressed"])
            print(table(f"{name}{note}: {len(stored)} memories ({optimized} compressed), {len(asked)} questions", totals))
            return totals

        for sample in samples:
            for tool, sums in measure(sample["sample_id"], *locomo(sample)).items():
                for key, value in sums.items():
                    pooled.setdefault(tool, {}).setdefault(key, 0)
                    pooled[tool][key] += value
        print(table("pooled (the development conversations)", pooled))
        if not args.no_heldout:
            measure("held-out", *heldout(), note=" (fresh notes and turns, the read shape not chosen on them)")
        print(f"\nload average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        if not args.stores:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
