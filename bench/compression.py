"""How much shorter memories get, and what a reader can still find in them, per corpus.

Corpora (bench/corpora.py): the LoCoMo summaries and evidence turns of conv-30 and conv-26, the developer
notes and the first round's held-out notes are development data; the fresh notes and chat turns are
judged only. Every figure is printed per corpus:
  saving -     mean token reduction (compression model's tokenizer)
  guard ok -   share of forms the guard accepts (memcli.compress.guard); for compress() the share
               stored compressed rather than raw
  spans -      share of the raw's protected spans still in the form
  answers -    share of questions whose gold answer's content words (lower-cased, stopwords and
               punctuation left out) all survive in the form of the memory that answers it
  facts -      the same for the facts listed with each developer note
  s/memory -   wall time per memory including the model load (median of --runs runs); cpu s is the
               CPU time of all threads per memory; "x surpr." is the wall time over the surprisal-only
               baseline's in the same run (both pay the same forward pass), steadier than seconds on
               a shared machine
The method is compared in the same run with two baselines: dropping English stopwords only, and
pruning by surprisal alone at the same ratio. The method never sees the questions or the facts.
A corpus with texts shorter than 400 characters (the turns) also gets compress()'s saving and answers
per length band, to choose the shortest text worth compressing (`compress_min_chars`).

    PYTHONPATH=. python bench/compression.py [--corpus all|tuning|judged|devcontent] [--only NAME] [--ratio 0.6]
        [--runs 3] [--show N] [--dump FILE]
"""


from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time

from corpora import STOPWORDS, all_corpora, content_words, words

from memcli.compress import guard
from memcli.compress.pipeline import compress
from memcli.compress.prune import prune, rank_by_surprisal, rank_stopwords
from memcli.compress.spans import find_spans
from memcli.providers.llama import LlamaOps
from memcli.providers.protocols import TokenScore


class TokenizerOnly:
    """The stopword baseline needs no forward pass: surprisal is never looked at."""

    def __init__(self, ops):
        self.name, self.count_tokens = ops.name, ops.count_tokens

    def surprisals(self, text, deadline):
        return [TokenScore(0, 0, 0.0)] * self.count_tokens(text)


class SharedScores:
    """The model with each text's surprisals kept: the second method to ask reuses the first's pass.
    With a file, the scores also outlive the run (they depend on the model and the text only), so a
    change to the ranking is measured again in seconds instead of a forward pass per memory."""

    def __init__(self, ops, path: str | None = None):
        self.ops, self.name, self.count_tokens, self.path = ops, ops.name, ops.count_tokens, path
        self.cache = {}
        if path and os.path.exists(path):
            with open(path) as stored:
                self.cache = {key: [TokenScore(*t) for t in scores]
                              for key, scores in json.load(stored).get(ops.name, {}).items()}

    def surprisals(self, text, deadline):
        key = hashlib.sha256(text.encode()).hexdigest()
        if key not in self.cache:
            self.cache[key] = self.ops.surprisals(text, deadline)
        return self.cache[key]

    def save(self) -> None:
        if self.path:
            with open(self.path, "w") as out:
                json.dump({self.name: {k: [[t.start, t.end, t.surprisal] for t in v] for k, v in self.cache.items()}},
                          out)


