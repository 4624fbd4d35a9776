"""What a new coding session is handed of the earlier ones, on real commits of public repositories replayed
as sessions through `mem hook`.

Each session of a spec (bench/data/session_recall/*.json) starts from a real commit's parent (checked out
between sessions, as a `git pull` would, uncaptured) and does real work there: files read, the commit's own
diff applied as Edit/Write events hunk by hunk, real shell commands (tests failing then passing, a missing
linter, an install that fixes the environment) whose real output goes into the payloads, in a fresh venv
whose packages come from a local wheelhouse. The prompts and the assistant's last messages are the spec's.
After the last session the hook's detached runner drains (real models), a new session starts, and each
question about the earlier sessions (written before any tuning, each with a gold answer that is an exact
span of the captured events) is checked, case and spacing aside, against:

- digest: the SessionStart context alone;
- digest + search: that and the hits of one `mem search <question> -k 5` (what the assistant reads);
- digest + prompt context: that and the block the hook server answers a prompt with (capture.prompt_context);
- baselines at the digest's tokens: the latest raw tool output cut to them, and BM25 over the raw events
  (one document per hook payload) cut to them; and BM25 at the tokens of digest + search;
- search alone: the hits of that one search without the digest, against BM25 at the hits' own tokens
  ("bm25 at its tokens"): whether the search, not the digest beside it, finds the answer.

    .venv/bin/python bench/session_recall.py --spec bench/data/session_recall/markupsafe.json \\
        --repo /work/data/markupsafe --wheels /work/data/wheels
    ... --dry            # replay the sessions' tools only and print what each returned (to write questions)
    ... --out run.json   # every question's outcome per condition, and the hook payloads sent
    .venv/bin/python bench/session_recall.py --spec ... --replay run.json   # the digest alone, quickly: the
        # payloads of an earlier run fed in this process to a fresh store (no compression, no search)

Prints the share answered per kind and condition, the tokens of each, and the digest itself.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from capture import MEM, Run, Session, wait_for_drain  # noqa: E402  (bench/capture.py)

CONDITIONS = ("digest", "digest+search", "digest+prompt", "raw tail", "bm25", "bm25 at search tokens", "search alone",
              "bm25 at its tokens")
KINDS = ("command", "error", "ruling", "open item", "file", "rename", "rationale")
SEARCH_K = 5
BOILERPLATE = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name", "tool_use_id",
               "stop_hook_active", "source", "reason", "trigger", "custom_instructions"}


class Replay(Session):
    """A session whose steps come from the spec."""

    def write(self, path: str, content: str) -> None:
        full = self.run.repo / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(content)
        self.tool("Write", {"file_path": str(full), "content": content},
                  {"type": "create", "filePath": str(full), "content": content, "structuredPatch": []})

    def apply(self, commit: str, paths: list[str]) -> None:
        """The commit's own change of each path, as the edits an assistant would make: a Write for a new
        file, `git rm` for a removed one, else one Edit per hunk (widened until its old text is unique)."""
        for path in paths:
            shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=self.run.repo, capture_output=True,
                                   text=True)
            full = self.run.repo / path
            if shown.returncode:
                self.bash(f"git rm -q {path}")
                continue
            if not full.exists():
                self.write(path, shown.stdout)
                continue
            for old, new in hunks(full.read_text(), shown.stdout):
                self.edit(path, old, new)

    def step(self, step: list) -> None:
        kind, *args = step
        if kind == "prompt":
            self.prompt(args[0])
        elif kind == "stop":
            self.stop(args[0])
        elif kind == "end":
            self.send("SessionEnd", reason=args[0] if args else "prompt_input_exit")
        elif kind == "compact":
            self.send("PreCompact", trigger="auto", custom_instructions="")
        else:
            getattr(self, kind)(*args)


def hunks(before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) text per changed region of before -> after, each old text unique in `before`."""
    a, b = before.splitlines(True), after.splitlines(True)
    out = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(1):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        while before.count("".join(a[i1:i2])) != 1 and (i1 > 0 or i2 < len(a)):
            if i1 > 0:
                i1, j1 = i1 - 1, j1 - 1
            if i2 < len(a):
                i2, j2 = i2 + 1, j2 + 1
        out.append(("".join(a[i1:i2]), "".join(b[j1:j2])))
    return out


