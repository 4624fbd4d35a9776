"""Near-duplicate rule on labelled pairs: precision and recall, and the threshold it chooses.

    .venv/bin/python bench/near_dup.py

Each pair is two memories: a paraphrase of the same fact or an update of it (both should be flagged:
the writer is better off updating), or a related but different fact (must not be flagged). The rule
is memcli.core.near_duplicates.closeness: w x MiniLM cosine + (1 - w) x overlap of word stems, flagged at score
>= t. tests/support/fixtures/near_dup_pairs.jsonl: every fourth pair (index 3, 7, 11, ...) is held out, the
others choose w (by F1 under 5-fold cross-validation, each fold fitting its own t) and then t (best
F1 on all of them, ties to the higher precision). tests/support/fixtures/near_dup_fresh.jsonl is a second
held-out set, written after a first version of this script (which chose w by plain training F1) had
shown the first held-out figures. Cosine alone and word overlap alone are the baselines, each at its
own best training threshold.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memcli.core.near_duplicates import overlap  # noqa: E402

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
THRESHOLDS = [round(0.2 + 0.01 * i, 2) for i in range(76)]  # 0.20 .. 0.95


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def cosines(pairs: list[dict]) -> list[float]:
    import numpy as np

    from memcli.config import Settings
    from memcli.core import engines

    embedder = engines.local().embedder(Settings().embed_model)  # whole texts, as memcli.core.near_duplicates.similar
    left = embedder.embed([p["a"] for p in pairs])
    right = embedder.embed([p["b"] for p in pairs])
    return [float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))) for a, b in zip(left, right)]


def figures(rows: list[tuple[dict, float]], threshold: float) -> dict:
    flagged = [(p, s >= threshold) for p, s in rows]
    tp = sum(1 for p, f in flagged if f and p["kind"] != "related")
    fp = sum(1 for p, f in flagged if f and p["kind"] == "related")
    fn = sum(1 for p, f in flagged if not f and p["kind"] != "related")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    by_kind = {}
    for kind in ("paraphrase", "update", "related"):
        of_kind = [f for p, f in flagged if p["kind"] == kind]
        by_kind[kind] = sum(of_kind) / len(of_kind) if of_kind else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "flagged": by_kind, "n": len(rows)}


def best_threshold(rows: list[tuple[dict, float]]) -> tuple[float, dict]:
    return max(((t, figures(rows, t)) for t in THRESHOLDS), key=lambda item: (item[1]["f1"], item[1]["precision"]))


def cross_validated(rows: list[tuple[dict, float]], folds: int = 5) -> float:
    """Mean F1 on each fold at the threshold the other folds chose: how well (w, fitted t) generalises."""
    scores = []
    for fold in range(folds):
        fit = [row for i, row in enumerate(rows) if i % folds != fold]
        test = [row for i, row in enumerate(rows) if i % folds == fold]
        scores.append(figures(test, best_threshold(fit)[0])["f1"])
    return sum(scores) / folds


def line(name: str, weight: float, threshold: float, found: dict) -> str:
    k = found["flagged"]
    return (f"{name:<22} w={weight:<4} t={threshold:<4}  P {found['precision']:.3f}  R {found['recall']:.3f}  "
            f"F1 {found['f1']:.3f}  flagged: paraphrase {k['paraphrase']:.2f} update {k['update']:.2f} "
            f"related {k['related']:.2f}  (n={found['n']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=ROOT / "tests" / "support" / "fixtures" / "near_dup_pairs.jsonl")
    parser.add_argument("--fresh", type=Path, default=ROOT / "tests" / "support" / "fixtures" / "near_dup_fresh.jsonl")
    args = parser.parse_args()
    pairs = load(args.pairs) + load(args.fresh)
    first = len(load(args.pairs))
    sims = cosines(pairs)
    lexical = [overlap(p["a"], p["b"]) for p in pairs]
    train = [i for i in range(first) if i % 4 != 3]
    held = [i for i in range(first) if i % 4 == 3]
    fresh = list(range(first, len(pairs)))
    print(f"{len(pairs)} pairs: {len(train)} to choose, {len(held)} held out, {len(fresh)} fresh held out; "
          f"load average {os.getloadavg()[0]:.2f}")

    def rows(indices, weight):
        return [(pairs[i], weight * sims[i] + (1 - weight) * lexical[i]) for i in indices]

    print("\ntraining pairs, per weight w of the cosine (cv F1: 5-fold cross-validated):")
    chosen = {}
    for weight in WEIGHTS:
        threshold, found = best_threshold(rows(train, weight))
        chosen[weight] = (threshold, found, cross_validated(rows(train, weight)))
        print(line("  train", weight, threshold, found) + f"  cv F1 {chosen[weight][2]:.3f}")
    weight = max(WEIGHTS, key=lambda w: chosen[w][2])
    threshold = chosen[weight][0]
    print(f"\nchosen rule: {weight} x cosine + {1 - weight} x stem overlap >= {threshold}")
    for name, indices in (("held out", held), ("fresh held out", fresh), ("both held-out sets", held + fresh)):
        print(f"\n{name} (not used to choose anything):")
        print(line("  chosen rule", weight, threshold, figures(rows(indices, weight), threshold)))
        for label, w in (("  cosine alone", 1.0), ("  word overlap alone", 0.0)):
            print(line(label, w, chosen[w][0], figures(rows(indices, w), chosen[w][0])))


if __name__ == "__main__":
    main()
