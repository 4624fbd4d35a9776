"""Replays the damage of the hardening round (issue 13) on a store of 1,000 memories, and kill -9 of writers.

    .venv/bin/python bench/faults.py [--size 1000] [--kills 4] [--only SUBSTRING]

A base store is made once (memories, catalog and vector graph, built by `mem reindex` with the real
default models). Each kind of damage gets a fresh copy of it, the damage, then what a user runs next, each
as its own `mem` process: ls, search (for the exact text of a memory, which must come first), show, doctor,
add, and ls again. Per kind it prints how the commands ended:

  recovered  every command succeeded and said nothing was wrong
  reported   every command ended with one of mem's own exit codes, and some named the problem (a warning,
             an error, a file skipped); nothing crashed
  crashed    a process died by a signal, printed a Python traceback, or ran past the time limit (300 s:
             a rebuilt catalog re-embeds every memory, which takes a minute or two on a loaded machine)

and how many memories of the base store the last `ls` misses ("lost"; a memory whose own file the damage
replaced is not counted: that file is the one reported), and how many searches answered with another
memory first ("wrong"; a search that stopped with an error is counted as reported, not wrong). Lost, wrong and crashed must all be 0.

The kinds of issue 42 (they need root and strace: the full disk is a real tmpfs of its own):
  kill -9 of rm of a chain   a memory updated twice, `mem rm` of it killed right after its 1st, 2nd or 3rd
                             unlink (strace holds each unlink's return 0.3 s); a replaced version listed
                             as current afterwards counts as wrong
  full disk                  the store on a tmpfs with little room left, `mem import` of more than fits; the
                             commands after it run on the full disk (their add must fail with one line)
  slow provider              mem.yaml names a server on 127.0.0.1 that accepts and never answers; `mem add`
                             killed while it waits: the memory it was given must be stored (else lost)
  timeout while llama.cpp runs  `compress_timeout_s: 0.5` and a long note, the real local model: the add
                             must end with exit 0 (it died by SIGSEGV before)

The kinds of the work queue (issue 49): a coding session sent through `mem hook` processes (background
runners off), then the fault, then `mem capture drain`; every observation, thread turn and summary the
session makes must be stored exactly once (missing: lost; twice: wrong), whatever one event did:
  capture: observation over the limit   `max_input_bytes` smaller than one tool's output: that one parked
  capture: thread rm of a session    the session's thread removed between two drains
  capture: edit of a key-like line   an Edit removing a line `--- BEGIN RSA PRIVATE KEY ---` of a doc
  capture: 60 edits of one file      consecutive edits merged into observations within their bound: each
                                     edit's added line stored once
  capture: kill -9 of the drain      killed at a random moment, then run again (--kills runs)

    .venv/bin/python bench/faults.py --only capture --code /path/to/other/checkout   # mem of another checkout

The kinds of issue 53 (a teammate's commit: hostile store files, 1,200 tag filters): bench/hostile_files.py;
links and unsealed files a commit brings into `.queue/` and `.capture/` after the first run:
bench/hostile_links.py ("outside": kinds that created, removed or changed a file outside the store, handed
a payload to a socket outside, or copied a key in; must be 0).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_files import BOMB, HEAD, MERGE_BOMB, hostile_kinds, new_file  # noqa: E402  (files a commit brings)
from hostile_links import link_kinds  # noqa: E402  (links a commit brings into .queue/ and .capture/)
from store import make_store  # noqa: E402  (bench/store.py: the same synthetic memories)

TIME_LIMIT_S = 300


@dataclass
class Outcome:
    crashed: list[str] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)
    wrong: int = 0
    lost: int = 0

    @property
    def verdict(self) -> str:
        return "crashed" if self.crashed else "reported" if self.reported else "recovered"


CODE_ENV: dict[str, str] = {}  # PYTHONPATH of the checkout whose mem runs (--code), else this one's


def mem(root: Path, *args: str, stdin: bytes | None = None, outcome: Outcome | None = None,
        limit: float | None = TIME_LIMIT_S) -> subprocess.CompletedProcess:
    """One `mem` process on the store; its ending is recorded in outcome."""
    env = {**os.environ, **CODE_ENV, "MEM_DIR": str(root)}
    try:
        done = subprocess.run([sys.executable, "-m", "memcli", *args], env=env, input=stdin, capture_output=True,
                              timeout=limit)
    except subprocess.TimeoutExpired:
        if outcome is not None:
            outcome.crashed.append(f"mem {args[0]}: over {TIME_LIMIT_S} s")
        return subprocess.CompletedProcess(args, -1, b"", b"timeout")
    err = done.stderr.decode("utf-8", "replace")
    if outcome is not None:
        if done.returncode < 0 or "Traceback (most recent call last)" in err:
            outcome.crashed.append(f"mem {args[0]}: exit {done.returncode} {err.strip()[-200:]}")
        elif done.returncode >= 2 or "mem: warning" in err or "mem: error" in err or "mem: skipped" in err:
            outcome.reported.append(f"mem {args[0]}: {err.strip().splitlines()[0][:160] if err.strip() else done.returncode}")
    return done


def listed(root: Path, outcome: Outcome | None = None) -> set[str]:
    done = mem(root, "ls", "--jsonl", outcome=outcome)
    return {json.loads(line)["id"] for line in done.stdout.decode().splitlines() if line.strip()}


def after_damage(root: Path, base: dict[str, str], rng: random.Random, outcome: Outcome, spared: set[str]) -> None:
    """What a user runs next; fills outcome (lost counts base memories missing, except `spared`)."""
    probe_id = rng.choice(sorted(set(base) - spared))
    found = mem(root, "search", base[probe_id], "-n", "3", "--jsonl", outcome=outcome)
    first = [json.loads(line)["id"] for line in found.stdout.decode().splitlines() if line.strip()][:1]
    outcome.wrong += found.returncode == 0 and first != [probe_id]  # an answer, and not the right one
    mem(root, "show", probe_id, outcome=outcome)
    mem(root, "doctor", outcome=outcome)
    mem(root, "add", f"written after the damage {rng.random()}", "--no-compress", outcome=outcome)
    current = listed(root, outcome)
    outcome.lost = len(set(base) - spared - current)
    expected = root.parent / "expected.json"  # what a damage of issue 42 says must (not) be current
    if expected.exists():
        truth = json.loads(expected.read_text())
        outcome.wrong += len(current & set(truth.get("not_current", [])))
        raws = list(exported(root).values())
        outcome.lost += len(set(truth.get("stored", [])) - set(raws))
        for start in truth.get("once", []):  # a captured memory: stored exactly once
            found = sum(raw.startswith(start) for raw in raws)
            outcome.lost += found == 0
            outcome.wrong += found > 1
        for line, count in truth.get("lines", {}).items():  # lines spread over merged observations
            found = sum(raw.count(line) for raw in raws)
            outcome.lost += found < count
            outcome.wrong += found > count
        turns = truth.get("turns")
        if turns is not None:
            outcome.lost += max(0, turns - thread_turns(root))
            outcome.wrong += max(0, thread_turns(root) - turns)


def exported(root: Path) -> dict[str, str]:
    """Every memory of the store, current or not: id -> raw."""
    return {record["id"]: record["raw"] for record in map(json.loads, mem(root, "export").stdout
                                                          .decode().splitlines()) if "raw" in record}


# -- the damage -------------------------------------------------------------------------------------

def files_of(root: Path) -> list[Path]:
    return sorted(root.glob("memories/*/*/*.yaml"))


def moved_copy(root: Path, rng: random.Random) -> set[str]:
    original = rng.choice(files_of(root))
    copy = root / "memories" / "1999" / "01" / original.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(original, copy)
    mem(root, "ls", "-n", "1")
    original.unlink()
    return set()


def edit_in_place(root: Path, rng: random.Random) -> set[str]:
    path = rng.choice(files_of(root))
    before = path.stat()
    text = path.read_text()
    path.write_text(text.replace("#", "=", 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    return set()


def noise(relpath: str, where):
    def damage(root: Path, rng: random.Random) -> set[str]:
        path = root / ".index" / relpath
        size = path.stat().st_size if path.exists() else 0
        with open(path, "r+b" if path.exists() else "wb") as handle:
            handle.seek(where(size))
            handle.write(os.urandom(4096) if relpath != "vectors.hnsw" else b"\xff" * 512)
        return set()
    return damage


def catalog_sql(sql: str):
    def damage(root: Path, rng: random.Random) -> set[str]:
        import sqlite3

        with sqlite3.connect(root / ".index" / "catalog.sqlite") as db:
            db.execute(sql)
        return set()
    return damage


def truncate(relpath: str):
    def damage(root: Path, rng: random.Random) -> set[str]:
        os.truncate(root / ".index" / relpath, (root / ".index" / relpath).stat().st_size // 3)
        return set()
    return damage


def restored_graph(root: Path, rng: random.Random) -> set[str]:
    saved = root.parent / "old.hnsw"
    shutil.copy2(root / ".index" / "vectors.hnsw", saved)
    doomed = [json.loads(line)["id"] for line in mem(root, "ls", "--jsonl", "-n", "50").stdout.decode().splitlines()]
    mem(root, "rm", "-y", *doomed)
    mem(root, "reindex", limit=None)
    shutil.copy2(saved, root / ".index" / "vectors.hnsw")
    return set(doomed)


def lock_as_folder(root: Path, rng: random.Random) -> set[str]:
    (root / ".index" / "lock").unlink(missing_ok=True)
    (root / ".index" / "lock").mkdir()
    return set()


def index_as_file(root: Path, rng: random.Random) -> set[str]:
    shutil.rmtree(root / ".index")
    (root / ".index").write_text("not a folder")
    return set()


def bad_import(root: Path, rng: random.Random) -> set[str]:
    lines = [b'{"raw": "good import line one"}', b'{"raw": "x", "created_at": "9999-12-31T23:59:59-12:00"}',
             b'{"raw": "a \\ud800"}', b'{"raw": "caf\xe9"}', b"{not json", b'{"raw": "good import line two"}']
    mem(root, "import", "-", "--no-compress", stdin=b"\n".join(lines))
    return set()


KINDS = {
    "1 moved copy, original deleted": moved_copy,
    "2 edit in place, mtime restored": edit_in_place,
    "3 older vectors.hnsw restored": restored_graph,
    "4 unknown key holding a date": new_file(HEAD + "due: 2026-12-01\n"),
    "4 compression status a list": new_file(HEAD + "compression: {status: [1]}\n"),
    "4 created_at 2020-02-30": new_file(HEAD + "created_at: 2020-02-30\n"),
    "4 !!binary and !!set values": new_file(HEAD + "b: !!binary aGVsbG8=\ns: !!set {a, b}\n"),
    "4 file not UTF-8": new_file(HEAD.encode() + b"note: caf\xe9\n"),
    "4 git conflict markers": new_file("<<<<<<< HEAD\n" + HEAD + "=======\n" + HEAD + ">>>>>>> other\n"),
    "5 billion laughs (aliases)": new_file(BOMB),
    "5 billion laughs (merge keys)": new_file(MERGE_BOMB),
    "6 noise in a catalog page": noise("catalog.sqlite", lambda size: size // 2),
    "6 noise in the catalog header": noise("catalog.sqlite", lambda size: 0),
    "6 catalog truncated": truncate("catalog.sqlite"),
    "6 noise in catalog -wal": noise("catalog.sqlite-wal", lambda size: 0),
    "6 noise in catalog -shm": noise("catalog.sqlite-shm", lambda size: 0),
    "6 meta rows garbage": catalog_sql("UPDATE meta SET value = 'x' WHERE key != 'schema'"),
    "6 records garbage": catalog_sql("UPDATE memories SET record = '{' WHERE label % 7 = 0"),
    "6 a table dropped": catalog_sql("DROP TABLE fts"),
    "6 .index is a file": index_as_file,
    "6 lock is a folder": lock_as_folder,
    "7 vectors.hnsw 0xFF at 50,000": noise("vectors.hnsw", lambda size: 50_000),
    "7 vectors.hnsw truncated": truncate("vectors.hnsw"),
    "8 bad import lines": bad_import,
}


# -- kill -9 of writers -----------------------------------------------------------------------------

WRITERS = {
    "add": lambda root, rng: [sys.executable, "-c", (
        "import subprocess, sys\n"
        "for n in range(40):\n"
        f"    subprocess.run([sys.executable, '-m', 'memcli', 'add', 'killed writer note %d {rng.random()}' % n])\n")],
    "import": lambda root, rng: [sys.executable, "-m", "memcli", "import", str(root.parent / "lines.jsonl"), "--no-compress"],
    "reindex": lambda root, rng: [sys.executable, "-m", "memcli", "reindex"],
    "compress": lambda root, rng: [sys.executable, "-m", "memcli", "compress", "--all"],
}


def kill_writer(name: str):
    def damage(root: Path, rng: random.Random) -> set[str]:
        (root.parent / "lines.jsonl").write_text("\n".join(
            json.dumps({"raw": f"imported then killed {n} {rng.random()}"}) for n in range(300)))
        writer = subprocess.Popen(WRITERS[name](root, rng), env={**os.environ, "MEM_DIR": str(root)},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(rng.uniform(0.3, 4.0))
        os.killpg(writer.pid, signal.SIGKILL)
        writer.wait()
        return set()
    return damage


# -- issue 42: kill -9 of rm of a chain, a full disk, a provider that never answers, a timeout inside llama.cpp

def expect(root: Path, **truth) -> None:
    (root.parent / "expected.json").write_text(json.dumps(truth))


def killed_rm_of_a_chain(unlinks: int):
    """A memory updated twice (three versions), then `mem rm` of it killed right after its `unlinks`-th
    memory file is gone: strace slows each unlink by 0.3 s (the file is gone, the call not yet returned)
    and the process gets SIGKILL in that window."""
    def damage(root: Path, rng: random.Random) -> set[str]:
        first = rng.choice(sorted(p.stem for p in files_of(root)))
        second = mem(root, "update", first, f"the second version {rng.random()}", "--no-compress")
        second = second.stdout.decode().strip()
        newest = mem(root, "update", second, f"the third version {rng.random()}", "--no-compress")
        newest = newest.stdout.decode().strip()
        expect(root, not_current=[first, second])
        log = root.parent / "strace.log"
        remover = subprocess.Popen(["strace", "-f", "-o", str(log), "-e", "trace=unlink,unlinkat",
                                    "-e", "inject=unlink,unlinkat:delay_exit=300000",
                                    sys.executable, "-m", "memcli", "rm", "-y", newest],
                                   env={**os.environ, "MEM_DIR": str(root)}, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and remover.poll() is None:
            seen = [line.split(None, 1) for line in (log.read_text().splitlines() if log.exists() else [])
                    if "/memories/" in line and "unlink" in line and "ENOENT" not in line]
            if len(seen) >= unlinks:
                pid, call = seen[unlinks - 1]
                while Path(call.split('"')[1]).exists():
                    time.sleep(0.01)
                os.kill(int(pid), signal.SIGKILL)
                break
            time.sleep(0.01)
        else:
            FIRST_NOTES.append(f"rm ended before its unlink {unlinks}")
        remover.wait()
        return {first}
    return damage


def full_disk(root: Path, rng: random.Random) -> set[str]:
    """Move the store onto a tmpfs of its own with 256 KB to spare, then import more than that."""
    held = root.parent / "held"
    shutil.move(root, held)
    root.mkdir()
    used = sum(max(p.stat().st_blocks * 512, 4096) for p in held.rglob("*"))  # tmpfs takes a page a file
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={used + 4 * 1024 * 1024}", "tmpfs", str(root)], check=True)
    CLEANUPS.append(lambda: subprocess.run(["umount", "-l", str(root)], check=True))
    shutil.copytree(held, root, symlinks=True, dirs_exist_ok=True)
    shutil.rmtree(held)
    filler = root / "filler"
    with open(filler, "wb") as handle:  # leave 256 KB
        free = os.statvfs(root).f_bavail * os.statvfs(root).f_frsize
        handle.write(b"\0" * max(0, free - 256 * 1024))
    (root.parent / "lines.jsonl").write_text("\n".join(
        json.dumps({"raw": f"imported onto a full disk {n} " + "lorem ipsum " * 200}) for n in range(400)))
    done = mem(root, "import", str(root.parent / "lines.jsonl"), "--no-compress")
    FIRST_NOTES.append(f"import: exit {done.returncode} {done.stderr.decode().strip().splitlines()[-1][:90]}")
    return set()


class Silent:
    """A server on 127.0.0.1 that accepts connections and never answers."""

    def __enter__(self):
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def __exit__(self, *exc):
        self.sock.close()


def slow_provider(root: Path, rng: random.Random) -> set[str]:
    import yaml

    text = (f"The payment gateway retries a declined card three times, then parks the invoice for finance "
            f"to review on Monday morning; note {rng.random()}")
    settings_path = root / "mem.yaml"
    before = settings_path.read_text()
    settings = yaml.safe_load(before)
    with Silent() as base_url:
        settings["provider"] = {"name": "openai-compatible", "base_url": base_url, "model": "any",
                                "timeout_seconds": 60, "max_retries": 0}
        settings_path.write_text(yaml.safe_dump(settings, sort_keys=False))
        writer = subprocess.Popen([sys.executable, "-m", "memcli", "add", text],
                                  env={**os.environ, "MEM_DIR": str(root)}, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(2.0, 5.0))  # the add now waits on the server (60 s)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    settings_path.write_text(before)
    expect(root, stored=[text])
    return set()


def llama_timeout(root: Path, rng: random.Random) -> set[str]:
    settings_path = root / "mem.yaml"
    lines = [line for line in settings_path.read_text().splitlines() if not line.startswith("compress_timeout_s:")]
    settings_path.write_text("\n".join([*lines, "compress_timeout_s: 0.5"]) + "\n")
    words = "the service retries requests with exponential backoff when the upstream gateway returns errors".split()
    notes = []
    for run in range(3):
        note = " ".join(rng.choice(words) for _ in range(3000)) + f" run {rng.random()}"
        done = mem(root, "add", "-", stdin=note.encode())
        if done.returncode != 0:
            CRASHES.append(f"add with a timeout: exit {done.returncode}")
        elif b"timeout after 0.5s" not in done.stderr:
            FIRST_NOTES.append("a compression did not time out: nothing measured")
        notes.append(note)
    expect(root, stored=notes)
    return set()


# -- issue 49: the work queue; a session through `mem hook`, a fault, then `mem capture drain` -----------

def hook(root: Path, payload: dict) -> None:
    env = {**os.environ, **CODE_ENV, "MEM_DIR": str(root), "MEM_CAPTURE_DRAIN": "0"}
    done = subprocess.run([sys.executable, "-m", "memcli", "hook"], input=json.dumps(payload).encode(), env=env,
                          capture_output=True, timeout=TIME_LIMIT_S)
    if done.returncode != 0:
        CRASHES.append(f"hook: exit {done.returncode}")


def event(root: Path, sid: str, name: str, **fields) -> dict:
    return {"session_id": sid, "cwd": str(root.parent), "hook_event_name": name, **fields}


def bash(root: Path, sid: str, n: int, command: str, output: str) -> dict:
    return event(root, sid, "PostToolUse", tool_name="Bash", tool_use_id=f"{sid}-b{n}",
                 tool_input={"command": command}, tool_response={"stdout": output, "stderr": ""})


def edit(root: Path, sid: str, n: int, path: str, old: str, new: str) -> dict:
    return event(root, sid, "PostToolUse", tool_name="Edit", tool_use_id=f"{sid}-e{n}",
                 tool_input={"file_path": str(root.parent / path), "old_string": old, "new_string": new},
                 tool_response={"success": True})


def session(root: Path, sid: str, rng: random.Random, *extra: dict) -> list[str]:
    """A prompt, two test runs, an edit, extra events, the answer: sent; the observations' first lines."""
    tag = f"{rng.random():.6f}"
    events = [event(root, sid, "UserPromptSubmit", prompt=f"make the parser accept empty input {tag}"),
              bash(root, sid, 1, f"pytest -q -k parser_{tag}", "FAILED tests/test_parser.py::test_empty\n1 failed"),
              edit(root, sid, 1, "src/parser.py", "if not s:\n", f"if s is None:  # {tag}\n"),
              bash(root, sid, 2, f"pytest -q -k all_{tag}", "3 passed"), *extra,
              event(root, sid, "Stop", last_assistant_message=f"The parser returns an empty list {tag}.")]
    for payload in events:
        hook(root, payload)
    return [f"Bash: ran `pytest -q -k parser_{tag}`", "Edit: changed src/parser.py",
            f"Bash: ran `pytest -q -k all_{tag}`"]


