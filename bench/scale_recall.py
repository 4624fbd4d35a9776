
"""Recall at scale: the LoCoMo development questions asked of a store of 10,000 memories of two turns each.

    .venv/bin/python bench/scale_recall.py [--size 10000] [--store DIR] [--scored 1000 2000]

bench/retrieval.py measures a conversation's own store (a few hundred memories), where no cap of word
search binds. Here each memory is two turns picked at random from both conversations (the corpus of
bench/search_latency.py), so each of the four speakers' names is in 55-68% of the store, as a common
word is in a large store of real notes, and each evidence turn is in about 25 memories of 10,000. A
question's recall@10 is the share of its evidence turns that some memory of its top 10 contains,
averaged per conversation, for `--mode text` and hybrid. `--scored` runs word search with other caps
on the memories one query scores (memcli.index.lexical.SCORED) beside the default, in the same run.
The store is built with `mem import --no-compress` (about 6 minutes at 10,000 here), in `--store` to be
kept for the next run.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from search_latency import LOCOMO, ROOT, corpus, texts, turn_texts  # noqa: E402

MODES = ("text", "hybrid")


def build(root: Path, size: int) -> None:
    writer, _ = corpus("locomo")
    lines = "".join(json.dumps({"raw": text}) + "\n" for text in texts(size, writer))
    subprocess.run([sys.executable, "-m", "memcli", "import", "--no-compress", "-"], input=lines, text=True,
                   check=True, env=dict(os.environ, MEM_DIR=str(root), PYTHONPATH=str(ROOT)))


def recall(mem, sample: dict, mode: str, k: int = 10) -> float:
    from memcli.core import reading

    turns = turn_texts(sample)
    shares = []
    for qa in sample["qa"]:
        evidence = [turns[ref] for ref in qa.get("evidence", []) if ref in turns]
        if evidence:
            hits = reading.search(mem, " ".join(str(qa["question"]).split()), k=k, mode=mode, min_score=0)
            shares.append(sum(any(turn in hit.memory.raw for hit in hits) for turn in evidence) / len(evidence))
    return statistics.mean(shares)


def main() -> None:
    from memcli.core.mem import Mem
    from memcli.index import lexical
    from memcli.store.folder import Store

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--store", type=Path, help="where the store is kept: built there the first time")
    parser.add_argument("--scored", type=int, nargs="*", default=[], help="other caps to run beside the default")
    args = parser.parse_args()
    work = None if args.store else Path(tempfile.mkdtemp(prefix="mem-bench-scale-"))
    root = args.store or work / "store"
    if not (root / "memories").is_dir():
        build(root, args.size)
    samples = json.loads(LOCOMO.read_text())
    print(f"{'SCORED':>7}  " + "  ".join(f"{mode} {s['sample_id']}" for mode in MODES for s in samples))
    for scored in [lexical.SCORED, *args.scored]:
        lexical.SCORED = scored
        mem = Mem(Store(root))  # a new one: word counts are kept as counted up to the cap
        figures = [recall(mem, sample, mode) for mode in MODES for sample in samples]
        mem.catalog.close()
        print(f"{scored:>7}  " + "  ".join(f"{figure:>{len(mode) + 8}.3f}" for figure, mode in
                                           zip(figures, [m for m in MODES for _ in samples])), flush=True)
    if work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
