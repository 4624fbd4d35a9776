"""Conversation threads on LoCoMo and on assistant chats: the facts folds keep, and what `mem thread context` keeps against a plain recent window.

    .venv/bin/python bench/threads.py [--data ../shared/bench/locomo-dev/locomo-dev.json] [--limit N]
    .venv/bin/python bench/threads.py --replay library      # one process: no append timings, minutes not hours
    .venv/bin/python bench/threads.py --chats               # bench/data/chats.json only, tuned and held out apart

Fact retention: the share of the folded turns' facts (memcli.threads.kept_facts: names and places, dates,
numbers with units and money, preference, constraint and decision statements; each distinct fact of a
fold once) whose words are all in that fold's summary (its date line left out), summed over the folds.

Each development conversation is replayed turn by turn through `mem thread append` (one process per
turn, as a chat loop would run it; the two speakers as `user` and `assistant`, with `name`, at their
session's date), so folding happens in the background as it does for a user. At the end, for budgets
of 1,000 and 2,000 tokens, it prints the tokens of `mem thread context` against the full history, and
the share of the conversation's questions (categories 1-4) whose answer's content words all appear in
that context; the same share for the baseline, the newest turns that fit the same budget, counted the
same way (content + 4 tokens a message, SmolLM2's tokenizer). Also seconds per `append` (p50, p90)
against `mem --version` and `mem ls` (the floor of any command, and of one that opens the store) timed
between the appends (every 10th), under the same load, and seconds per
summary (foreground `mem thread summarize --force` on copies of the thread). With `--replay library`
the turns are appended through the library in one process, each fold made as soon as it is due (what
the background summariser does), so only the shares and the retention are printed.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compression import content_words  # noqa: E402 - the answer-word rule shared by the benches
from retrieval import DEFAULT_DATA, session_time  # noqa: E402

CHATS = HERE / "data" / "chats.json"

BUDGETS = (1000, 2000)
OVERHEAD = 4  # memcli.threads.chat_prompt.MESSAGE_OVERHEAD
FOLD_WAIT_S = 600
FLOOR_EVERY = 10  # appends between two timings of `mem --version` and `mem ls`


def mem(*args, store: Path, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memcli", "--dir", str(store), *args], input=input,
                          capture_output=True, text=True, check=True)


def turns_of(conversation: dict) -> list[dict]:
    data = conversation["conversation"]
    speakers = [data["speaker_a"], data["speaker_b"]]
    out = []
    for n in range(1, 100):
        session = data.get(f"session_{n}")
        if session is None:
            continue
        when = session_time(data[f"session_{n}_date_time"])
        for turn in session:
            text = turn["text"] + (f" [shared an image: {turn['blip_caption']}]" if turn.get("blip_caption") else "")
            role = "user" if turn["speaker"] == speakers[0] else "assistant"
            out.append({"role": role, "name": turn["speaker"], "content": text, "created_at": when})
    return out


def summarizing(store: Path) -> bool:
    """Whether a background summariser holds a thread's lock in this store."""
    for lock in (store / ".index").glob("thread-*.lock"):
        with open(lock) as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def wait_for_folds(store: Path, thread_id: str) -> None:
    """Let background summarisers finish, then fold what is still due in the foreground (bounded)."""
    deadline = time.monotonic() + FOLD_WAIT_S
    while time.monotonic() < deadline:
        if summarizing(store):
            time.sleep(0.5)
        elif not mem("thread", "summarize", thread_id, store=store).stdout.strip():
            return


def answer_share(text: str, answers: list[set[str]]) -> float:
    words = content_words(text)
    return sum(1 for answer in answers if answer and answer <= words) / len(answers)


def open_mem(store: Path):
    from memcli.core.mem import Mem
    from memcli.store.folder import Store

    return Mem(Store(store))


def replay_in_library(store: Path, thread_id: str, turns: list[dict]) -> None:
    """Append turn by turn and fold whenever a fold is due, in this process."""
    from memcli.threads.storage import Threads
    from memcli.threads.summarize import fold_due, summarize

    mem = open_mem(store)
    threads = Threads(mem)
    for turn in turns:
        threads.append(thread_id, [turn])
        while fold_due(mem, thread_id) and summarize(mem, thread_id):
            pass
    mem.catalog.close()


