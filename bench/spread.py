"""What each query's scores look like across the whole store, per corpus and split: the data the hybrid
cut-off (memcli/index/search.py) is tuned on and judged with.

    .venv/bin/python bench/spread.py collect OUT.pkl     # builds the stores (real default models)
    .venv/bin/python bench/spread.py judge OUT.pkl       # the cut-off of this checkout, per corpus and split
    .venv/bin/python bench/spread.py judge --tune OUT.pkl  # the tune parts only, while tuning
    .venv/bin/python bench/spread.py bound OUT.pkl       # the best any one measure's level could do

`collect` builds one store per corpus with the real default models, in this process: the keyword notes
(bench/data/keyword_notes.json, its own tune and held-out split), developers' content
(../shared/bench/devcontent, questions whose number divides by three are "check", as bench/retrieval.py
splits them), both also asked bench/data/nearmiss_questions.json (written blind after the cut-off was set,
its parts "fresh-tune" and "fresh-check"), and each LoCoMo dev conversation (conv-26 is the tune part, conv-30 the check part; the
unanswerable queries there are bench/min_score.py's nonsense queries and the other conversation's
questions). For every query it keeps the cosine against every memory of the store, both rankings as
search.ranked receives them, the coverage of each memory, and for each of the query's words how many
memories hold it, its own cosine against every memory and the query's without it, so a cut-off can be tried offline in
milliseconds. `judge` replays memcli.index.search.ranked's decision and ranking on them and prints
R@10 of the answerable queries and the share of the unanswerable ones that return nothing.

`bound` asks how far a cut-off made of these measures of a query's scores could go at all (the best
cosine, how far it stands above the rest, the same without the commonest word or without any one word,
the best coverage): per part, the most unanswerable queries that one measure's level, or two measures'
levels joined by "or" or "and", silence while keeping R@10 at 0.95 (or at what the ranking gives, when
less), the levels chosen on that part itself. An upper bound, not a rule: levels fit on the very queries
they are judged on.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from min_score import nonsense, vocabulary  # noqa: E402
from retrieval import DEFAULT_DATA, KEYWORD_NOTES, devcontent_questions, questions, turns  # noqa: E402

K = 10
NEARMISS = ROOT / "bench" / "data" / "nearmiss_questions.json"


def build(folder: Path, items: list[tuple[str, str, str | None]], tag: str):
    """A store of (key, text, created_at) items, embedded by the real default model; and label → key."""
    from memcli.core import engines
    from memcli.core.compressing import CompressOptions
    from memcli.core.mem import Mem
    from memcli.features.transfer import import_lines
    from memcli.index.filters import Filters
    from memcli.store.folder import Store

    mem = Mem(Store(folder), engines.local())
    mem.ensure_store()
    records = [json.dumps({"raw": text, "tags": [tag], "source": f"{tag}#{key}",
                           **({"created_at": stamp} if stamp else {})}) for key, text, stamp in items]
    import_lines(mem, records, CompressOptions(enabled=False))
    mem.index_vectors()
    keys = {}
    for memory in mem.catalog.list(Filters()):
        label = mem.catalog.db.execute("SELECT label FROM memories WHERE id = ?", (memory.id,)).fetchone()[0]
        keys[label] = memory.source.split("#", 1)[1]
    return mem, keys


def features(mem, keys: dict[int, str], asked: list[tuple[str, set[str], str]], corpus: str) -> list[dict]:
    """Per query: its words, the cosine against every memory, both rankings and the coverage."""
    import numpy as np

    from memcli.index import lexical
    from memcli.index import search as hybrid
    from memcli.index.filters import Filters
    from memcli.index.graph_file import matrix

    dim = int(mem.catalog.db.execute("SELECT value FROM meta WHERE key = 'embed_dim'").fetchone()[0])
    labels, vectors = matrix(mem.catalog.db.execute("SELECT label, vec FROM vectors").fetchall(), dim)
    embedder = mem.embedder()
    rows = []
    for query, relevant, split in asked:
        q = np.asarray(embedder.query(query), dtype=np.float32)
        cos = vectors @ q
        words = hybrid.word_ranking(mem.catalog, query, hybrid.CANDIDATES, Filters())
        terms = lexical.words(query)
        without = np.asarray(embedder.model.embed([re.sub(rf"\b{re.escape(term)}\b", " ", query, flags=re.I)
                                                   for term in terms]), dtype=np.float32) if terms else None
        alone = np.asarray(embedder.model.embed(terms), dtype=np.float32) if terms else np.zeros((0, dim), np.float32)
        rows.append({"corpus": corpus, "split": split, "query": query, "terms": terms,
                     "relevant": {label for label, key in keys.items() if key in relevant},
                     "labels": np.asarray(labels), "cos": cos, "words": words,
                     "cover": lexical.coverage(mem.catalog, terms, Filters()),
                     "df": {term: mem.catalog.lexicon.frequency(term) for term in terms},
                     "n": mem.catalog.lexicon.memories(), "keys": keys,
                     "term_cos": {term: vectors @ alone[i] for i, term in enumerate(terms)},
                     "without_cos": {term: vectors @ without[i] for i, term in enumerate(terms)}})
    return rows


def nearmiss(corpus: str) -> list[tuple[str, set[str], str]]:
    """The questions of bench/data/nearmiss_questions.json asked of this corpus's store, their split
    named "fresh-tune" or "fresh-check" (written blind, after the rule was set)."""
    data = json.loads(NEARMISS.read_text())
    return [(q["q"], set(q["relevant"]), f"fresh-{q['split']}") for q in data["questions"] if q["corpus"] == corpus]


def collect(out: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="mem-bench-spread-"))
    rows = []
    try:
        data = json.loads(KEYWORD_NOTES.read_text())
        mem, keys = build(work / "notes", [(n["id"], n["text"], None) for n in data["notes"]], "notes")
        rows += features(mem, keys, [(q["q"], set(q["relevant"]), q["split"]) for q in data["queries"]]
                         + nearmiss("notes"), "notes")
        print(f"notes: {len(rows)} queries", file=sys.stderr)
        items, asked = devcontent_questions()
        mem, keys = build(work / "devcontent", [(i["id"], i["raw"], None) for i in items], "devcontent")
        rows += features(mem, keys, asked + nearmiss("devcontent"), "devcontent")
        print(f"devcontent: {len(rows)} queries", file=sys.stderr)
        samples = json.loads(DEFAULT_DATA.read_text())
        for n, sample in enumerate(samples):
            other = samples[(n + 1) % len(samples)]
            items = list(turns(sample["conversation"]))
            known = {key for key, _, _ in items}
            split = "tune" if n == 0 else "check"
            asked = [(q, e, split) for q, e in questions(sample, known)]
            asked += [(q, set(), split) for q in nonsense(vocabulary(sample), vocabulary(other), 100, seed=12)]
            asked += [(qa["question"], set(), split) for qa in other["qa"] if qa.get("category") in (1, 2, 3, 4)]
            mem, keys = build(work / sample["sample_id"], items, sample["sample_id"])
            rows += features(mem, keys, asked, "locomo")
            print(f"{sample['sample_id']}: {len(rows)} queries", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out.write_bytes(pickle.dumps(rows))


def replay(row: dict, decide) -> list[int]:
    """The labels search.ranked would return for this query (top K), with `decide(row, meaning, cover)`
    as the question whether the query has a real match."""
    import numpy as np

    from memcli.index import search as hybrid

    order = np.argsort(-row["cos"])[:hybrid.CANDIDATES]
    meaning = [(int(row["labels"][i]), float(row["cos"][i])) for i in order]
    cover = row["cover"]
    ranking = hybrid.fuse([(1 - hybrid.ALPHA, hybrid.weighed(row["words"], cover)), (hybrid.ALPHA, meaning)])
    if not decide(row, meaning, cover) or not ranking:
        return []
    floor = hybrid.RELATIVE * ranking[0][1]
    return [label for label, score in ranking if score >= floor][:K]


def judge(rows: list[dict], decide) -> dict:
    """(corpus, split) → (R@10 over answerable, answerable, silent share of unanswerable, unanswerable)."""
    table: dict = {}
    for row in rows:
        for key in ((row["corpus"], row["split"]), (row["corpus"], "all")):
            table.setdefault(key, [0.0, 0, 0, 0])
        found = replay(row, decide)
        for key in ((row["corpus"], row["split"]), (row["corpus"], "all")):
            cell = table[key]
            if row["relevant"]:
                cell[0] += len(row["relevant"] & set(found)) / len(row["relevant"])
                cell[1] += 1
            else:
                cell[2] += not found
                cell[3] += 1
    return {key: (r / max(1, n), n, s / max(1, u), u) for key, (r, n, s, u) in table.items()}


def measures(row: dict) -> dict[str, float]:
    """One number per measure for a query, larger where a match is likelier (see `bound`)."""
    import numpy as np

    from memcli.index import search as hybrid

    def stand(cos) -> tuple[float, float]:
        top = np.sort(cos)[::-1][:2 * hybrid.REST]
        return float(top[0]), float(top[0] - top[hybrid.rest_rank(len(top)) - 1])

    best, above = stand(row["cos"])
    word = hybrid.commonest(row["df"], row["n"]) if len(row["terms"]) >= hybrid.LEAN_WORDS else None
    lean = stand(row["without_cos"][word])[1] if word else above
    each = min((stand(cos)[1] for cos in row["without_cos"].values()), default=above)
    return {"best cosine": best, "stands above the rest": above,
            "stands above, without the commonest word": min(above, lean),
            "stands above, without any one word": min(above, each),
            "best coverage": max(row["cover"].values(), default=0.0)}


def bound(rows: list[dict]) -> None:
    """Per part: the most silence at R@10 >= min(0.95, uncut) that one measure's level gives, and two
    measures' levels joined by "or" (a match when either reaches its level) or "and"."""
    import itertools

    import numpy as np

    parts: dict = {}
    for row in rows:
        found = replay(row, lambda *_: True)
        recall = len(row["relevant"] & set(found)) / len(row["relevant"]) if row["relevant"] else None
        parts.setdefault((row["corpus"], row["split"]), []).append((recall, measures(row)))
    print(f"{'corpus':<11} {'split':<11} {'uncut R@10':>10} {'best of one measure':<44} {'silent':>7} "
          f"{'best of two':>12}")
    for (corpus, split), part in sorted(parts.items()):
        recall = np.array([r for r, _ in part if r is not None])
        names = list(part[0][1])
        has = {name: np.array([m[name] for r, m in part if r is not None]) for name in names}
        lacks = {name: np.array([m[name] for r, m in part if r is None]) for name in names}
        need = min(0.95, recall.mean()) - 1e-9

        def levels(name):
            values = np.unique(np.r_[has[name], lacks[name]])
            return np.r_[np.quantile(values, np.linspace(0, 1, 200)) if len(values) > 200 else values, np.inf]

        def best(a, b, both):
            """The most silence of a match when a >= x or (both: and) b >= y, over the levels x, y."""
            x, y = levels(a)[:, None, None], levels(b)[None, :, None]

            def match(m):  # [level of a, level of b, query]
                one, two = m[a][None, None, :] >= x, m[b][None, None, :] >= y
                return one & two if both else one | two

            r10 = (match(has) * recall).sum(-1) / max(1, len(recall))
            silent = (~match(lacks)).mean(-1) if len(lacks[a]) else np.zeros_like(r10)
            return float(silent[r10 >= need].max(initial=0.0))

        single = max((best(name, name, False), name) for name in names)
        pair = max(best(a, b, both) for a, b in itertools.combinations(names, 2) for both in (False, True))
        print(f"{corpus:<11} {split:<11} {recall.mean():10.3f} {single[1]:<44} {single[0]:7.1%} {pair:12.1%}")


