"""Concept words against the words notes use ("rate limiting" against "blocks after 30 requests per
second"): each means measured on the same stores, in this process, with the real default models.

    .venv/bin/python bench/concepts.py

Means (each swapped into mem's hybrid search in this process; everything else is mem's own):
- embedding alone: what mem does; MiniLM's meaning side is all that bridges the words.
- store words: the rarest words of the query's three nearest memories by cosine (held by at most a
  twentieth of the store, five at most), added to both sides as the table's words are below
  (pseudo-relevance feedback from the store's own vocabulary).
- table, words: TABLE's words for the concepts a query of at most three words names, added to BM25
  weighed WEIGHT against the query's own and to each memory's coverage for ranking (the cut-off still
  reads the query's own words).
- table: the same, and the words appended to the text embedded for the query.

Corpora: the five notes of issue 54 and the README tour's two (their concept queries and nonsense),
bench/data/keyword_notes.json (tune and held-out split), bench/data/concept_notes.json
(held-out: written before the table, by the same session; see bench/RESULTS.md) and
../shared/bench/devcontent (questions whose number divides by three are "check", as
bench/retrieval.py splits them), to see what the added words cost long questions. Printed per corpus and
split: R@10 over the questions that have an answer and the share of the others that return nothing.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from retrieval import DEVCONTENT, KEYWORD_NOTES, devcontent_questions  # noqa: E402
from spread import build  # noqa: E402

CONCEPT_NOTES = ROOT / "bench" / "data" / "concept_notes.json"
FIVE = {"scraper": "Amazon blocks our scraper's IP addresses after about 30 requests per second, so the crawler "
                   "waits and retries with a residential proxy.",
        "infra": "We moved the billing service from Heroku to Fly.io in March.",
        "tools": "I prefer uv for Python dependency management and ruff for linting.",
        "staging": "The staging Postgres listens on port 5433, not the default 5432.",
        "ci": "CI caches the built wheels between runs, keyed on the lock file's hash."}
K = 10
MEANS = ("embedding alone", "store words", "table, words", "table")
# concept words (all in the query) → words a note may say instead (FTS5's Porter stemmer applies)
TABLE: dict[tuple[str, ...], tuple[str, ...]] = {
    ("rate", "limiting"): ("throttle", "throttled", "throttling", "429", "quota", "backoff"),
    ("rate", "limit"): ("throttle", "throttled", "throttling", "429", "quota", "backoff"),
    ("throttling",): ("rate", "limit", "limiting", "429", "quota", "backoff"),
    ("flaky",): ("intermittent", "intermittently", "sometimes", "randomly", "nondeterministic"),
    ("intermittent",): ("flaky", "sometimes", "randomly", "occasionally"),
    ("regression",): ("broke", "broken", "breaks", "upgrade", "regressed"),
    ("slow",): ("latency", "slowness", "minutes", "faster", "speed"),
    ("build",): ("compile", "compilation", "docker", "image"),
    ("memory", "leak"): ("leaks", "oom", "heap", "grows", "growing"),
    ("out", "memory"): ("oom", "heap", "memoryerror"),
    ("race", "condition"): ("concurrent", "concurrently", "simultaneously", "lock", "atomic"),
    ("deadlock",): ("deadlocks", "locks", "lock", "waiting"),
    ("idempotency",): ("idempotent", "duplicate", "twice", "dedupe"),
    ("idempotent",): ("idempotency", "duplicate", "twice", "dedupe"),
    ("timeout",): ("timeouts", "timed", "hangs", "deadline"),
    ("secrets",): ("keys", "tokens", "passwords", "credentials", "vault"),
    ("monitoring",): ("alert", "alerts", "dashboard", "metrics", "observability"),
    ("technical", "debt"): ("rewrite", "refactor", "legacy", "cleanup"),
    ("refactoring",): ("rewrite", "refactor", "cleanup", "restructure"),
    ("backward", "compatibility"): ("compatible", "deprecated", "legacy", "older"),
    ("stale", "cache"): ("invalidate", "invalidation", "ttl", "cached", "outdated"),
    ("caching",): ("cache", "cached", "ttl", "memoize"),
    ("rollout",): ("canary", "percent", "gradually", "staged"),
    ("canary",): ("rollout", "percent", "gradually", "staged"),
    ("feature", "flags"): ("toggle", "toggles", "flag"),
    ("dependency",): ("version", "pin", "pinned", "lock", "requirements", "package"),
    ("n", "1"): ("query", "queries", "eager", "loading"),
    ("performance",): ("slow", "latency", "faster", "speed"),
    ("graceful", "degradation"): ("fallback", "outage", "unavailable", "down"),
    ("ci",): ("pipeline", "workflow", "actions", "runner"),
    ("code", "quality"): ("lint", "linting", "review", "checks"),
    ("authentication",): ("login", "token", "session", "password", "oauth"),
    ("logging",): ("logs", "log", "stderr", "trace"),
}
WEIGHT = 0.5  # of an added word against a query word, in BM25 and in a memory's coverage for ranking
MOST_WORDS = 3  # a longer query is a question carrying its own context (table words cost devcontent one)


def table_words(query: str) -> list[str]:
    from memcli.index.lexical import words

    terms = words(query)
    if len(terms) > MOST_WORDS:
        return []
    found: list[str] = []
    for concept, said in TABLE.items():
        if set(terms).issuperset(concept):
            found += [w for w in said if w not in terms and w not in found]
    return found


def store_words(mem, query: str) -> list[str]:
    """The rarest words of the query's three nearest memories (see the module docstring)."""
    from memcli.core import reading
    from memcli.index import lexical

    lexicon = mem.catalog.lexicon
    most = max(1, lexicon.memories() // 20)
    own = set(lexical.words(query))
    words = {w for hit in reading.search(mem, query, k=3, mode="vector", min_score=0)
             for w in lexical.words(hit.memory.raw) if w not in own and not w.isdigit()}
    rare = sorted((n, w) for w in words if 0 < (n := lexicon.frequency(w)) <= most)
    return [w for _, w in rare[:5]]


def search_with(mem, query: str, extra: list[str], embedded: bool) -> list:
    """mem's hybrid search with `extra` words added to the word side (and to the embedded text)."""
    from memcli.core import reading
    from memcli.index import lexical
    from memcli.index import search as hybrid

    if not extra:
        return reading.search(mem, query, k=K)
    ranking, weighed, embedder = hybrid.word_ranking, hybrid.weighed, mem.embedder()
    embed = embedder.query

    def word_ranking(catalog, text, limit, filters):
        summed = dict(ranking(catalog, text, limit, filters))
        for label, score in lexical.bm25(catalog, extra, limit, filters):
            summed[label] = summed.get(label, 0.0) + WEIGHT * score
        return sorted(summed.items(), key=lambda item: (-item[1], -item[0]))[:limit]

    def with_extra(words, cover):
        terms = lexical.words(query)
        n = mem.catalog.lexicon.memories()
        held = dict(cover)
        whole = sum(_idf(mem, t, n) for t in terms) or 1.0
        for term in extra:
            for label, _ in mem.catalog.lexicon.scores(term, hybrid.Filters()):
                held[label] = min(1.0, held.get(label, 0.0) + WEIGHT * _idf(mem, term, n) / whole)
        return weighed(words, held)

    hybrid.word_ranking, hybrid.weighed = word_ranking, with_extra
    if embedded:
        embedder.query = lambda text: embed(f"{text} {' '.join(extra)}")
    try:
        return reading.search(mem, query, k=K)
    finally:
        hybrid.word_ranking, hybrid.weighed = ranking, weighed
        if embedded:
            del embedder.query


def _idf(mem, term: str, n: int) -> float:
    from memcli.index.lexical import idf

    return idf(max(1, mem.catalog.lexicon.frequency(term)), n)


def corpora() -> dict[str, tuple[list, list]]:
    """name → (items (key, text, None), questions (text, relevant keys, split))."""
    found = {}
    data = json.loads(KEYWORD_NOTES.read_text())
    found["notes"] = ([(n["id"], n["text"], None) for n in data["notes"]],
                      [(q["q"], set(q["relevant"]), q["split"]) for q in data["queries"]])
    data = json.loads(CONCEPT_NOTES.read_text())
    found["concepts"] = ([(n["id"], n["text"], None) for n in data["notes"]],
                         [(q["q"], set(q["relevant"]), "held-out") for q in data["queries"]])
    found["issue54"] = ([(tag, text, None) for tag, text in FIVE.items()],
                         [("rate limiting", {"scraper"}, "five"), ("slow build", {"ci"}, "five"),
                          ("database port", {"staging"}, "five"), ("hosting", {"infra"}, "five"),
                          ("zebra quantum banana", set(), "five"), ("sourdough starter", set(), "five"),
                          ("kubernetes autoscaling", set(), "five")])
    found["tour"] = ([("scraper", "Amazon blocks IPs after about 30 requests per second", None),
                             ("build", "Move the billing cron to Fly.io machines", None)],
                            [("rate limiting", {"scraper"}, "tour")])
    if DEVCONTENT is not None:
        items, asked = devcontent_questions()
        found["devcontent"] = ([(i["id"], i["raw"], None) for i in items], asked)
    return found


def run(mem, keys: dict[int, str], asked: list, means: str) -> dict[str, list[float]]:
    """split → [sum of R@10, answerable, silent, unanswerable]."""
    by_id = {mem.catalog.db.execute("SELECT id FROM memories WHERE label = ?", (label,)).fetchone()[0]: key
             for label, key in keys.items()}
    figures: dict[str, list[float]] = {}
    for query, relevant, split in asked:
        extra = ([] if means == "embedding alone" else store_words(mem, query) if means == "store words"
                 else table_words(query))
        hits = search_with(mem, query, extra, embedded=means in ("store words", "table"))
        found = [by_id[hit.memory.id] for hit in hits]
        for key in (split, "all"):
            cell = figures.setdefault(key, [0.0, 0, 0, 0])
            if relevant:
                cell[0] += len(relevant & set(found)) / len(relevant)
                cell[1] += 1
            else:
                cell[2] += not found
                cell[3] += 1
    return figures


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="mem-bench-concepts-"))
    print(f"{'corpus':<11} {'means':<16} {'split':<9} {'answerable':>10} {'R@10':>6} {'unanswerable':>12} {'silent':>7}")
    try:
        for name, (items, asked) in corpora().items():
            mem, keys = build(work / name, items, name)
            for means in MEANS:
                for split, (r10, n, silent, u) in run(mem, keys, asked, means).items():
                    print(f"{name:<11} {means:<16} {split:<9} {n:>10} {r10 / max(1, n):6.3f} {u:>12}"
                          f" {silent / max(1, u):7.1%}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
