"""Retrieval quality on LoCoMo: recall@5 and @10 per search mode and per conversation, through the real CLI.

    .venv/bin/python bench/retrieval.py [--data ../shared/bench/locomo-dev/locomo-dev.json] [--before REF]

Each conversation gets its own store; each turn becomes one memory ("Speaker: text", plus the image
caption when the turn shared a photo), created at its session's date. The category 1-4 questions go
through `mem search -` (one process per mode and conversation); recall@k is the share of a question's
evidence turns found in its top k, averaged over questions (the metric in the data's README).
Every figure is printed per conversation as well as overall, so a change that helps one conversation
and hurts the other shows. `--before REF` runs the hybrid search of that git revision of this
repository (its own store, built the same way) in the same run, as the "before" row. Each store is
reindexed after its import, so its vectors come from the vector cache (float16); `--cache` adds the
"fresh" rows, whose reindex embeds every memory again (no cache). `--held-out` also
measures R@1 and R@5 on bench/data/fresh_heldout.json (notes and chat turns written for issue 18, never
tuned on): one store of its 120 texts, each question's evidence its own text.

`--corpus devcontent` measures developers' content instead: one store of the items of
../shared/bench/devcontent/items.jsonl (real diffs, commit notes, test runs, logs, code), asked the
questions of its retrieval.jsonl, split again here as bench/devcontent.py splits its items: a question
whose number divides by three is "check" (judged only, never looked at one by one while tuning), the rest
"tune". `--corpus notes` measures bench/data/keyword_notes.json (short developer notes and keyword
queries of the `rate limiting` kind, written before tuning; its own tune and held-out split). Both print,
per split, R@5 and R@10 over the questions that have an answer and the share of those that have none
which return nothing (`silent`): a search that answers every question with something scores 0 there.
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

ROOT = Path(__file__).resolve().parents[1]
# shared/ sits beside the repository (or beside the folder of worktrees holding it)
DEFAULT_DATA = next((p / "shared" / "bench" / "locomo-dev" / "locomo-dev.json" for p in ROOT.parents
                     if (p / "shared" / "bench" / "locomo-dev" / "locomo-dev.json").is_file()), None)
EVIDENCE = re.compile(r"D(\d+):(\d+)")
HELD_OUT = ROOT / "bench" / "data" / "fresh_heldout.json"
FRESH = "fresh"  # with --cache: this checkout, its index's vectors embedded afresh rather than from the cache
DEVCONTENT = next((p / "shared" / "bench" / "devcontent" for p in ROOT.parents
                   if (p / "shared" / "bench" / "devcontent" / "retrieval.jsonl").is_file()), None)
KEYWORD_NOTES = ROOT / "bench" / "data" / "keyword_notes.json"


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
    """`mem ARGS` of the code at env's PYTHONPATH: run from there, since `python -m` puts the working
    directory ahead of PYTHONPATH (from a checkout, every version would run that checkout's code)."""
    done = subprocess.run([sys.executable, "-m", "memcli", *args], input=stdin, env=env, text=True,
                          capture_output=True, cwd=env["PYTHONPATH"])
    if done.returncode not in (0, 1):
        raise SystemExit(f"mem {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def checkout(ref: str, into: Path) -> Path:
    """The package of git revision `ref` of this repository, unpacked under `into`."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "memcli"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def searched(name: str, items: list[tuple[str, str, str | None]], queries: list[str], work: Path,
             versions: dict[str, Path], modes: dict[str, list[str]], k: int) -> dict:
    """{(version, mode): ({query: keys of its top k, best first}, seconds)}, each version searching its
    own store of `items` (key, text, created_at or None)."""
    figures = {}
    for version, code in versions.items():
        env = dict(os.environ, MEM_DIR=str(work / version / name), PYTHONPATH=str(code))
        records = [json.dumps({"raw": text, "tags": [name], "source": f"{name}#{key}",
                               **({"created_at": stamp} if stamp else {})}) for key, text, stamp in items]
        run_mem(["import", "--no-compress", "-"], env, "\n".join(records))
        if version == FRESH:  # no vector cache: the reindex embeds every memory again
            shutil.rmtree(work / version / name / "vectors")
        run_mem(["reindex"], env)
        by_id = {row["id"]: row["source"].split("#")[1] for row in json.loads(run_mem(["ls", "--json"], env))}
        lines = "\n".join(" ".join(q.split()) for q in queries) + "\n"
        for mode in modes[version]:
            began = time.perf_counter()
            out = run_mem(["search", "-", "-k", str(k), "--mode", mode], env, lines)
            seconds = time.perf_counter() - began
            found: dict[str, list[str]] = {}
            for line in out.splitlines():
                row = json.loads(line)
                found.setdefault(row["query"], []).append(by_id[row["id"]])
            figures[version, mode] = (found, seconds)
    return figures


def scores(found: dict[str, list[str]], seconds: float, asked: list[tuple[str, set[str]]], ks: tuple[int, int]):
    """(sum of R@ks[0], sum of R@ks[1], seconds, questions without evidence that found nothing) over `asked`."""
    sums, silent = dict.fromkeys(ks, 0.0), 0
    for question, evidence in asked:
        ranked = found.get(" ".join(question.split()), [])
        silent += not evidence and not ranked
        for k in ks:
            sums[k] += len(evidence & set(ranked[:k])) / len(evidence) if evidence else 0.0
    return (*(sums[k] for k in ks), seconds, silent)


def measure(name: str, items: list[tuple[str, str, str | None]], asked: list[tuple[str, set[str]]], work: Path,
            versions: dict[str, Path], modes: dict[str, list[str]], ks: tuple[int, int]):
    """{(version, mode): scores()} of `asked` (question, evidence keys) on a store of `items`."""
    runs = searched(name, items, [q for q, _ in asked], work, versions, modes, max(ks))
    return {key: scores(found, seconds, asked, ks) for key, (found, seconds) in runs.items()}


def conversation(sample: dict, work: Path, versions: dict[str, Path], modes: dict[str, list[str]]):
    """measure() of one LoCoMo conversation at R@5 and R@10, and its number of questions."""
    items = list(turns(sample["conversation"]))
    asked = list(questions(sample, {key for key, _, _ in items}))
    return measure(sample["sample_id"], items, asked, work, versions, modes, (5, 10)), len(asked)


def held_out(work: Path, versions: dict[str, Path], modes: dict[str, list[str]]):
    """measure() of the held-out notes and chat turns (bench/data/fresh_heldout.json, one store holding
    both), each question's evidence being its own text, at R@1 and R@5; and the number of questions."""
    data = json.loads(HELD_OUT.read_text())
    records = data["notes"] + data["turns"]
    items = [(item["id"], item["text"], None) for item in records]
    asked = [(qa["q"], {item["id"]}) for item in records for qa in item["qa"]]
    return measure("held-out", items, asked, work, versions, modes, (1, 5)), len(asked)


def split_corpus(name: str, items: list, asked: list[tuple[str, set[str], str]], work: Path,
                 versions: dict[str, Path], modes: dict[str, list[str]]) -> None:
    """measure() of one store of `items`, printed per split of `asked` (question, evidence, split) and in
    all: R@5 and R@10 over the questions with evidence, and how many of those without return nothing."""
    splits = sorted({split for _, _, split in asked}, key=lambda split: (split != "tune", split))
    runs = searched(name, items, [q for q, _, _ in asked], work, versions, modes, 10)
    figures = {split: {key: scores(found, seconds * sum(s == split for *_, s in asked) / len(asked),
                                   [(q, e) for q, e, s in asked if s == split], (5, 10))
                       for key, (found, seconds) in runs.items()} for split in splits}
    print(f"{name}: one store of {len(items)} memories, {len(asked)} questions; load average {os.getloadavg()[0]:.1f}")
    print(f"{'code':<10} {'mode':<7} {'split':<9} {'answerable':>10} {'R@5':>6} {'R@10':>6} {'unanswerable':>12}"
          f" {'silent':>7} {'s/query':>8}")
    for version in versions:
        for mode in modes[version]:
            rows = [(split, [(q, e) for q, e, s in asked if s == split], figures[split][version, mode])
                    for split in splits]
            rows.append(("all", [(q, e) for q, e, _ in asked],
                         [sum(row[2][i] for row in rows) for i in range(4)]))
            for split, questions_, (r5, r10, seconds, silent) in rows:
                answerable = sum(1 for _, e in questions_ if e)
                unanswerable = len(questions_) - answerable
                print(f"{version:<10} {mode:<7} {split:<9} {answerable:>10} {r5 / max(1, answerable):6.3f}"
                      f" {r10 / max(1, answerable):6.3f} {unanswerable:>12} {silent / max(1, unanswerable):7.1%}"
                      f" {seconds / max(1, len(questions_)):8.4f}")


def devcontent_questions() -> tuple[list[dict], list[tuple[str, set, str]]]:
    """The devcontent items and its retrieval questions as (query, relevant ids, split): every third
    question is the check split, never tuned on."""
    items = [json.loads(line) for line in (DEVCONTENT / "items.jsonl").read_text().splitlines() if line.strip()]
    asked = []
    for line in (DEVCONTENT / "retrieval.jsonl").read_text().splitlines():
        if line.strip():
            query = json.loads(line)
            split = "check" if int(query["id"].rsplit("-", 1)[1]) % 3 == 0 else "tune"
            asked.append((query["query"], set(query["relevant"]), split))
    return items, asked


def devcontent(work: Path, versions: dict[str, Path], modes: dict[str, list[str]]) -> None:
    items, asked = devcontent_questions()
    split_corpus("devcontent", [(item["id"], item["raw"], None) for item in items], asked, work, versions, modes)


def keyword_notes(work: Path, versions: dict[str, Path], modes: dict[str, list[str]]) -> None:
    data = json.loads(KEYWORD_NOTES.read_text())
    asked = [(query["q"], set(query["relevant"]), query["split"]) for query in data["queries"]]
    split_corpus("notes", [(note["id"], note["text"], None) for note in data["notes"]], asked, work, versions, modes)


def table(results: dict, counts: dict, versions: dict, modes: dict, ks: tuple[int, int]) -> None:
    total = sum(counts.values())
    names = list(results)
    print(f"{'code':<10} {'mode':<7} " + " ".join(f"{f'{name} R@{ks[0]}':>12} {f'R@{ks[1]}':>5}"
                                                   for name in names + ["all"]) + f" {'s/query':>8}")
    for version in versions:
        for mode in modes[version]:
            cells = [(results[n][version, mode][0] / counts[n], results[n][version, mode][1] / counts[n])
                     for n in names]
            cells.append((sum(results[n][version, mode][0] for n in names) / total,
                          sum(results[n][version, mode][1] for n in names) / total))
            seconds = sum(results[n][version, mode][2] for n in names) / total
            print(f"{version:<10} {mode:<7} " + " ".join(f"{a:12.3f} {b:5.3f}" for a, b in cells)
                  + f" {seconds:8.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--modes", nargs="+", default=["text", "vector", "hybrid"])
    parser.add_argument("--before", metavar="REF", help="also run the hybrid search of this git revision")
    parser.add_argument("--cache", action="store_true",
                        help="also this checkout with fresh vectors (no vector cache) against the cached ones")
    parser.add_argument("--corpus", choices=("locomo", "devcontent", "notes"), default="locomo",
                        help="devcontent: developers' content; notes: short notes and keyword queries (per split)")
    parser.add_argument("--held-out", action="store_true",
                        help="also the held-out notes and turns (judged only: never tune on them)")
    args = parser.parse_args()
    if args.corpus == "locomo" and args.data is None:
        raise SystemExit("no LoCoMo data found beside the repository; give --data")
    if args.corpus == "devcontent" and DEVCONTENT is None:
        raise SystemExit("no ../shared/bench/devcontent/ found beside the repository")
    work = Path(tempfile.mkdtemp(prefix="mem-bench-retrieval-"))
    versions, modes = {"now": ROOT}, {"now": args.modes}
    if args.before:
        versions = {args.before: checkout(args.before, work / "code"), **versions}
        modes[args.before] = ["hybrid"]
    if args.cache:
        versions, modes[FRESH] = {FRESH: ROOT, **versions}, args.modes
    results, counts = {}, {}
    if args.corpus != "locomo":
        try:
            (devcontent if args.corpus == "devcontent" else keyword_notes)(work, versions, modes)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    samples = json.loads(args.data.read_text())
    try:
        for sample in samples:
            results[sample["sample_id"]], counts[sample["sample_id"]] = conversation(sample, work, versions, modes)
            print(f"{sample['sample_id']}: {counts[sample['sample_id']]} questions", file=sys.stderr)
        if args.held_out:
            judged, asked = held_out(work, versions, modes)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"LoCoMo dev ({len(samples)} conversations, {sum(counts.values())} questions of categories 1-4); "
          f"load average {os.getloadavg()[0]:.1f}")
    table(results, counts, versions, modes, (5, 10))
    if args.held_out:
        print(f"\nheld-out notes and chat turns ({HELD_OUT.name}: one store, {asked} questions, each about its own text)")
        table({"held-out": judged}, {"held-out": asked}, versions, modes, (1, 5))


if __name__ == "__main__":
    main()
