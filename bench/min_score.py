"""What hybrid search's default cut-off (memcli/index/search.py) and a `--min-score X` keep and drop on LoCoMo.

    .venv/bin/python bench/min_score.py [--data ../shared/bench/locomo-dev/locomo-dev.json] [--keep 0.95]

Each conversation gets its own store, one memory per turn (as bench/retrieval.py builds it), with the real
default models, in this process. Three kinds of query, each searched with the cut-off turned off
(min_score 0) and the top 10 kept:

- real: the category 1-4 questions. A hit is relevant when it is one of the question's evidence turns.
- nonsense: three words that no memory of this store contains, drawn (seeded) from the other
  conversation's words, plus the issue's "zebra quantum banana". Nothing here is a real match.
- off-topic: the other conversation's questions (real questions about people this store never met).

First, the default: what the question "has this query a real match?" (its best hit STAND_OUT above the
rest of the store, or CLOSE, or MATCH_COVERAGE; memcli/index/search.py) keeps and silences. Then, per mode, fixed cuts of each result's score (what `--min-score X` does): the
lowest that silences `--silence` of the nonsense queries sharing no word with the store (their score is
meaning alone; in `vector` mode that is the cosine level of a short query with no match), and the one that keeps `--keep` of the relevant hits. The printout says, per
conversation and pooled: relevant hits kept, real queries that still return something, nonsense and
off-topic queries that return nothing. Re-run after any change to the score or the embedding model;
the levels themselves were set with bench/spread.py (docs/search.md).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from retrieval import DEFAULT_DATA, questions, turns  # noqa: E402

from memcli.core import reading
from memcli.index.lexical import STOPWORDS  # noqa: E402

WORD = re.compile(r"[a-z]{4,}")
K = 10


def open_store(folder: Path, sample: dict):
    """A store of this conversation's turns, embedded by the real default model."""
    from memcli.core import engines
    from memcli.core.compressing import CompressOptions
    from memcli.core.mem import Mem
    from memcli.features.transfer import import_lines
    from memcli.store.folder import Store

    mem = Mem(Store(folder), engines.local())
    mem.ensure_store()
    records = []
    for dia_id, text, stamp in turns(sample["conversation"]):
        records.append(json.dumps({"raw": text, "created_at": stamp, "source": dia_id}))
    import_lines(mem, records, CompressOptions(enabled=False))
    mem.index_vectors()
    return mem


def vocabulary(sample: dict) -> set[str]:
    words = set()
    for _, text, _ in turns(sample["conversation"]):
        words.update(WORD.findall(text.lower()))
    return words - STOPWORDS


def nonsense(own: set[str], other: set[str], count: int, seed: int) -> list[str]:
    pool = sorted(other - own)
    rng = random.Random(seed)
    return ["zebra quantum banana"] + [" ".join(rng.sample(pool, 3)) for _ in range(count - 1)]


def scored(mem, query: str, mode: str, min_score: float | None = 0) -> list[tuple[str, float]]:
    return [(hit.memory.source, hit.score) for hit in reading.search(mem, query, k=K, mode=mode, min_score=min_score)]


def by_default(mem, sample: dict, other: dict, count: int) -> dict:
    """measure()'s figures of the hybrid default cut-off, as lists of kept scores per query."""
    known = {dia_id for dia_id, _, _ in turns(sample["conversation"])}
    real = []
    for question, evidence in questions(sample, known):
        hits = scored(mem, question, "hybrid", None)
        real.append({"relevant": [1.0 for source, _ in hits if source in evidence] +
                     [0.0 for source, _ in scored(mem, question, "hybrid") if source in evidence
                      and source not in {s for s, _ in hits}], "top": [1.0 for _ in hits]})
    odd = nonsense(vocabulary(sample), vocabulary(other), count, seed=12)
    return {"real": real, "nonsense": [[1.0 for _ in scored(mem, q, "hybrid", None)] for q in odd],
            "off": [[1.0 for _ in scored(mem, qa["question"], "hybrid", None)] for qa in other["qa"]
                    if qa.get("category") in (1, 2, 3, 4)]}