def thread_turns(root: Path) -> int:
    threads = json.loads(mem(root, "thread", "ls", "--json").stdout or b"[]")
    return sum(thread["messages"] for thread in threads)


def capture_expect(root: Path, observations: list[str], turns: int, lines: dict[str, int] | None = None) -> None:
    expect(root, once=[*observations, "Coding session "], turns=turns, lines=lines or {})


def capture_over_limit(root: Path, rng: random.Random) -> set[str]:
    with open(root / "mem.yaml", "a") as settings:
        settings.write("max_input_bytes: 2000\n")
    big = bash(root, "s1", 9, "make build", "x" * 3000 + "\nbuild failed")
    first_lines = session(root, "s1", rng, big)
    mem(root, "capture", "drain")
    capture_expect(root, first_lines, 2)
    settings = (root / "mem.yaml").read_text().replace("max_input_bytes: 2000\n", "")
    (root / "mem.yaml").write_text(settings)
    return set()


def capture_thread_removed(root: Path, rng: random.Random) -> set[str]:
    first = session(root, "s1", rng)
    mem(root, "capture", "drain")
    for thread in json.loads(mem(root, "thread", "ls", "--json").stdout):
        mem(root, "thread", "rm", thread["id"], "-y")
    hook(root, event(root, "s1", "UserPromptSubmit", prompt="now update the docs"))
    hook(root, bash(root, "s1", 7, "make docs", "built"))
    mem(root, "capture", "drain")
    capture_expect(root, [*first, "Bash: ran `make docs`"], 1)
    return set()


