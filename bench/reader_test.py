"""The reader test: can a reading model answer from the compressed form as well as from the raw one?

`prepare` compresses every document of the judged-only corpora (bench/corpora.py: the fresh notes and
chat turns, never tuned on; `--corpus tuning --only NAME` takes development corpora such as LoCoMo's
turns instead) exactly as `mem add` would (pass --min-chars 0 to compress the short turns too, as a
lower `compress_min_chars` would), with the real default model, and writes into OUT (outside git):
  raw.md, compressed.md   one packet per form: the same documents, the same numbered questions, no
                          answers and no word of which form it is; one reader gets one packet
  gold.json               per question: the document, the question, the gold answer, its corpus
  grading.md              the instructions for a blind grader, who gets gold.json and the two
                          readers' replies under the neutral names answers_A.txt and answers_B.txt
  key.json                which of A and B is which form (for `score`, not for the grader)
`score GRADES` reads the grader's CSV (question,A,B with 1 or 0) and prints each form's accuracy,
per corpus and overall.

Questions: the first --per-note questions of every judged document (written with it, before any
tuning).

    PYTHONPATH=. python bench/reader_test.py prepare [--out /tmp/reader] [--per-note 2] [--min-chars N]
        [--scores FILE] [--corpus judged|tuning] [--only NAME]
    PYTHONPATH=. python bench/reader_test.py score /tmp/reader/grades.csv [--out /tmp/reader]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path

from corpora import all_corpora

from memcli.compress.methods import DEFAULT_MIN_CHARS
from memcli.compress.pipeline import compress

INSTRUCTIONS = """\
# Reading test

Below are {documents} short documents, D1 to D{documents}, and then {questions} numbered questions. Each
question names the document that answers it. Answer from that document only, not from what you know
or guess. Keep each answer short (a few words, as a fact). If the document does not say, answer
"not stated".

Reply with exactly one line per question, in order: `Q<number>: <answer>`.

## Documents
"""

GRADING = """\
# Grading the reading test

gold.json lists {questions} questions, each with the document it is about, the question and the gold
answer. answers_A.txt and answers_B.txt hold two readers' replies (`Q<number>: <answer>`), each read
from a different version of the same documents; you are not told which is which, and should not try
to find out.

For every question and each of A and B, give 1 when the answer states the fact of the gold answer
(paraphrase, other word order, extra detail or a partial list that includes what the gold names are
fine, as long as nothing contradicts it), else 0 (wrong, contradicting, missing or "not stated").
A numeric answer must match the gold number and unit. Judge each answer on its own against the gold,
not against the other reader's.

Reply with a CSV file, header `question,A,B`, one row per question: `1,1,0`.
"""


def questions(per_note: int, which: str = "judged", only: list[str] | None = None):
    """(corpus name, raw text, [(question, gold answer)]) for every document of the chosen corpora."""
    documents = []
    for corpus in all_corpora(which):
        if only and corpus.name not in only:
            continue
        asked: dict[int, list] = {}
        for probe in corpus.probes:
            if probe.question:
                asked.setdefault(probe.memory, []).append((probe.question, probe.answer))
        for index in sorted(asked):
            documents.append((corpus.name, corpus.memories[index], asked[index][:per_note]))
    return documents


def prepare(out: Path, per_note: int, model: str, min_chars: int, scores: str | None, which: str = "judged",
            only: list[str] | None = None) -> int:
    from compression import SharedScores

    from memcli.providers.llama import LlamaOps, get_lm

    ops = LlamaOps(get_lm(model))
    lm = SharedScores(ops, scores) if scores else ops
    documents = questions(per_note, which, only)
    forms = {"raw": [], "compressed": []}
    raw_tokens = tokens = stored_compressed = 0
    for _, raw, _ in documents:
        result = compress(raw, model=model, lm=lm, min_chars=min_chars)  # mem add's ratio and timeout
        forms["raw"].append(raw)
        forms["compressed"].append(result.text if result.text is not None else raw)
        stored_compressed += result.text is not None
        raw_tokens += ops.count_tokens(raw)
        tokens += ops.count_tokens(forms["compressed"][-1])
    gold, lines = [], []
    for doc, (corpus, _, asked) in enumerate(documents, 1):
        for question, answer in asked:
            gold.append({"question": len(gold) + 1, "document": f"D{doc}", "corpus": corpus,
                         "text": question, "gold": answer})
            lines.append(f"Q{len(gold)} (D{doc}): {question}")
    out.mkdir(parents=True, exist_ok=True)
    for form, texts in forms.items():
        body = "".join(f"\n### D{i}\n\n{text.strip()}\n" for i, text in enumerate(texts, 1))
        packet = INSTRUCTIONS.format(documents=len(texts), questions=len(gold)) + body
        (out / f"{form}.md").write_text(packet + "\n## Questions\n\n" + "\n".join(lines) + "\n")
    (out / "gold.json").write_text(json.dumps(gold, indent=1, ensure_ascii=False))
    (out / "grading.md").write_text(GRADING.format(questions=len(gold)))
    order = ["raw", "compressed"]
    random.Random().shuffle(order)
    (out / "key.json").write_text(json.dumps({"A": order[0], "B": order[1]}))
    print(f"{len(documents)} documents ({stored_compressed} stored compressed, the others raw as mem add "
          f"would leave them), {len(gold)} questions; tokens raw {raw_tokens}, compressed {tokens} "
          f"({1 - tokens / raw_tokens:.1%} saved); packets in {out}")
    return 0


def score(grades: Path, out: Path) -> int:
    key = json.loads((out / "key.json").read_text())
    gold = {g["question"]: g for g in json.loads((out / "gold.json").read_text())}
    totals: dict[tuple[str, str], list[int]] = {}
    with grades.open() as handle:
        for row in csv.DictReader(handle):
            corpus = gold[int(row["question"])]["corpus"]
            for label in ("A", "B"):
                for group in (corpus, "all"):
                    totals.setdefault((key[label], group), []).append(int(row[label]))
    for group in sorted({g for _, g in totals}):
        figures = "  ".join(f"{form} {sum(v) / len(v):.1%} ({sum(v)}/{len(v)})"
                            for form in ("raw", "compressed") for v in [totals.get((form, group), [])] if v)
        print(f"{group:<16} {figures}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("prepare", "score"))
    parser.add_argument("grades", nargs="?", type=Path)
    parser.add_argument("--out", type=Path, default=Path("/tmp/reader"))
    parser.add_argument("--per-note", type=int, default=2)
    parser.add_argument("--model", default="smollm2-135m-instruct-q4_1")
    parser.add_argument("--min-chars", type=int, default=DEFAULT_MIN_CHARS, help="compress_min_chars (default: mem's)")
    parser.add_argument("--scores", help="reuse the surprisals bench/compression.py --scores kept in this file")
    parser.add_argument("--corpus", choices=("judged", "tuning"), default="judged",
                        help="the judged-only corpora (default), or the development ones (e.g. LoCoMo's turns)")
    parser.add_argument("--only", action="append", default=[], help="only this corpus (repeatable)")
    args = parser.parse_args()
    if args.action == "score":
        return score(args.grades, args.out)
    return prepare(args.out, args.per_note, args.model, args.min_chars, args.scores, args.corpus, args.only)


if __name__ == "__main__":
    sys.exit(main())
