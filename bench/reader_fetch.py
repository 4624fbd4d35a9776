"""The read end to end: does a reader answer as well from a cut search result, and what it fetches, as from whole hits?

    .venv/bin/python bench/reader_fetch.py prepare --stores DIR [--out OUT] [--private KEPT] [--every 6] [--start 0] [--before main]
    .venv/bin/python bench/reader_fetch.py get --out OUT --packet A|B --question Q ID
    .venv/bin/python bench/reader_fetch.py score --out OUT [--private KEPT] A=answers_A.json B=answers_B.json

`prepare` takes the LoCoMo development stores bench/read_tokens.py built (`--stores DIR`, one folder per
conversation, never rebuilt here) and a fixed sample of their category 1-4 questions: every --every-th of
them in read_tokens' order, both conversations pooled (every 6th: 39 of 231). For each question it asks
`memory_search` (limit 5, as read_tokens) through the MCP package's client of two servers on the same
store: the code of --before (git archive of that revision: today's layout) and this checkout's. It writes
into OUT (outside git), what readers may see, since their fetches run there:

  packet_A.md, packet_B.md  what a reader gets: the tool descriptions its server lists for memory_search
                            and memory_get, then per question its id, the question and the result text,
                            and the command that fetches a memory (`get`)
  questions.json            per question: its conversation (whose store `get` reads), nothing more
  fetches.jsonl             what readers fetched (emptied by prepare)

and into KEPT (default: OUT's name with -kept), what no reader should see:

  gold.json                 per question: conversation, category, question, gold answer
  key.json                  which packet is which code, the sample rule, the stores
  results.json              per packet and question: the result text and its tokens

and prints per packet the tokens of its results and how many of them hold every word of the gold answer
(a proxy before any reader: what a layout no longer shows).

`get` prints exactly the text a model reads of MCP `memory_get` for that id (this checkout's server, the
question's store) and appends the packet, question, id and its tokens to OUT/fetches.jsonl, so what a
reader fetches is counted against its packet. `score` reads each reader's answers (JSON: question id ->
answer), and prints per packet the answers judged correct (LoCoMo's own F1, on normalised and stemmed
words, counted correct at >= 0.5, or the gold's words all in the answer) and the tokens it read (the
results plus what it fetched); it writes every pair to KEPT/pairs.md for a human check. Tokens are counted
with the compression model's tokenizer, as read_tokens counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import string
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from read_tokens import LIMIT, reads  # noqa: E402
from retrieval import DEFAULT_DATA, checkout, questions, turns  # noqa: E402

PACKETS = ("A", "B")
INSTRUCTIONS = """\
# Reading test

You are an assistant with a memory tool. For each numbered question below you called `memory_search`
with the question as the query, and you are given exactly what the tool returned. The memories are
chat turns and session summaries of two people's conversations, each under the day it was said.
Answer each question from what the results say (and what you fetch), not from what you know or
guess. Keep each answer short (a few words, a date, a name). If the memories do not say, answer
"not stated".

You may fetch a whole memory by its id, as `memory_get` would give it, by running the command printed
under the question with the memory's id in place of ID. Fetch only when you need to: every fetch is
counted.

The tools, as the server describes them:

memory_search: {search}

memory_get: {get}

Reply with one JSON object, question id to answer: {{"Q1": "...", "Q2": "..."}}.