def fact_retention(store: Path, thread_id: str, count) -> tuple[int, int, float]:
    """(facts kept, facts, summary tokens / folded turns' tokens) over the thread's folds: each fold's
    turns against its summary. The size keeps the retention honest: copying the turns keeps every fact."""
    from memcli.threads.kept_facts import retention
    from memcli.threads.storage import Threads

    threads = Threads(open_mem(store))
    messages = threads.messages(thread_id)
    kept = total = summary_tokens = turn_tokens = 0
    for fold in threads.folds(thread_id):
        turns = [m.content for m in messages if fold.first <= m.seq <= fold.last and m.role != "system"]
        summary = fold.memory.raw.split("\n", 1)[1] if fold.memory.raw.startswith("[") else fold.memory.raw
        k, t = retention(turns, summary)
        kept, total = kept + k, total + t
        summary_tokens += count(fold.memory.raw)
        turn_tokens += sum(count(turn) for turn in turns)
    return kept, total, summary_tokens / max(1, turn_tokens)


def chats(library: bool, count) -> None:
    """Each chat replayed and folded to its newest turns; its facts kept, tuned and held-out apart."""
    from memcli.threads.kept_facts import SENTENCE, is_filler
    from memcli.threads.storage import Threads

    sums = {False: [0, 0], True: [0, 0]}
    print(f"{'chat':<16} {'held out':>8} {'turns':>5} {'folded':>6} {'facts kept':>10} {'share':>6} {'fillers':>7} "
          f"{'size':>5}")
    for chat in json.loads(CHATS.read_text())["chats"]:
        store = Path(tempfile.mkdtemp(prefix="mem-bench-chat-"))
        mem("init", str(store), store=store)
        thread_id = mem("thread", "new", "--title", chat["id"], store=store).stdout.strip()
        if library:
            replay_in_library(store, thread_id, chat["turns"])
        else:
            mem("thread", "append", thread_id, "--jsonl", store=store,
                input="".join(json.dumps(t) + "\n" for t in chat["turns"]))
            wait_for_folds(store, thread_id)
        mem("thread", "summarize", thread_id, "--force", store=store)
        kept, total, size = fact_retention(store, thread_id, count)
        threads = Threads(open_mem(store))
        folds = threads.folds(thread_id)
        fillers = sum(1 for fold in folds for line in fold.memory.raw.splitlines()[1:]
                      for sentence in SENTENCE.findall(line.split(": ", 1)[-1]) if is_filler(sentence))
        sums[chat["held_out"]][0] += kept
        sums[chat["held_out"]][1] += total
        print(f"{chat['id']:<16} {'yes' if chat['held_out'] else 'no':>8} {len(chat['turns']):>5} "
              f"{max((f.last for f in folds), default=0):>6} {kept:>4} of {total:<3} {kept / max(1, total):>6.3f} "
              f"{fillers:>7} {size:>5.2f}")
        shutil.rmtree(store)
    for held_out, (kept, total) in sums.items():
        print(f"{'held out' if held_out else 'tuned on'}: {kept} of {total} facts kept ({kept / max(1, total):.3f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, help="Replay only the first N turns of each conversation.")
    parser.add_argument("--only", help="Replay only the conversation with this sample_id (e.g. conv-30).")
    parser.add_argument("--replay", choices=("process", "library"), default="process",
                        help="A `mem` process per append (timed), or the library in this process (fast).")
    parser.add_argument("--chats", action="store_true", help="Only the assistant chats of bench/data/chats.json.")
    args = parser.parse_args()
    library = args.replay == "library"
    from memcli.providers.llama import get_lm
    from memcli.providers.registry import DEFAULT_COMPRESS_MODEL

    count = get_lm(DEFAULT_COMPRESS_MODEL).count_tokens
    if args.chats:
        chats(library, count)
        return 0
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores)")
    append_s: list[float] = []
    summary_s: list[float] = []
    floors: dict[str, list[float]] = {"--version": [], "ls": []}  # any command; a command that opens the store
    for conversation in json.loads(args.data.read_text()):
        if args.only and conversation.get("sample_id") != args.only:
            continue
        turns = turns_of(conversation)[: args.limit]
        answers = [content_words(str(qa["answer"])) for qa in conversation["qa"]
                   if qa.get("category") in (1, 2, 3, 4) and "answer" in qa]
        store = Path(tempfile.mkdtemp(prefix="mem-bench-threads-"))
        mem("init", str(store), store=store)
        thread_id = mem("thread", "new", "--title", conversation.get("sample_id", "conversation"),
                        store=store).stdout.strip()
        for number, turn in enumerate([] if library else turns):
            started = time.perf_counter()
            mem("thread", "append", thread_id, "--jsonl", store=store, input=json.dumps(turn) + "\n")
            append_s.append(time.perf_counter() - started)
            if number % FLOOR_EVERY == 0:  # the floors beside the appends, under the same load
                for floor, command in (("--version", ["--version"]), ("ls", ["--dir", str(store), "ls"])):
                    started = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "memcli", *command], capture_output=True, check=True)
                    floors[floor].append(time.perf_counter() - started)
        if library:
            replay_in_library(store, thread_id, turns)
        wait_for_folds(store, thread_id)
        kept, total, size = fact_retention(store, thread_id, count)
        full = sum(count(t["content"]) + OVERHEAD for t in turns)
        folds = json.loads(mem("thread", "ls", "--json", store=store).stdout)[0]["folded"]
        print(f"\n{conversation.get('sample_id', '?')}: {len(turns)} turns, full history {full} tokens, "
              f"{folds} turns folded, {len(answers)} questions; facts kept in the summaries: {kept} of {total} "
              f"({kept / max(1, total):.3f}), summaries {size:.2f} of the folded turns' tokens")
        print(f"{'budget':>7} {'context tokens':>15} {'vs full':>8} {'answers (mem)':>14} "
              f"{'answers (last turns)':>21} {'ratio':>6}")
        for budget in BUDGETS:
            messages = json.loads(mem("thread", "context", thread_id, "--budget", str(budget), "--json",
                                      store=store).stdout)
            used = sum(count(m["content"]) + OVERHEAD for m in messages)
            ours = answer_share(" ".join(m["content"] for m in messages), answers)
            window, spent = [], 0
            for turn in reversed(turns):
                need = count(turn["content"]) + OVERHEAD
                if spent + need > budget:
                    break
                window.append(turn["content"])
                spent += need
            base = answer_share(" ".join(window), answers)
            ratio = f"{ours / base:.2f}x" if base else "n/a"
            print(f"{budget:>7} {used:>15} {used / full:>8.3f} {ours:>14.3f} {base:>21.3f} {ratio:>6}")
        for _ in range(0 if library else 3):
            copy = Path(tempfile.mkdtemp(prefix="mem-bench-fold-"))
            subprocess.run(["cp", "-a", f"{store}/.", str(copy)], check=True)
            mem("thread", "append", thread_id, "--jsonl", store=copy,
                input="".join(json.dumps(t) + "\n" for t in turns[-12:]))
            wait_for_folds(copy, thread_id)
            started = time.perf_counter()
            mem("thread", "summarize", thread_id, "--force", store=copy)
            summary_s.append(time.perf_counter() - started)
            shutil.rmtree(copy)
        shutil.rmtree(store)
    if library:
        return 0
    append_sorted = sorted(append_s)
    p50 = statistics.median(append_s)
    print(f"\nappend: p50 {p50 * 1000:.0f} ms, p90 {append_sorted[int(0.9 * (len(append_sorted) - 1))] * 1000:.0f} ms "
          f"over {len(append_s)} appends (each a whole `mem` process); between them (medians of "
          f"{len(floors['ls'])}): " + ", ".join(f"`mem {name}` {statistics.median(times) * 1000:.0f} ms "
                                                f"({p50 / statistics.median(times):.2f}x)" for name, times in floors.items()))
    print(f"summary (a whole `mem thread summarize --force` process, models loaded): median "
          f"{statistics.median(summary_s):.2f} s over {len(summary_s)}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
