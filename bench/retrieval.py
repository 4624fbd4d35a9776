"""Retrieval quality on LoCoMo: recall@5 and @10 per search mode, through the real CLI.

    .venv/bin/python bench/retrieval.py [--data ../shared/bench/locomo-dev/locomo-dev.json]

Each conversation gets its own store; each turn becomes one memory ("Speaker: text", plus the image
caption when the turn shared a photo), created at its session's date. The category 1-4 questions go
through `mem search -` (one process per mode and conversation); recall@k is the share of a question's
evidence turns found in its top k, averaged over questions (the metric in the data's README).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo-dev" / "locomo-dev.json"
EVIDENCE = re.compile(r"D(\d+):(\d+)")


def session_time(text: str) -> str:
    """'1:56 pm on 8 May, 2023' → '2023-05-08T13:56:00Z' (the dataset gives no time zone)."""
    moment = dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shared an image: {turn['blip_caption']}]"
    return text


def turns(conversation: dict):
    """(dia_id, text, created_at) for every turn, in order."""
    sessions = sorted(int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k))
    for number in sessions:
        stamp = session_time(conversation[f"session_{number}_date_time"])
        for turn in conversation[f"session_{number}"]:
            yield turn["dia_id"], turn_text(turn), stamp


def questions(sample: dict, known: set[str]):
    for qa in sample["qa"]:
        if qa.get("category") not in (1, 2, 3, 4):
            continue
        # Some ids are malformed ("D8:6; D9:17", "D30:05"): take every D<n>:<n>, drop those naming no turn.
        evidence = {f"D{int(s)}:{int(t)}" for item in qa.get("evidence", []) for s, t in EVIDENCE.findall(item)}
        evidence &= known
        if evidence:
            yield qa["question"], evidence


def run_mem(args: list[str], env: dict, stdin: str | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "memcli", *args], input=stdin, env=env, text=True,
                          capture_output=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"mem {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--modes", nargs="+", default=["text", "vector", "hybrid"])
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    work = Path(tempfile.mkdtemp(prefix="mem-bench-retrieval-"))
    totals = {mode: {5: 0.0, 10: 0.0} for mode in args.modes}
    seconds = {mode: 0.0 for mode in args.modes}
    count = 0
    try:
        for sample in samples:
            env = dict(os.environ, MEM_DIR=str(work / sample["sample_id"]))
            records, by_id = [], {}
            for dia_id, text, stamp in turns(sample["conversation"]):
                records.append(json.dumps({"raw": text, "created_at": stamp, "tags": [sample["sample_id"]],
                                           "source": f"locomo/{sample['sample_id']}#{dia_id}"}))
            run_mem(["import", "--no-compress", "-"], env, "\n".join(records))
            run_mem(["reindex"], env)
            for row in json.loads(run_mem(["ls", "--json"], env)):
                by_id[row["id"]] = row["source"].split("#")[1]
            asked = list(questions(sample, set(by_id.values())))
            queries = "\n".join(" ".join(q.split()) for q, _ in asked) + "\n"
            for mode in args.modes:
                began = time.perf_counter()
                out = run_mem(["search", "-", "-k", "10", "--mode", mode], env, queries)
                seconds[mode] += time.perf_counter() - began
                found: dict[str, list[str]] = {}
                for line in out.splitlines():
                    row = json.loads(line)
                    found.setdefault(row["query"], []).append(by_id[row["id"]])
                for question, evidence in asked:
                    ranked = found.get(" ".join(question.split()), [])
                    for k in (5, 10):
                        totals[mode][k] += len(evidence & set(ranked[:k])) / len(evidence)
            count += len(asked)
            print(f"{sample['sample_id']}: {len(by_id)} turns, {len(asked)} questions", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"LoCoMo dev ({len(samples)} conversations, {count} questions of categories 1-4)")
    print(f"{'mode':<8} {'R@5':>6} {'R@10':>6} {'s/query':>8}")
    for mode in args.modes:
        print(f"{mode:<8} {totals[mode][5] / count:6.3f} {totals[mode][10] / count:6.3f} "
              f"{seconds[mode] / count:8.4f}")


if __name__ == "__main__":
    main()