## Questions
"""


def sample(data: Path, every: int, start: int = 0) -> list[dict]:
    """Every `every`-th category 1-4 question of the conversations from the `start`-th, in read_tokens'
    order (the same rule: a question whose evidence names a turn)."""
    pooled = []
    for conversation in json.loads(data.read_text()):
        known = {dia_id for dia_id, _, _ in turns(conversation["conversation"])}
        for qa in conversation["qa"]:
            if any(questions({"qa": [qa]}, known)):
                pooled.append({"conversation": conversation["sample_id"], "category": qa["category"],
                               "question": qa["question"], "answer": str(qa["answer"])})
    return [dict(item, id=f"Q{n + 1}") for n, item in enumerate(pooled[start::every])]


def server(store: Path, code: Path) -> StdioServerParameters:
    env = {**os.environ, "MEM_DIR": str(store), "PYTHONPATH": str(code)}
    return StdioServerParameters(command=sys.executable, args=["-m", "memcli", "mcp"], env=env, cwd=str(code))


async def results(stores: Path, code: Path, asked: list[dict]) -> tuple[dict[str, str], dict[str, str]]:
    """The memory_search result text per question, and the descriptions of the two tools a reader uses."""
    texts, described = {}, {}
    for name in dict.fromkeys(item["conversation"] for item in asked):
        async with Client(server(stores / name, code), client_info=Implementation(name="bench", version="1"),
                          read_timeout_seconds=600) as client:
            described = {tool.name: " ".join((tool.description or "").split())
                         for tool in (await client.list_tools()).tools}
            for item in (item for item in asked if item["conversation"] == name):
                result = await client.call_tool("memory_search", {"query": item["question"], "limit": LIMIT})
                if result.is_error:
                    raise SystemExit(f"memory_search failed: {reads(result)}")
                texts[item["id"]] = reads(result)
    return texts, described


def counter():
    from memcli.config import Settings
    from memcli.core import engines

    return engines.local().token_counter(Settings().compress_model)


def prepare(args) -> None:
    asked = sample(args.data, args.every, args.start)
    kept = private(args)
    for folder in (args.out, kept):
        folder.mkdir(parents=True, exist_ok=True)
    count = counter()
    with tempfile.TemporaryDirectory(prefix="mem-reader-fetch-") as scratch:
        codes = {"A": checkout(args.before, Path(scratch) / "before"), "B": ROOT}
        found = {packet: anyio.run(results, args.stores, code, asked) for packet, code in codes.items()}
    tally = {}
    for packet, (texts, described) in found.items():
        lines = [INSTRUCTIONS.format(search=described["memory_search"], get=described["memory_get"])]
        for item in asked:
            fetch = (f"{sys.executable} {Path(__file__).resolve()} get --out {args.out.resolve()} "
                     f"--packet {packet} --question {item['id']} ID")
            lines.append(f"### {item['id']}: {item['question']}\n\nmemory_search returned:\n\n```\n"
                         f"{texts[item['id']]}\n```\n\nfetch: `{fetch}`\n")
        (args.out / f"packet_{packet}.md").write_text("\n".join(lines))
        tally[packet] = {item["id"]: {"text": texts[item["id"]], "tokens": count(texts[item["id"]])} for item in asked}
    (kept / "gold.json").write_text(json.dumps({item["id"]: item for item in asked}, indent=1))
    (kept / "results.json").write_text(json.dumps(tally, indent=1))
    before = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.before], capture_output=True,
                            text=True, check=True).stdout.strip()
    mine = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    (kept / "key.json").write_text(json.dumps({"A": f"memory_search of {args.before} ({before}, git archive)",
                                               "B": f"memory_search of this checkout (at {mine})", "every": args.every, "start": args.start,
                                               "data": str(args.data)}, indent=1))
    (args.out / "questions.json").write_text(json.dumps(
        {"stores": str(args.stores.resolve()), "conversations": {item["id"]: item["conversation"] for item in asked}},
        indent=1))
    (args.out / "fetches.jsonl").write_text("")  # fresh packets, a fresh count of what readers fetch
    for packet in PACKETS:
        shown = sum(1 for item in asked if holds(tally[packet][item["id"]]["text"], item["answer"]))
        print(f"packet {packet}: {len(asked)} questions, results {sum(r['tokens'] for r in tally[packet].values()):,} "
              f"tokens; the gold answer's words all in the result: {shown}")
    print(f"packets written to {args.out}; gold answers and the key to {kept}")


def private(args) -> Path:
    """Where what readers must not see is kept: --private, else beside OUT."""
    return args.private or args.out.with_name(args.out.name + "-kept")


async def fetched(store: Path, memory_id: str) -> str:
    async with Client(server(store, ROOT), client_info=Implementation(name="reader", version="1")) as client:
        return reads(await client.call_tool("memory_get", {"id": memory_id}))


def get(args) -> None:
    asked = json.loads((args.out / "questions.json").read_text())
    if args.question not in asked["conversations"]:
        raise SystemExit(f"no question {args.question} in {args.out}/questions.json")
    text = anyio.run(fetched, Path(asked["stores"]) / asked["conversations"][args.question], args.id)
    print(text)
    with (args.out / "fetches.jsonl").open("a") as log:
        log.write(json.dumps({"packet": args.packet, "question": args.question, "id": args.id,
                              "tokens": counter()(text)}) + "\n")


# LoCoMo's F1 (its evaluation.py): lower case, no punctuation, no articles, stemmed words; a multi-hop
# answer (category 1) is a list whose parts are each matched with the answer's best part. LoCoMo stems
# with NLTK's Porter stemmer; mem does not depend on NLTK, so the common inflections are cut here instead.
ARTICLES = re.compile(r"\b(a|an|the|and)\b")
INFLECTION = re.compile(r"(?<=\w{3})(ing|ed|es|s)$")


# A month's short name and a number's word are the same word (readers write "21 Oct 2023", "Ten years").
SAME = {**{month[:3]: month for month in ("january february march april may june july august september october "
                                          "november december").split()}, "sept": "september",
        **{word: str(n) for n, word in enumerate("zero one two three four five six seven eight nine ten eleven "
                                                 "twelve".split())}}


def normalised(text: str) -> list[str]:
    text = "".join(ch for ch in str(text).lower().replace(",", "") if ch not in string.punctuation)
    return [INFLECTION.sub("", SAME.get(word, word)) for word in ARTICLES.sub(" ", text).split()]


def f1(answer: str, gold: str) -> float:
    said, wanted = normalised(answer), normalised(gold)
    common = sum((Counter(said) & Counter(wanted)).values())
    if not common:
        return 0.0
    precision, recall = common / len(said), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def scored(answer: str, gold: str, category: int) -> float:
    if category == 1:
        parts, golds = [p for p in answer.split(",") if p.strip()] or [answer], [g for g in gold.split(",") if g.strip()]
        return sum(max(f1(part, g) for part in parts) for g in golds) / len(golds)
    return f1(answer, gold)


def holds(text: str, gold: str) -> bool:
    """Whether every word of the gold answer is in a text (normalised as F1 does): a proxy, before any
    reader, for whether a result still shows what answers (a date a reader works out from "yesterday"
    is not there in either layout)."""
    wanted = set(normalised(gold))
    return bool(wanted) and wanted <= set(normalised(text))


def correct(answer: str, gold: str, category: int) -> bool:
    return scored(answer, gold, category) >= 0.5 or holds(answer, gold)


def cell(text: str) -> str:
    """Text as one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def score(args) -> None:
    kept = private(args)
    gold = json.loads((kept / "gold.json").read_text())
    tally = json.loads((kept / "results.json").read_text())
    fetches = [json.loads(line) for line in (args.out / "fetches.jsonl").read_text().splitlines() if line.strip()]
    answers = {}
    for given in args.answers:
        packet, _, path = given.partition("=")
        answers[packet] = {key: str(value) for key, value in json.loads(Path(path).read_text()).items()}
    pairs = ["| question | gold | " + " | ".join(f"{p} answer | {p} F1 | {p} correct" for p in answers) + " |",
             "|---|---|" + "---|---|---|" * len(answers)]
    verdicts = {packet: {} for packet in answers}
    for key, item in gold.items():
        cells = []
        for packet, given in answers.items():
            answer = given.get(key, "")
            verdicts[packet][key] = (scored(answer, item["answer"], item["category"]),
                                     correct(answer, item["answer"], item["category"]))
            f, ok = verdicts[packet][key]
            cells.append(f"{cell(answer)} | {f:.2f} | {'yes' if ok else 'no'}")
        pairs.append(f"| {key} ({item['conversation']}, cat {item['category']}): {cell(item['question'])} | "
                     f"{cell(item['answer'])} | " + " | ".join(cells) + " |")
    (kept / "pairs.md").write_text("\n".join(pairs) + "\n")
    print(f"| packet | correct of {len(gold)} | mean F1 | result tokens | fetches | fetched tokens | tokens read |")
    print("|---|---|---|---|---|---|---|")
    for packet, judged in verdicts.items():
        shown = sum(row["tokens"] for row in tally[packet].values())
        own = [f for f in fetches if f["packet"] == packet]
        fetched_tokens = sum(f["tokens"] for f in own)
        right = sum(ok for _, ok in judged.values())
        mean = sum(f for f, _ in judged.values()) / len(gold)
        print(f"| {packet} | {right} | {mean:.3f} | {shown:,} | {len(own)} | {fetched_tokens:,} | {shown + fetched_tokens:,} |")
    for packet, judged in verdicts.items():
        by = Counter(gold[key]["category"] for key in gold)
        right = Counter(gold[key]["category"] for key, (_, ok) in judged.items() if ok)
        print(f"{packet} by category: " + ", ".join(f"cat {c} {right[c]}/{by[c]}" for c in sorted(by)))
    print(f"pairs for a human check: {kept / 'pairs.md'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    ready = commands.add_parser("prepare", help="write the two packets, the gold answers and the key")
    ready.add_argument("--stores", type=Path, required=True, help="the stores bench/read_tokens.py --stores built")
    ready.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "mem-reader-fetch")
    ready.add_argument("--private", type=Path, help="where the gold answers and the key go (default: OUT-kept)")
    ready.add_argument("--every", type=int, default=6, help="take every N-th question (pooled, in order)")
    ready.add_argument("--start", type=int, default=0, help="from the N-th (0: the first); another start, another sample")
    ready.add_argument("--before", default="main", help="the revision whose layout packet A shows")
    ready.add_argument("--data", type=Path, default=DEFAULT_DATA)
    fetch = commands.add_parser("get", help="what memory_get returns for an id, counted against a packet")
    fetch.add_argument("--out", type=Path, required=True)
    fetch.add_argument("--packet", choices=PACKETS, required=True)
    fetch.add_argument("--question", required=True)
    fetch.add_argument("id")
    judge = commands.add_parser("score", help="correct answers and tokens read, per packet")
    judge.add_argument("--out", type=Path, required=True)
    judge.add_argument("--private", type=Path, help="where prepare put the gold answers (default: OUT-kept)")
    judge.add_argument("answers", nargs="+", help="PACKET=answers.json (question id -> answer)")
    args = parser.parse_args()
    {"prepare": prepare, "get": get, "score": score}[args.command](args)


if __name__ == "__main__":
    main()