def measure(mem, sample: dict, other: dict, mode: str, count: int) -> dict:
    known = {dia_id for dia_id, _, _ in turns(sample["conversation"])}
    real = []
    for question, evidence in questions(sample, known):
        hits = scored(mem, question, mode)
        real.append({"relevant": [score for source, score in hits if source in evidence],
                     "top": [score for _, score in hits]})
    odd = nonsense(vocabulary(sample), vocabulary(other), count, seed=12)
    wordless = [max((s for _, s in scored(mem, q, mode)), default=0.0) for q in odd if not scored(mem, q, "text")]
    off = [scored(mem, qa["question"], mode) for qa in other["qa"] if qa.get("category") in (1, 2, 3, 4)]
    return {"real": real, "nonsense": [[s for _, s in scored(mem, q, mode)] for q in odd],
            "off": [[s for _, s in h] for h in off], "wordless": wordless}


def noise_level(wordless: list[float], silence: float) -> float:
    """The lowest cut-off (two decimals, rounded up) above the best hit of `silence` of the word-less nonsense."""
    ordered = sorted(wordless)
    at = ordered[min(len(ordered) - 1, max(0, int(silence * len(ordered) + 0.999999) - 1))]
    return math.floor(at * 100 + 1) / 100


def threshold(relevant: list[float], keep: float) -> float:
    """The highest cut-off (two decimals, rounded down) that keeps at least `keep` of the relevant scores."""
    ordered = sorted(relevant, reverse=True)
    at = ordered[max(0, int(keep * len(ordered) + 0.999999) - 1)]
    return int(at * 100) / 100


def report(name: str, data: dict, cut: float) -> str:
    relevant = [s for q in data["real"] for s in q["relevant"]]
    kept = sum(s >= cut for s in relevant) / max(1, len(relevant))
    answered = sum(any(s >= cut for s in q["top"]) for q in data["real"]) / len(data["real"])
    mean_hits = sum(sum(s >= cut for s in q["top"]) for q in data["real"]) / len(data["real"])
    silent = sum(not any(s >= cut for s in h) for h in data["nonsense"]) / len(data["nonsense"])
    off = sum(not any(s >= cut for s in h) for h in data["off"]) / len(data["off"])
    return (f"{name:<9} {cut:>5.2f} {kept:>8.1%} {answered:>9.1%} {mean_hits:>8.1f} {silent:>9.1%} {off:>10.1%}"
            f"   ({len(relevant)} relevant hits, {len(data['real'])} real, {len(data['nonsense'])} nonsense,"
            f" {len(data['off'])} off-topic queries)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--silence", type=float, default=0.95,
                        help="Share of the nonsense queries sharing no word with the store that the cut-off silences.")
    parser.add_argument("--keep", type=float, default=0.95, help="Share of the relevant hits kept by the comparison cut.")
    parser.add_argument("--nonsense", type=int, default=100, help="Nonsense queries per conversation.")
    parser.add_argument("--modes", nargs="+", default=["hybrid", "vector"])
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    work = Path(tempfile.mkdtemp(prefix="mem-bench-min-score-"))
    try:
        mems = [open_store(work / sample["sample_id"], sample) for sample in samples]
        print("the default cut-off of hybrid search (1.00 below: kept by it; relevant kept: of those in the top 10)")
        print("                    relevant real-hit  hits/q  nonsense  off-topic")
        print("                      kept  answered  kept     silent     silent")
        per = {sample["sample_id"]: by_default(mem, sample, samples[(n + 1) % len(samples)], args.nonsense)
               for n, (sample, mem) in enumerate(zip(samples, mems))}
        pooled = {key: [item for data in per.values() for item in data[key]] for key in ("real", "nonsense", "off")}
        for name, data in [*per.items(), ("pooled", pooled)]:
            print(report(name, data, 1.0))
        for mode in args.modes:
            per = {sample["sample_id"]: measure(mem, sample, samples[(n + 1) % len(samples)], mode, args.nonsense)
                   for n, (sample, mem) in enumerate(zip(samples, mems))}
            pooled = {key: [item for data in per.values() for item in data[key]]
                      for key in ("real", "nonsense", "off", "wordless")}
            cut = noise_level(pooled["wordless"], args.silence)
            by_answers = threshold([s for q in pooled["real"] for s in q["relevant"]], args.keep)
            print(f"\nmode {mode}: threshold {cut:.2f} (silences {args.silence:.0%} of the"
                  f" {len(pooled['wordless'])} nonsense queries sharing no word with the store, pooled);"
                  f" keeping {args.keep:.0%} of the relevant hits would put it at {by_answers:.2f}")
            print("          min_score relevant real-hit  hits/q  nonsense  off-topic")
            print("                      kept  answered  kept     silent     silent")
            for name, data in [*per.items(), ("pooled", pooled)]:
                for value in sorted({0.0, cut, by_answers}):
                    print(report(name, data, value))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
