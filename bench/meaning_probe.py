"""Whether compression keeps the words a sentence's meaning hangs on (bench/data/meaning_probe*.json).

Each probe sentence names what its meaning hangs on: `keep`, the words, spans and labels a form must
still hold ("over", "until", "went back", "0.27-0.30", "Not done:", "(failed)"), and `never`, phrases a
form must not make (two sentences or clauses joined into a new claim; case-sensitive, so a capital that
shows where a sentence starts is a boundary). Classes: relation words, verbs that carry the fact,
distinguishing words, verbs of request, prepositions of direction and replacement, joins, values
(ranges, versions, paths, flags) and labels (mem's own observation headers, "Not done:").

Printed per part, each apart: `tuned` (meaning_probe.json without `held`), `held` (the ones marked
`held` there, from issue 37, and meaning_probe_heldout.json, issue 52's third, written before the
method changed and never looked at while tuning): the share of sentences that keep every such word
and make no `never` phrase, the share of words kept, the token saving (prune on the default model,
every sentence compressed whatever its length), and per class. The sentences that failed are printed
for the tuned part only (and for every part with --show).

    PYTHONPATH=. nice python bench/meaning_probe.py [--part tuned|held|all] [--ratio 0.6] [--show]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PROBE = DATA / "meaning_probe.json"
HELD_OUT = DATA / "meaning_probe_heldout.json"


def kept(word: str, form: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", form, re.I) is not None


def made(phrase: str, form: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", form) is not None


def parts(which: str) -> list[tuple[str, list[dict]]]:
    main = json.loads(PROBE.read_text())["sentences"]
    held = [s for s in main if s.get("held")] + json.loads(HELD_OUT.read_text())["sentences"]
    chosen = [("tuned", [s for s in main if not s.get("held")]), ("held out", held)]
    return [p for p in chosen if which == "all" or p[0].startswith(which)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct-q4_1")
    parser.add_argument("--ratio", type=float, default=0.6)
    parser.add_argument("--part", choices=("tuned", "held", "all"), default="all")
    parser.add_argument("--show", action="store_true", help="print every sentence and its form, held out too")
    args = parser.parse_args()

    from memcli.compress.prune import prune
    from memcli.providers.llama import LlamaOps, get_lm

    ops = LlamaOps(get_lm(args.model))
    for label, part in parts(args.part):
        whole = words = words_kept = raw_tokens = tokens = 0
        by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for sentence in part:
            form = prune(sentence["text"], ops, ratio=args.ratio)
            lost = [w for w in sentence["keep"] if not kept(w, form)]
            joined = [p for p in sentence.get("never", []) if made(p, form)]
            good = not lost and not joined
            whole += good
            by_class[sentence.get("class", "relation")][0] += good
            by_class[sentence.get("class", "relation")][1] += 1
            words += len(sentence["keep"])
            words_kept += len(sentence["keep"]) - len(lost)
            raw_tokens += ops.count_tokens(sentence["text"])
            tokens += ops.count_tokens(form)
            if args.show or (not good and label == "tuned"):
                said = ("LOST " + ",".join(lost) if lost else "") + (" MADE " + "|".join(joined) if joined else "")
                print(f"  {said.strip() or 'kept'}: {sentence['text']}\n      -> {form}")
        classes = ", ".join(f"{name} {good}/{n}" for name, (good, n) in sorted(by_class.items()))
        print(f"{label}: {len(part)} sentences, {whole / len(part):.1%} keep every word and join nothing; words kept "
              f"{words_kept}/{words} ({words_kept / words:.1%}); saving {1 - tokens / raw_tokens:.1%} "
              f"({raw_tokens} -> {tokens} tokens)\n  by class: {classes}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