def capture_key_like_line(root: Path, rng: random.Random) -> set[str]:
    doc = "Delete the block that starts with\n--- BEGIN RSA PRIVATE KEY ---\nfrom the file.\n"
    first = session(root, "s1", rng, edit(root, "s1", 5, "docs/keys.md", doc, "Run `make rotate`.\n"))
    mem(root, "capture", "drain")
    capture_expect(root, [*first, "Edit: changed docs/keys.md"], 2)
    return set()


def capture_many_edits(root: Path, rng: random.Random) -> set[str]:
    line = "value = '" + "x" * 900 + "'\n"
    edits = [edit(root, "s1", 100 + n, "src/big.py", f"a{n} = {line}", f"b{n} = {line}") for n in range(60)]
    first = session(root, "s1", rng, *edits)
    mem(root, "capture", "drain")
    capture_expect(root, first, 2, lines={f"\n+b{n} = ": 1 for n in range(60)})
    return set()


def capture_killed_drain(root: Path, rng: random.Random) -> set[str]:
    first = session(root, "s1", rng)
    drain = subprocess.Popen([sys.executable, "-m", "memcli", "capture", "drain"],
                             env={**os.environ, **CODE_ENV, "MEM_DIR": str(root)}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(rng.uniform(0.2, 3.0))
    os.killpg(drain.pid, signal.SIGKILL)
    drain.wait()
    mem(root, "capture", "drain")
    capture_expect(root, first, 2)
    return set()


CAPTURE_KINDS = {
    "capture: observation over the limit": capture_over_limit,
    "capture: thread rm of a session": capture_thread_removed,
    "capture: edit of a key-like line": capture_key_like_line,
    "capture: 60 edits of one file": capture_many_edits,
}


NEW_KINDS = {
    "full disk": full_disk,
    "slow provider, add killed": slow_provider,
    "timeout while llama.cpp runs": llama_timeout,
}
CLEANUPS: list = []  # what a damage left to undo after the commands (a mount)
FIRST_NOTES: list[str] = []  # what a damage itself saw, printed with its row
CRASHES: list[str] = []  # crashes of a command the damage itself ran
ESCAPES: list[str] = []  # what a damage saw change outside the store (bench/hostile_links.py)


# -- running --------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=4, help="kill -9 runs per writer")
    parser.add_argument("--only", default="", help="only kinds whose name contains this")
    parser.add_argument("--code", type=Path, help="run the mem of another checkout (its memcli on PYTHONPATH)")
    args = parser.parse_args()
    if args.code:
        CODE_ENV.update(PYTHONPATH=str(args.code.resolve()), PYTHONSAFEPATH="1")
    rng = random.Random(13)
    kinds = dict(KINDS)
    for name in WRITERS:
        for run in range(args.kills):
            kinds[f"kill -9 of {name} (run {run + 1})"] = kill_writer(name)
    for unlinks in (1, 2, 3):
        kinds[f"kill -9 of rm of a chain, unlink {unlinks}"] = killed_rm_of_a_chain(unlinks)
    kinds.update(NEW_KINDS)
    kinds.update(CAPTURE_KINDS)
    for run in range(args.kills):
        kinds[f"capture: kill -9 of the drain (run {run + 1})"] = capture_killed_drain
    kinds.update(hostile_kinds(CRASHES, mem))
    kinds.update(link_kinds(ESCAPES, hook, event, bash, mem))
    kinds = {name: damage for name, damage in kinds.items() if args.only in name}

    work = Path(tempfile.mkdtemp(prefix="mem-faults-"))
    try:
        base_root = work / "base"
        began = time.perf_counter()
        make_store(base_root, args.size)
        built = mem(base_root, "reindex", limit=None)
        if built.returncode != 0:
            raise SystemExit(f"could not build the base store: {built.stderr.decode()}")
        base = {}
        for line in mem(base_root, "export").stdout.decode().splitlines():
            record = json.loads(line)
            base[record["id"]] = record["raw"]
        print(f"base store: {len(base)} memories, built in {time.perf_counter() - began:.0f} s; "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'kind':<36} {'outcome':<10} {'lost':>4} {'wrong':>5}  note")
        totals = {"recovered": 0, "reported": 0, "crashed": 0}
        lost = wrong = outside = 0
        for name, damage in kinds.items():
            root = work / "run" / "store"
            shutil.rmtree(work / "run", ignore_errors=True)
            shutil.copytree(base_root, root, symlinks=True)
            outcome = Outcome()
            FIRST_NOTES.clear()
            CRASHES.clear()
            ESCAPES.clear()
            try:
                spared = damage(root, rng)
                after_damage(root, base, rng, outcome, spared)
            finally:
                while CLEANUPS:
                    CLEANUPS.pop()()
            outcome.crashed[:0] = CRASHES
            totals[outcome.verdict] += 1
            lost += outcome.lost
            wrong += outcome.wrong
            outside += bool(ESCAPES)
            note = (outcome.crashed or ESCAPES or FIRST_NOTES or outcome.reported or [""])[0]
            print(f"{name:<36} {outcome.verdict:<10} {outcome.lost:>4} {outcome.wrong:>5}  {note[:110]}", flush=True)
        print(f"\n{len(kinds)} kinds: {totals['recovered']} recovered, {totals['reported']} reported, "
              f"{totals['crashed']} crashed; {lost} memories lost; {wrong} wrong first results; "
              f"{outside} kinds changed something outside the store; "
              f"load average {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
