"""Compression by kind on developers' content: `bench/compression.py --corpus devcontent`.

Items: ../shared/bench/devcontent/items.jsonl (real diffs, commit notes, test runs, tracebacks, logs,
shell sessions and code from public repositories, each with questions whose answers are exact spans
of the raw), and bench/data/own_devcontent.jsonl (built here from other public repositories, see
bench/data/SOURCES.md; never tuned on). The shared items all carry split "dev"; they are cut again
here: items of sharkdp/fd and every item whose number divides by three are "check" (looked at only as
totals, never item by item, while tuning), the rest "tune".

Per kind and part: token saving (pooled: 1 - tokens of the forms / tokens of the raws; and the mean
per item), answers kept (the answer, or its longer evidence, still occurs in the form,
case-insensitively; "words": or at least every content word of the answer does, as LoCoMo is
scored), how often the kind was detected right, forms with an invented identifier,
path, number or quoted string, and code lines not kept byte-exact.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

from corpora import HERE, content_words, words

SHARED = next((p / "shared" / "bench" / "devcontent" / "items.jsonl" for p in HERE.parents
               if (p / "shared" / "bench" / "devcontent").is_dir()), None)
OWN = HERE / "data" / "own_devcontent.jsonl"
POOLED = ("diff", "test_output", "log", "traceback")
DETECTED_AS = {"commit_note": ("prose", "markdown")}


def items() -> list[dict]:
    found = []
    for line in SHARED.read_text().splitlines() if SHARED else []:
        item = json.loads(line)
        repo = (item.get("source") or {}).get("repo")
        number = int(item["id"].rsplit("-", 1)[1])
        check = repo == "sharkdp/fd" or number % 3 == 0
        found.append({**item, "part": "check" if check else "tune"})
    if OWN.exists():
        found += [{**json.loads(line), "part": "own"} for line in OWN.read_text().splitlines() if line.strip()]
    return found


def kept(question: dict, form: str) -> bool:
    text = form.lower()
    return question["answer"].lower() in text or bool(question.get("evidence")) and question["evidence"].lower() in text


def run(ops, ratio: float, show_misses: bool = False) -> None:
    from memcli.compress import guard
    from memcli.compress.kinds import detect
    from memcli.compress.pipeline import compress

    rows: dict[tuple[str, str], dict] = defaultdict(lambda: defaultdict(list))
    for item in items():
        raw = item["raw"]
        result = compress(raw, ratio=ratio, lm=ops, timeout_s=600)
        form = result.text if result.text is not None else raw
        raw_tokens, tokens = ops.count_tokens(raw), ops.count_tokens(form)
        detected = detect(raw)
        for key in ((item["kind"], item["part"]), (item["kind"], "all")):
            row = rows[key]
            row["raw"].append(raw_tokens)
            row["form"].append(tokens)
            row["answers"] += [kept(q, form) for q in item["questions"]]
            row["words"] += [kept(q, form) or content_words(q["answer"]) <= words(form) for q in item["questions"]]
            row["detected"].append(detected in DETECTED_AS.get(item["kind"], (item["kind"],)))
            row["invented"].append(bool(guard.invented_tokens(raw, form)))
            row["altered"].append(bool(guard.altered_lines(raw, form, "code")) if item["kind"] == "code" else False)
        if show_misses and item["part"] == "tune":
            for q in item["questions"]:
                if not kept(q, form):
                    print(f"  miss {item['id']}: {q['q'][:70]} -> {q['answer'][:50]!r}")
    print(f"{'kind':<12} {'part':<6} {'items':>5} {'saving':>7} {'mean':>6} {'answers':>11} {'words':>6} "
          f"{'detected':>8} {'invented':>8} {'altered':>7}")
    for (kind, part), row in sorted(rows.items()):
        _line(kind, part, row)
    for part in ("tune", "check", "own", "all"):
        pooled = defaultdict(list)
        for (kind, p), row in rows.items():
            if kind in POOLED and p == part:
                for key, values in row.items():
                    pooled[key] += values
        if pooled:
            _line("4 pooled", part, pooled)
    everything = defaultdict(list)
    for (kind, p), row in rows.items():
        if p == "all":
            for key, values in row.items():
                everything[key] += values
    _line("every kind", "all", everything)


def _line(kind: str, part: str, row) -> None:
    saving = 1 - sum(row["form"]) / sum(row["raw"])
    mean = statistics.mean(1 - f / r for f, r in zip(row["form"], row["raw"]))
    answers = row["answers"]
    print(f"{kind:<12} {part:<6} {len(row['raw']):>5} {saving:7.1%} {mean:6.1%} "
          f"{sum(answers) / max(1, len(answers)):7.1%}/{len(answers):<3} {sum(row['words']) / max(1, len(answers)):6.1%} "
          f"{sum(row['detected']) / len(row['detected']):8.0%} "
          f"{sum(row['invented']):>8} {sum(row['altered']):>7}")
