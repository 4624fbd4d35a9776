"""How much shorter memories get, and what a reader can still find in them.

Corpus: the ~650-character session summaries of ../shared/bench/locomo-dev (LoCoMo, CC BY-NC 4.0,
read-only, never shipped) plus the developer notes of bench/data/dev_notes.json. For each method:
  tokens -     mean token reduction of the compressed candidates (compression model's tokenizer), over
               all memories, then over the LoCoMo summaries and the developer notes apart
  guard ok -   share of candidates the guard accepts (memcli.compress.guard)
  spans -      share of the raw's protected spans still in the candidate
  answers -    LoCoMo QA of categories 1-4 whose answer appears in the summary of one of its evidence
               sessions (evidence ids D<session>:<turn>, all of them taken even from malformed
               strings): share whose answer content words (lower-cased, stopwords and punctuation left
               out) all survive in that summary's candidate. An answer that appears only inside
               another word ("2" in "2023") is left out.
  facts -      the same for the facts listed with each developer note
  s/memory -   wall time per memory including the model load (median of --runs runs); cpu s is the
               CPU time of all threads per memory, which other processes on the machine disturb less
The method is compared in the same run with two baselines: dropping English stopwords only, and
pruning by surprisal alone at the same ratio. The method never sees the questions or the facts.

    PYTHONPATH=. python bench/compression.py [--model NAME_OR_GGUF] [--ratio 0.6] [--runs 3] [--show N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

from memcli.compress import guard
from memcli.compress.pipeline import compress
from memcli.compress.prune import (
    prune,
    rank_by_surprisal,
    rank_combined,
    rank_stopwords,
)
from memcli.compress.spans import find_spans
from memcli.providers.llama import LlamaOps
from memcli.providers.protocols import TokenScore

HERE = Path(__file__).resolve().parent
LOCOMO = HERE.parent.parent / "shared" / "bench" / "locomo-dev" / "locomo-dev.json"
DEV_NOTES = HERE / "data" / "dev_notes.json"

# A common English stopword list (the NLTK list's words), used by the stopword baseline and to pick
# the content words of an answer. It is independent of the method's own word classes.
STOPWORDS = frozenset(
    """
    i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
    he him his himself she she's her hers herself it it's its itself they them their theirs themselves
    what which who whom this that that'll these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on off over
    under again further then once here there when where why how all any both each few more most other
    some such no nor not only own same so than too very s t can will just don don't should should've
    now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
    hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
    shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
    """.split()
)

_WORDS = re.compile(r"[^\W_]+")
_EVIDENCE = re.compile(r"D(\d+):(\d+)")


def content_words(text: str) -> set[str]:
    return {w for w in _WORDS.findall(text.lower()) if w not in STOPWORDS}


def load_corpus() -> tuple[list[str], list[tuple[int, set[str]]], int]:
    """Memories, (memory index, content words that must survive) for every usable QA or fact, and how
    many of the memories (the first ones) are LoCoMo summaries."""
    memories: list[str] = []
    probes: list[tuple[int, set[str]]] = []
    for conversation in json.loads(LOCOMO.read_text()):
        index_of = {}
        for key, summary in conversation["session_summary"].items():
            index_of[int(re.search(r"\d+", key).group())] = len(memories)
            memories.append(summary)
        for qa in conversation["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            answer = str(qa.get("answer", "")).strip()
            sessions = {int(m.group(1)) for e in qa.get("evidence", []) for m in _EVIDENCE.finditer(e)}
            for session in sorted(sessions):
                index = index_of.get(session)
                if index is not None and answer and answer.lower() in memories[index].lower():
                    words = content_words(answer)
                    # "2" is in "2023": count only answers whose words the summary really holds.
                    if words and words <= content_words(memories[index]):
                        probes.append((index, words))
                    break
    locomo_count = len(memories)
    for note in json.loads(DEV_NOTES.read_text())["notes"]:
        for fact in note["facts"]:
            probes.append((len(memories), content_words(fact)))
        memories.append(note["text"])
    return memories, probes, locomo_count


class TokenizerOnly:
    """The stopword baseline needs no forward pass: surprisal is never looked at."""

    def __init__(self, ops):
        self.name, self.count_tokens = ops.name, ops.count_tokens

    def surprisals(self, text, deadline):
        return [TokenScore(0, 0, 0.0)] * self.count_tokens(text)


def run_method(label, memories, make_candidate, runs):
    """Candidates and the median over runs of (wall seconds, CPU seconds of all threads) per memory."""
    candidates, wall, cpu = None, [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        candidates = [make_candidate(m) for m in memories]
        wall.append((time.perf_counter() - started) / len(memories))
        cpu.append((time.process_time() - started_cpu) / len(memories))
    return label, candidates, (statistics.median(wall), statistics.median(cpu))


def report(label, memories, candidates, probes, locomo_count, count_tokens, seconds, load_s):
    reductions, accepted, spans_total, spans_kept = [], 0, 0, 0
    for raw, text in zip(memories, candidates):
        reductions.append(1 - count_tokens(text) / count_tokens(raw))
        accepted += guard.check(raw, text, count_tokens) is None
        total = len({guard.normalise(span.text) for span in find_spans(raw)})
        spans_total += total
        spans_kept += total - len(guard.missing_spans(raw, text))
    kept_words = [set(_WORDS.findall(text.lower())) for text in candidates]
    answers = [words <= kept_words[i] for i, words in probes if i < locomo_count]
    facts = [words <= kept_words[i] for i, words in probes if i >= locomo_count]
    per_memory = seconds[0] + load_s / len(memories)
    print(f"{label:<22} {statistics.mean(reductions):7.1%} {statistics.mean(reductions[:locomo_count]):7.1%} "
          f"{statistics.mean(reductions[locomo_count:]):7.1%} {accepted / len(memories):9.1%} "
          f"{spans_kept / max(1, spans_total):8.1%} {sum(answers) / len(answers):8.1%} "
          f"{sum(facts) / len(facts):7.1%} {per_memory:9.3f} {seconds[1]:7.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct-q4_1")
    parser.add_argument("--ratio", type=float, default=0.6)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--show", type=int, default=0, help="print the first N memories and their forms")
    args = parser.parse_args()

    from memcli.providers.llama import get_lm

    memories, probes, locomo_count = load_corpus()
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    import llama_cpp  # noqa: F401 - timed on its own: a `mem add` process pays it once

    import_s = time.perf_counter() - started
    started = time.perf_counter()
    lm = get_lm(args.model)
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    ops = LlamaOps(lm)
    compress(memories[0], ratio=args.ratio, lm=ops)
    first_s = time.perf_counter() - started
    count = ops.count_tokens
    lengths = [len(m) for m in memories]
    print(f"{len(memories)} memories ({locomo_count} LoCoMo summaries, {len(memories) - locomo_count} developer "
          f"notes), {min(lengths)}-{max(lengths)} chars, {sum(count(m) for m in memories) / len(memories):.0f} "
          f"tokens on average; {sum(i < locomo_count for i, _ in probes)} answers, "
          f"{sum(i >= locomo_count for i, _ in probes)} facts; model {ops.name}; "
          f"ratio {args.ratio}")

    def via_compress(raw):
        result = compress(raw, ratio=args.ratio, lm=ops, min_chars=0, timeout_s=120)
        return result.text if result.text is not None else raw

    stopword_model = TokenizerOnly(ops)
    rows = [
        run_method("stopwords only", memories,
                   lambda m: prune(m, stopword_model, ratio=0.0, rank=rank_stopwords(STOPWORDS)), args.runs),
        run_method("surprisal only", memories, lambda m: prune(m, ops, ratio=args.ratio, rank=rank_by_surprisal),
                   args.runs),
        run_method("combined (candidate)", memories, lambda m: prune(m, ops, ratio=args.ratio, rank=rank_combined),
                   1),
        run_method("compress() stored", memories, via_compress, args.runs),
    ]
    print(f"{'method':<22} {'tokens':>7} {'locomo':>7} {'notes':>7} {'guard ok':>9} {'spans':>8} {'answers':>8} "
          f"{'facts':>7} {'s/memory':>9} {'cpu s':>7}")
    for label, candidates, seconds in rows:
        report(label, memories, candidates, probes, locomo_count, count, seconds,
               0.0 if label == "stopwords only" else load_s)
    print(f"cold start of one `mem add`: import llama_cpp {import_s:.2f}s + model load {load_s:.2f}s + first "
          f"memory {first_s:.2f}s = {import_s + load_s + first_s:.2f}s")
    print(f"load average (1 min) before/after: {load_before:.2f}/{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for raw, *forms in list(zip(memories, *(candidates for _, candidates, _ in rows)))[: args.show]:
        print("\nRAW:", raw)
        for (label, _, _), form in zip(rows, forms):
            print(f"{label.upper()}: {form}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
