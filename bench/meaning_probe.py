"""Whether compression keeps the words a sentence's meaning hangs on (bench/data/meaning_probe.json).

Each probe sentence names the words whose loss would reverse or blur it ("over", "unless", "until",
"off", "I", ...). Printed for the tuned part and the held-out part apart: the share of sentences that
keep every such word, the share of those words kept, and the token saving of the prose method (prune
on the default model, every sentence compressed whatever its length), and the sentences that lost one.

    PYTHONPATH=. nice python bench/meaning_probe.py [--ratio 0.6] [--show]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

PROBE = Path(__file__).resolve().parent / "data" / "meaning_probe.json"


def kept(word: str, form: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", form, re.I) is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct-q4_1")
    parser.add_argument("--ratio", type=float, default=0.6)
    parser.add_argument("--show", action="store_true", help="print every sentence and its form")
    args = parser.parse_args()

    from memcli.compress.prune import prune
    from memcli.providers.llama import LlamaOps, get_lm

    ops = LlamaOps(get_lm(args.model))
    sentences = json.loads(PROBE.read_text())["sentences"]
    for label, part in (("tuned", [s for s in sentences if not s.get("held")]),
                        ("held out", [s for s in sentences if s.get("held")])):
        whole = words = words_kept = raw_tokens = tokens = 0
        for sentence in part:
            form = prune(sentence["text"], ops, ratio=args.ratio)
            lost = [w for w in sentence["keep"] if not kept(w, form)]
            whole += not lost
            words += len(sentence["keep"])
            words_kept += len(sentence["keep"]) - len(lost)
            raw_tokens += ops.count_tokens(sentence["text"])
            tokens += ops.count_tokens(form)
            if lost or args.show:
                print(f"  {'LOST ' + ','.join(lost) if lost else 'kept'}: {sentence['text']}\n      -> {form}")
        print(f"{label}: {len(part)} sentences, {whole / len(part):.1%} keep every word; words kept "
              f"{words_kept}/{words} ({words_kept / words:.1%}); saving {1 - tokens / raw_tokens:.1%} "
              f"({raw_tokens} -> {tokens} tokens)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