class DryRun(Run):
    """Runs the tools, sends no hook: prints what each tool returned, to write questions from."""

    def hook(self, payload: dict) -> str:
        self.payloads.append(payload)
        shown = {k: v for k, v in payload.items() if k not in BOILERPLATE}
        print(json.dumps(shown, ensure_ascii=False))
        return ""


def payload_text(payload: dict) -> str:
    """What a hook payload says, its protocol fields aside: the raw event as a reader would search it."""
    parts = []

    def walk(value, key=""):
        if key in BOILERPLATE:
            return
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)

    walk(payload)
    return "\n".join(parts)


def normal(text: str) -> str:
    return " ".join(text.lower().split())


def found(answer: str, text: str) -> bool:
    return normal(answer) in normal(text)


def tail_within(text: str, tokens: int, count) -> str:
    """The longest end of `text` within `tokens`."""
    low, high = 0, len(text)
    while low < high:
        mid = (low + high) // 2
        if count(text[mid:]) <= tokens:
            high = mid
        else:
            low = mid + 1
    return text[low:]


def head_within(text: str, tokens: int, count) -> str:
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if count(text[:mid]) <= tokens:
            low = mid
        else:
            high = mid - 1
    return text[:low]


class BM25:
    """Okapi BM25 (k1 1.2, b 0.75) over the raw events, one document per payload."""

    def __init__(self, docs: list[str]):
        self.docs = docs
        self.terms = [Counter(re.findall(r"\w+", doc.lower())) for doc in docs]
        self.avg = sum(sum(t.values()) for t in self.terms) / max(1, len(docs))
        df = Counter(word for t in self.terms for word in t)
        self.idf = {w: math.log(1 + (len(docs) - n + 0.5) / (n + 0.5)) for w, n in df.items()}

    def ranked(self, query: str) -> list[int]:
        words = re.findall(r"\w+", query.lower())

        def score(i: int) -> float:
            t, size = self.terms[i], sum(self.terms[i].values())
            return sum(self.idf.get(w, 0) * t[w] * 2.2 / (t[w] + 1.2 * (0.25 + 0.75 * size / self.avg))
                       for w in words if w in t)

        return sorted(range(len(self.docs)), key=lambda i: -score(i))

    def within(self, query: str, tokens: int, count) -> str:
        picked, used = [], 0
        for i in self.ranked(query):
            need = count(self.docs[i])
            if used + need > tokens:
                picked.append(head_within(self.docs[i], tokens - used, count))
                break
            picked.append(self.docs[i])
            used += need + 1
        return "\n".join(picked)


