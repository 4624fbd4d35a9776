"""Speed of the on-device models: load time, embedding throughput, compression-model forward pass.

    MEM_MODELS_DIR=/tmp/mem-models python bench/models.py [--runs 5]

Load times are medians over fresh processes (cold Python, warm page cache), split into
`import llama_cpp` and the model load itself. Embedding throughput is measured for 1, 32 and 256
short texts, against llama-cpp-python's own `Llama.embed` on the same model as the baseline; and for
the memories of bench/search_latency.py (two LoCoMo turns each), what a memory's vector costs
(memcli/index/sentence_vectors: its sentences embedded apart) against embedding each text whole.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

EMBED = "all-minilm-l6-v2"
COMPRESS = "smollm2-135m-instruct-q4_1"

LOAD_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
import llama_cpp
t1 = time.perf_counter()
from memcli.providers import llama as llm
model = llm.get_embedder(sys.argv[1]) if sys.argv[2] == "embed" else llm.get_lm(sys.argv[1])
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1}))
"""

POLICY_SCRIPT = """
import statistics, sys, time
from memcli.providers import llama as llm
embedder = llm.get_embedder(sys.argv[1])
texts = [f"note {i}: the scraper hit the rate limit of site {i % 7} again" for i in range(32)]
embedder.embed(texts)
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    embedder.embed(texts)
    times.append(time.perf_counter() - start)
print(32 / statistics.median(times))
"""

TEXT = (
    "I have been working on a Rust web scraper for the past three weeks. It captures pricing data from "
    "Amazon and eBay, and the hardest part so far has been rate limiting: Amazon starts blocking IPs at "
    "about 30 requests per second, so we added a token bucket per domain and rotate between four proxies. "
    "The scraper stores results in Postgres 16 and we deploy it on Fly.io in the Frankfurt region. Next "
    "week I want to add retries with exponential backoff, never more than five attempts, and a dashboard "
    "that shows the error rate per domain. Maria asked whether we could also cover Zalando by March 15; "
    "I said not before the proxy budget is approved, which is $400 a month. The code lives in "
    "github.com/acme/pricewatch and the config in ~/pricewatch/config.toml. Decisions so far: Rust over "
    "Python for memory use, reqwest with rustls, and no headless browser unless a site requires it."
)


def median_time(func, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_times(ref: str, role: str, runs: int) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    samples = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, ref, role], capture_output=True, text=True,
                             env=env, check=True)
        samples.append(json.loads(out.stdout))
    return statistics.median(s["import"] for s in samples), statistics.median(s["load"] for s in samples)


def policy_rate(policy: str, runs: int) -> float:
    """Texts/s for 32 short texts in a fresh process whose OpenMP threads spin or sleep."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), "OMP_WAIT_POLICY": policy}
    out = subprocess.run([sys.executable, "-c", POLICY_SCRIPT, EMBED, str(runs)], capture_output=True, text=True,
                         env=env, check=True)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from memcli.providers import llama as llm

    print(f"models dir: {os.environ.get('MEM_MODELS_DIR', '(user cache)')}; {os.cpu_count()} cpus, "
          f"{llm.THREADS} threads, load average {os.getloadavg()[0]:.1f}; median of {args.runs} runs")
    for ref, role in ((EMBED, "embed"), (COMPRESS, "compress")):
        imported, loaded = load_times(ref, role, args.runs)
        print(f"load {ref:<28} import llama_cpp {imported * 1000:6.0f} ms   model load {loaded * 1000:6.0f} ms")

    embedder = llm.get_embedder(EMBED)
    import llama_cpp

    baseline = llama_cpp.Llama(str(llm.resolve(EMBED, "embed")), embedding=True, n_ctx=0, n_batch=512,
                               n_ubatch=512, n_threads=llm.THREADS, n_threads_batch=llm.THREADS, verbose=False)
    texts = [f"note {i}: {sentence}" for i, sentence in enumerate(TEXT.split(". ") * 40)][:256]
    per_text = sum(len(embedder.tokens(t)) for t in texts) / len(texts)
    print(f"embedding inputs: sentences of the sample memory, {per_text:.0f} tokens each on average")
    for n in (1, 32, 256):
        batch = texts[:n]
        embedder.embed(batch)
        ours = median_time(lambda batch=batch: embedder.embed(batch), args.runs)
        theirs = median_time(lambda batch=batch: baseline.embed(batch, normalize=True), args.runs)
        print(f"embed {n:>3} short texts   {n / ours:8.1f} texts/s   ({ours * 1000:7.1f} ms; "
              f"llama-cpp-python Llama.embed {n / theirs:7.1f} texts/s, ratio {theirs / ours:4.2f}x)")

    from search_latency import corpus
    from search_latency import texts as memory_texts

    from memcli.index.sentence_vectors import MemoryEmbedder, units

    memories = memory_texts(512, corpus("locomo")[0])
    sentences = sum(len(units(text)) for text in memories) / len(memories)
    whole = median_time(lambda: embedder.embed(memories), args.runs)
    split = median_time(lambda: MemoryEmbedder(embedder).embed(memories), args.runs)
    print(f"memory vectors of 512 LoCoMo memories ({sentences:.1f} sentences each): {len(memories) / split:7.1f}"
          f" memories/s, whole texts {len(memories) / whole:7.1f}/s (ratio {whole / split:4.2f}x)")

    active, passive = policy_rate("ACTIVE", args.runs), policy_rate("PASSIVE", args.runs)
    print(f"embed  32 texts, OpenMP threads spinning {active:7.1f} texts/s, sleeping {passive:7.1f} texts/s "
          f"(mem's default: sleeping; ratio {passive / active:4.2f}x)")

    lm = llm.get_lm(COMPRESS)
    tokens = [lm.llama.token_bos()] + lm.tokenize(TEXT)
    lm.logits(tokens)
    forward = median_time(lambda: lm.logits(tokens), args.runs)
    print(f"compress forward pass      {len(tokens) / forward:8.1f} tokens/s ({len(tokens)} tokens, "
          f"{len(TEXT)} chars, {forward * 1000:.0f} ms, logits of every token)")


if __name__ == "__main__":
    main()