def run_method(memories, make_form, runs):
    """Forms, whether each was accepted, and the median over runs of (wall s, CPU s) per memory."""
    results, wall, cpu = None, [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        results = [make_form(m) for m in memories]
        wall.append((time.perf_counter() - started) / len(memories))
        cpu.append((time.process_time() - started_cpu) / len(memories))
    return results, (statistics.median(wall), statistics.median(cpu))


def kept_share(flags) -> str:
    return f"{sum(flags) / len(flags):.1%}" if flags else "-"


def figures(corpus, results, count_tokens) -> dict:
    reductions, spans_total, spans_kept = [], 0, 0
    for raw, (form, _) in zip(corpus.memories, results):
        reductions.append(1 - count_tokens(form) / count_tokens(raw))
        total = len({guard.normalise(span.text) for span in find_spans(raw)})
        spans_total += total
        spans_kept += total - len(guard.missing_spans(raw, form))
    kept = [words(form) for form, _ in results]
    probes = {kind: [content_words(p.answer) <= kept[p.memory] for p in corpus.probes if p.kind == kind]
              for kind in ("answer", "fact")}
    return {"saving": statistics.mean(reductions), "guard": sum(ok for _, ok in results) / len(results),
            "spans": spans_kept / max(1, spans_total), "answers": kept_share(probes["answer"]),
            "facts": kept_share(probes["fact"])}


BANDS = (0, 100, 200, 400)


def print_bands(corpus, results, count_tokens) -> None:
    """compress()'s saving and answers kept per band of raw length: the texts of each band alone."""
    bounds = list(zip(BANDS, BANDS[1:] + (None,)))
    cells = []
    for low, high in bounds:
        members = [i for i, m in enumerate(corpus.memories) if len(m) >= low and (high is None or len(m) < high)]
        if not members:
            continue
        saving = statistics.mean(1 - count_tokens(results[i][0]) / count_tokens(corpus.memories[i]) for i in members)
        kept = [content_words(p.answer) <= words(results[p.memory][0]) for p in corpus.probes if p.memory in members]
        label = f"{low}-{high - 1}" if high else f"{low}+"
        cells.append(f"{label} chars: {len(members)} texts, saving {saving:.1%}, answers {kept_share(kept)}")
    print("  compress() by length: " + "; ".join(cells))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct-q4_1")
    parser.add_argument("--corpus", choices=("all", "tuning", "judged", "devcontent"), default="all",
                        help="devcontent: developers' content by kind (bench/devcontent.py)")
    parser.add_argument("--misses", action="store_true", help="devcontent: print the answers lost on the tune part")
    parser.add_argument("--ratio", type=float, default=0.6)
    parser.add_argument("--only", action="append", default=[],
                        help="only the corpora whose name contains this (repeatable): 'conv-26', 'turns'")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--show", type=int, default=0, help="print the first N memories of each corpus and their forms")
    parser.add_argument("--dump", help="write every raw text and its forms to this JSON file")
    parser.add_argument("--share-scores", action="store_true",
                        help="on a loaded machine: the surprisal baseline reuses the forward pass of compress() "
                             "(half the model work; its seconds are then not measured)")
    parser.add_argument("--scores", metavar="FILE",
                        help="keep the surprisals in FILE and reuse them in later runs (implies --share-scores): "
                             "for iterating on the ranking; compress()'s seconds then leave out the forward pass")
    args = parser.parse_args()
    args.share_scores = args.share_scores or bool(args.scores)

    from memcli.providers.llama import get_lm, import_llama_cpp

    if args.corpus == "devcontent":
        import devcontent

        import_llama_cpp()
        ops = SharedScores(LlamaOps(get_lm(args.model)), args.scores)
        devcontent.run(ops, args.ratio, show_misses=args.misses)
        ops.save()
        return 0
    corpora = [c for c in all_corpora(args.corpus) if not args.only or any(o in c.name for o in args.only)]
    load_before = os.getloadavg()
    started = time.perf_counter()
    # Timed on its own (a `mem add` process pays it once), and imported as mem does: a bare `import
    # llama_cpp` first would leave OpenMP's threads spinning, which doubled the CPU seconds measured.
    import_llama_cpp()

    import_s = time.perf_counter() - started
    started = time.perf_counter()
    lm = get_lm(args.model)
    load_s = time.perf_counter() - started
    ops = LlamaOps(lm)
    started = time.perf_counter()
    compress(corpora[0].memories[0], ratio=args.ratio, lm=ops)
    first_s = time.perf_counter() - started
    count = ops.count_tokens
    stopword_model = TokenizerOnly(ops)

    def accepted(raw, form):
        return form, guard.check(raw, form, count) is None

    def via_compress(raw):
        result = compress(raw, ratio=args.ratio, lm=scorer, min_chars=0, timeout_s=600)
        return (result.text, True) if result.text is not None else (raw, False)

    scorer = SharedScores(ops, args.scores) if args.share_scores else ops
    methods = [
        ("stopwords only", lambda m: accepted(m, prune(m, stopword_model, ratio=0.0, rank=rank_stopwords(STOPWORDS)))),
        ("compress() stored", via_compress),
        ("surprisal only", lambda m: accepted(m, prune(m, scorer, ratio=args.ratio, rank=rank_by_surprisal))),
    ]
    print(f"model {ops.name}; ratio {args.ratio}; median of {args.runs} runs; load average (1/5/15 min) "
          f"before: {' '.join(f'{x:.2f}' for x in load_before)} on {os.cpu_count()} cores")
    dump = []
    for corpus in corpora:
        lengths = [len(m) for m in corpus.memories]
        kinds = {k: sum(p.kind == k for p in corpus.probes) for k in ("answer", "fact")}
        print(f"\n{corpus.name} ({'development' if corpus.tuned else 'judged only, not tuned on'}): "
              f"{len(corpus.memories)} memories, {min(lengths)}-{max(lengths)} chars, "
              f"{sum(count(m) for m in corpus.memories) / len(corpus.memories):.0f} tokens on average; "
              f"{kinds['answer']} answers, {kinds['fact']} facts")
        print(f"  {'method':<19} {'saving':>7} {'guard ok':>9} {'spans':>7} {'answers':>8} {'facts':>7} "
              f"{'s/memory':>9} {'cpu s':>6} {'x surpr.':>8}")
        runs = {label: run_method(corpus.memories, make, args.runs) for label, make in methods}
        reference = runs["surprisal only"][1][0]
        for label, (results, (wall, cpu)) in runs.items():
            f = figures(corpus, results, count)
            per_memory = wall + (0.0 if label == "stopwords only" else load_s / len(corpus.memories))
            ratio = "-" if args.share_scores else f"{wall / reference:.2f}"
            seconds = f"{per_memory:9.3f} {cpu:6.3f} {ratio:>8}"
            if args.share_scores and label == "surprisal only":
                seconds = f"{'-':>9} {'-':>6} {'-':>8}"
            print(f"  {label:<19} {f['saving']:7.1%} {f['guard']:9.1%} {f['spans']:7.1%} {f['answers']:>8} "
                  f"{f['facts']:>7} {seconds}")
        if args.share_scores:
            scorer.save()
        if min(lengths) < BANDS[-1]:
            print_bands(corpus, runs["compress() stored"][0], count)
        for i, raw in enumerate(corpus.memories):
            forms = {label: runs[label][0][i][0] for label in runs}
            dump.append({"corpus": corpus.name, "raw": raw, **forms})
            if i < args.show:
                print("\nRAW:", raw, *(f"\n{label.upper()}: {form}" for label, form in forms.items()))
    print(f"\ncold start of one `mem add`: import llama_cpp {import_s:.2f}s + model load {load_s:.2f}s + first "
          f"memory {first_s:.2f}s = {import_s + load_s + first_s:.2f}s")
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if args.dump:
        with open(args.dump, "w") as out:
            json.dump(dump, out, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