def print_table(figures: dict) -> None:
    print(f"{'corpus':<11} {'split':<9} {'answerable':>10} {'R@10':>6} {'unanswerable':>12} {'silent':>7}")
    for (corpus, split), (r10, n, silent, u) in sorted(figures.items()):
        print(f"{corpus:<11} {split:<9} {n:>10} {r10:6.3f} {u:>12} {silent:7.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("collect", "judge", "bound"))
    parser.add_argument("data", type=Path)
    parser.add_argument("--tune", action="store_true", help="judge the tune parts only (what a rule is tuned on)")
    args = parser.parse_args()
    if args.step == "collect":
        collect(args.data)
        return
    import numpy as np

    from memcli.index import search as hybrid
    from memcli.index.names import names

    rows = [row for row in pickle.loads(args.data.read_bytes()) if not args.tune or row["split"] == "tune"]
    if args.step == "bound":
        bound(rows)
        return

    def decide(row, meaning, cover):
        unknown = any(row["df"][name] == 0 for name in names(row["query"]) if name in row["df"])
        word = hybrid.commonest(row["df"], row["n"]) if len(row["terms"]) >= hybrid.LEAN_WORDS else None
        leaned = None
        if word is not None:
            cos = row["without_cos"][word]
            leaned = [(int(row["labels"][i]), float(cos[i])) for i in np.argsort(-cos)[:2 * hybrid.REST]]
        return hybrid.matched(meaning, meaning[:2 * hybrid.REST], cover, unknown, leaned)

    print_table(judge(rows, decide))


if __name__ == "__main__":
    main()
