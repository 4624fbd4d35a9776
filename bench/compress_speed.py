"""Seconds per memory in compress() with the compression model's weights as shipped and as converted.

The default SmolLM2-135M file is Q4_1, a format llama.cpp has no fast CPU kernel for; mem computes from
a Q8_0 copy made once (memcli.providers.cpu_weights). Both are loaded in this one process and take
turns memory by memory, so they share the machine's load; each figure is a median over --runs rounds
of wall and CPU seconds (all threads) per memory, by corpus and, for short texts, by length band.
Also printed: forward passes per memory and how many compressed forms differ between the two.

    PYTHONPATH=. python bench/compress_speed.py [--corpus tuning|judged|all] [--only NAME] [--limit N] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from corpora import all_corpora

from memcli.compress.pipeline import compress
from memcli.providers.llama import LanguageModel, LlamaOps, import_llama_cpp, resolve

BANDS = ((0, 100), (100, 200), (200, 400), (400, None))


class CountingOps(LlamaOps):
    """LlamaOps that counts its forward passes."""

    passes = 0

    def _score_window(self, prefix, tokens, deadline):
        self.passes += 1
        return super()._score_window(prefix, tokens, deadline)


def timed(ops, raw, ratio):
    started, started_cpu = time.perf_counter(), time.process_time()
    result = compress(raw, ratio=ratio, lm=ops, min_chars=0, timeout_s=600)
    return result.text, time.perf_counter() - started, time.process_time() - started_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct-q4_1")
    parser.add_argument("--corpus", choices=("all", "tuning", "judged"), default="tuning")
    parser.add_argument("--only", action="append", default=[], help="only corpora whose name contains this")
    parser.add_argument("--limit", type=int, default=0, help="at most N memories per corpus")
    parser.add_argument("--ratio", type=float, default=0.6)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    import_llama_cpp()
    path = resolve(args.model, "compress")
    shipped = CountingOps(LanguageModel(path, args.model, fast_weights=False))
    converted = CountingOps(LanguageModel(path, args.model))
    models = {"as shipped": shipped, "converted": converted}
    print(f"{args.model}: as shipped {os.path.basename(shipped.lm.llama.model_path)}, converted "
          f"{os.path.basename(converted.lm.llama.model_path)}; median of {args.runs} rounds; load average "
          f"before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    for ops in models.values():
        compress("A first memory to warm the model up before anything is timed. " * 8, lm=ops, min_chars=0)
    corpora = [c for c in all_corpora(args.corpus) if not args.only or any(o in c.name for o in args.only)]
    for corpus in corpora:
        memories = corpus.memories[: args.limit or None]
        times = {label: [[] for _ in memories] for label in models}
        forms = {}
        for label, ops in models.items():
            ops.passes = 0
        for _ in range(args.runs):
            for i, raw in enumerate(memories):
                for label, ops in models.items():
                    text, wall, cpu = timed(ops, raw, args.ratio)
                    times[label][i].append((wall, cpu))
                    forms[label, i] = text
        tokens = statistics.mean(shipped.count_tokens(m) for m in memories)
        differ = sum(forms["as shipped", i] != forms["converted", i] for i in range(len(memories)))
        print(f"\n{corpus.name}: {len(memories)} memories, {tokens:.0f} tokens on average; forward passes per "
              f"memory {shipped.passes / args.runs / len(memories):.2f}; forms that differ: {differ}")
        for low, high in BANDS:
            members = [i for i, m in enumerate(memories) if len(m) >= low and (high is None or len(m) < high)]
            if not members or (low, high) == BANDS[-1] and len(members) == len(memories):
                continue
            label = f"{low}-{high - 1} chars" if high else f"{low}+ chars"
            print_row(f"  {label} ({len(members)})", times, members)
        print_row("  all", times, range(len(memories)))
    print(f"\nload average (1 min) after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


def print_row(label, times, members) -> None:
    cells = []
    medians = {}
    for name, per_memory in times.items():
        wall = statistics.median(statistics.mean(per_memory[i][r][0] for i in members)
                                 for r in range(len(per_memory[members[0]])))
        cpu = statistics.median(statistics.mean(per_memory[i][r][1] for i in members)
                                for r in range(len(per_memory[members[0]])))
        medians[name] = wall
        cells.append(f"{name} {wall:.3f} s wall {cpu:.3f} s cpu")
    shipped, converted = medians.values()
    print(f"{label:<22} " + "; ".join(cells) + f"; converted/shipped wall {converted / shipped:.2f}")


if __name__ == "__main__":
    sys.exit(main())