def prepare(spec: dict, source: Path, wheels: Path, work: Path) -> tuple[Path, dict]:
    """A clone of the repository and a fresh venv holding only the spec's packages (from the wheelhouse):
    what a session installs, it installs for real."""
    repo = work / spec["repository"].split("/")[-1]
    subprocess.run(["git", "clone", "-q", str(source), str(repo)], check=True)
    with open(repo / ".git" / "info" / "exclude", "a") as exclude:
        exclude.write(".mem/\n")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    tool_env = {k: v for k, v in os.environ.items() if not k.startswith(("MEM_", "VIRTUAL_ENV", "PYTHON"))}
    tool_env.update(PATH=f"{venv / 'bin'}:{os.environ['PATH']}", VIRTUAL_ENV=str(venv), PIP_NO_INDEX="1",
                    PIP_FIND_LINKS=str(wheels), PIP_DISABLE_PIP_VERSION_CHECK="1", GIT_AUTHOR_NAME="bench",
                    GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@x")
    if spec.get("venv"):
        subprocess.run(["pip", "install", "-q", *spec["venv"]], env=tool_env, check=True, capture_output=True)
    return repo, tool_env


def replay(spec: dict, run: Run, tool_env: dict) -> None:
    for number, session in enumerate(spec["sessions"], 1):
        subprocess.run(["git", "checkout", "-q", "-f", session["base"]], cwd=run.repo, check=True)
        for command in session.get("prepare", []):  # between sessions, not captured: a pull, a rebuild
            subprocess.run(command, shell=True, cwd=run.repo, env=tool_env, check=True, capture_output=True)
        replayed = Replay(run, f"{session['id']}-{os.getpid()}")
        replayed.send("SessionStart", source="startup")
        if isinstance(run, DryRun):
            print(f"===== session {number} {session['id']} at {session['base']}")
        for step in session["steps"]:
            replayed.step(step)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", type=Path, required=True)
    parser.add_argument("--repo", type=Path, help="a clone of the spec's repository")
    parser.add_argument("--wheels", type=Path, help="a folder of wheels for the sessions' installs")
    parser.add_argument("--replay", type=Path, help="the --out of an earlier run: score the digest of its payloads")
    parser.add_argument("--dry", action="store_true", help="replay the tools only and print their outputs")
    parser.add_argument("--out", type=Path, help="write every question's outcome here (JSON)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--code", type=Path, default=HERE.parent,
                        help="the checkout whose memcli the hooks and searches run (default: this one)")
    args = parser.parse_args()
    spec = json.loads(args.spec.read_text())
    if args.replay:
        return replay_digest(spec, json.loads(args.replay.read_text())["payloads"])
    work = Path(tempfile.mkdtemp(prefix="mem-recall-"))
    try:
        repo, tool_env = prepare(spec, args.repo, args.wheels, work)
        env = {k: v for k, v in os.environ.items() if k not in ("MEM_DIR", "MEM_CAPTURE", "MEM_CAPTURE_DRAIN")}
        env.update(PYTHONPATH=str(args.code), PYTHONSAFEPATH="1")
        if args.dry:
            dry = DryRun(repo, env, tool_env, timed=False)
            replay(spec, dry, tool_env)
            if args.out:
                args.out.write_text(json.dumps({"payloads": dry.payloads}, ensure_ascii=False))
            return
        subprocess.run([*MEM, "init", str(repo / ".mem")], check=True, capture_output=True, env=env)
        with open(repo / ".mem" / "mem.yaml", "a") as settings:
            settings.write("capture:\n  serve_seconds: 20\n")  # the hook server ends soon after the bench
        run = Run(repo, env, tool_env, timed=False)
        replay(spec, run, tool_env)
        wait_for_drain(env, repo)
        measure(spec, run, env, args.out)
    finally:
        if args.keep:
            print(f"work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def measure(spec: dict, run: Run, env: dict, out: Path | None) -> None:
    from memcli.core.mem import Mem
    from memcli.features.budget import search_within
    from memcli.store.folder import Store

    repo = run.repo
    context = json.loads(Replay(run, "next").send("SessionStart", source="startup") or "{}")
    digest = context.get("hookSpecificOutput", {}).get("additionalContext", "")
    mem = Mem(Store(repo / ".mem"))
    count = mem.token_counter()
    raw_events = [payload_text(p) for p in run.payloads if payload_text(p).strip()]
    everything = "\n".join(raw_events)
    missing = [q for q in spec["questions"] if not found(q["answer"], everything)]
    for q in missing:
        print(f"spec error: the answer of {q['q']!r} is in no captured event: {q['answer']!r}")
    digest_tokens = count(digest)
    raw_tail = tail_within("\n".join(run.raw_output), digest_tokens, count)
    bm25 = BM25(raw_events)
    results, search_tokens, prompt_tokens = [], [], []
    for q in spec["questions"]:
        hits = subprocess.run([*MEM, "search", q["q"], "--json", "-k", str(SEARCH_K)], capture_output=True,
                              text=True, env=env, cwd=repo).stdout
        shown = "\n".join(h["content"] for h in (json.loads(hits) if hits.strip() else []))
        search_tokens.append(count(shown))
        block = search_within(mem, q["q"], 300).text
        prompt_tokens.append(count(block))
        outcome = {
            "digest": found(q["answer"], digest),
            "digest+search": found(q["answer"], digest + "\n" + shown),
            "digest+prompt": found(q["answer"], digest + "\n" + block),
            "raw tail": found(q["answer"], raw_tail),
            "bm25": found(q["answer"], bm25.within(q["q"], digest_tokens, count)),
            "bm25 at search tokens": found(q["answer"], bm25.within(q["q"], digest_tokens + count(shown), count)),
            "search alone": found(q["answer"], shown),
            "bm25 at its tokens": found(q["answer"], bm25.within(q["q"], count(shown), count)),
        }
        results.append({**q, **outcome})
    report(spec, results, digest, digest_tokens, search_tokens, prompt_tokens)
    if out:
        out.write_text(json.dumps({"digest": digest, "results": results, "payloads": run.payloads}, indent=1,
                                  ensure_ascii=False))


def replay_digest(spec: dict, payloads: list[dict]) -> None:
    """The digest the payloads of an earlier run make with this checkout's code, in this process, in a fresh
    store that compresses nothing (the digest does not depend on it), and the share of questions it answers."""
    from memcli.capture.event_jobs import KINDS as CAPTURE_KINDS
    from memcli.capture.hook import run as hook
    from memcli.core.mem import Mem
    from memcli.features.work import Work
    from memcli.store.folder import Store

    os.environ["MEM_CAPTURE_DRAIN"] = "0"
    with tempfile.TemporaryDirectory(prefix="mem-replay-") as folder:
        store = Path(folder) / ".mem"
        subprocess.run([*MEM, "init", str(store)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(HERE.parent)})
        with open(store / "mem.yaml", "a") as settings:
            settings.write("compress_min_chars: 100000000\n")
        for payload in payloads:
            hook(json.dumps(payload), store_dir=store)
        mem = Mem(Store(store))
        Work(mem, CAPTURE_KINDS).run()
        answer = hook(json.dumps({**payloads[0], "session_id": "next", "hook_event_name": "SessionStart"}),
                      store_dir=store)
        digest = json.loads(answer)["hookSpecificOutput"]["additionalContext"] if answer else ""
        count = mem.token_counter()
    by_kind = defaultdict(list)
    for q in spec["questions"]:
        by_kind[q["kind"]].append(found(q["answer"], digest))
    print(f"digest of the replayed payloads: {count(digest)} tokens, {len(digest)} chars")
    for kind, hits in list(by_kind.items()) + [("all", [h for hits in by_kind.values() for h in hits])]:
        print(f"{kind:<10} {sum(hits):>3}/{len(hits):<3} {sum(hits) / len(hits):>4.0%}")
    for q in spec["questions"]:
        if not found(q["answer"], digest):
            print(f"  missed: [{q['kind']}] {q['q']} -> {q['answer']}")
    print(digest)


def report(spec, results, digest, digest_tokens, search_tokens, prompt_tokens) -> None:
    label = "HELD OUT (never used to tune)" if spec.get("held_out") else "tuning set"
    print(f"repository: {spec['repository']} ({label}); sessions {len(spec['sessions'])}, "
          f"questions {len(results)}")
    print(f"digest: {digest_tokens} tokens, {len(digest)} chars; one search (k={SEARCH_K}): median "
          f"{sorted(search_tokens)[len(search_tokens) // 2]} tokens; prompt context: median "
          f"{sorted(prompt_tokens)[len(prompt_tokens) // 2]} tokens")
    by_kind = defaultdict(list)
    for item in results:
        by_kind[item["kind"]].append(item)
    width = max(len(c) for c in CONDITIONS)
    print(f"{'kind':<10} {'n':>3}  " + "  ".join(f"{c:>{width}}" for c in CONDITIONS))
    for kind in [k for k in KINDS if k in by_kind] + ["all"]:
        items = results if kind == "all" else by_kind[kind]
        cells = [f"{sum(i[c] for i in items):>{width - 6}}/{len(items):<2} {sum(i[c] for i in items) / len(items):>3.0%}"
                 for c in CONDITIONS]
        print(f"{kind:<10} {len(items):>3}  " + "  ".join(f"{cell:>{width}}" for cell in cells))
    for item in results:
        if not item["digest+search"]:
            print(f"  missed with search: [{item['kind']}] {item['q']} -> {item['answer']}")
    for item in results:
        if not item["search alone"]:
            print(f"  not in the search's hits{' (bm25 finds it)' if item['bm25 at its tokens'] else ''}: "
                  f"[{item['kind']}] {item['q']} -> {item['answer']}")
    print("--- digest ---")
    print(digest)


if __name__ == "__main__":
    main()
