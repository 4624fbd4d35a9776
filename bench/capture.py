"""Capture of a scripted coding session through `mem hook`, on a real repository (pallets/itsdangerous).

Three sessions, each event sent as Claude Code sends it: a new `mem hook` process with the JSON payload
on stdin. The tools' work is real: files are read and edited in a copy of the repository, and shell
commands (pytest failing then passing, git diff, grep, a missing linter) run there and their real output
goes into the payloads. The hook starts its detached drain as it would for a user (real models).

    .venv/bin/python bench/capture.py --repo /path/to/itsdangerous    # a checkout (672971d was used)
    .venv/bin/python bench/capture.py --repo ... --against /path/to/other/checkout   # both, one after the other

Prints: hook wall time p50/p95 against `python -c pass` of the same venv run right after each hook;
events -> stored / merged / skipped by reason; tokens stored against the raw tool output; tokens and
characters injected at the next SessionStart; the share of bench/data/capture_questions.json (written
before any tuning) answered by an exact span in that context alone, and with one memory search added.
"""

from __future__ import annotations

import argparse
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
BIN = Path(sys.executable).parent
MEM = [sys.executable, "-m", "memcli"]  # with PYTHONPATH naming the checkout whose memcli runs (code_env)
QUESTIONS = HERE / "data" / "capture_questions.json"


class Session:
    def __init__(self, run: "Run", sid: str):
        self.run, self.sid, self.calls = run, sid, 0

    def send(self, event: str, **fields) -> str:
        payload = {"session_id": self.sid, "transcript_path": f"/home/dev/.claude/projects/x/{self.sid}.jsonl",
                   "cwd": str(self.run.repo), "permission_mode": "default", "hook_event_name": event, **fields}
        return self.run.hook(payload)

    def tool(self, name: str, tool_input: dict, response, failed: bool = False) -> None:
        self.calls += 1
        fields = {"tool_name": name, "tool_input": tool_input, "tool_use_id": f"toolu_{self.sid}_{self.calls:03d}"}
        if failed:
            fields["error"] = response if isinstance(response, str) else json.dumps(response)
        else:
            fields["tool_response"] = response
        self.run.raw_output.append(response if isinstance(response, str) else json.dumps(response))
        self.send("PostToolUseFailure" if failed else "PostToolUse", **fields)

    # -- the tools, done for real in the repository ---------------------------------------------------

    def read(self, path: str) -> None:
        full = self.run.repo / path
        content = full.read_text()
        self.tool("Read", {"file_path": str(full)},
                  {"type": "text", "file": {"filePath": str(full), "content": content,
                                            "numLines": content.count("\n"), "startLine": 1}})

    def grep(self, pattern: str, where: str = "src") -> None:
        out = subprocess.run(["grep", "-rn", pattern, where], cwd=self.run.repo, capture_output=True, text=True).stdout
        self.tool("Grep", {"pattern": pattern, "path": where, "output_mode": "content"},
                  {"mode": "content", "content": out, "numLines": out.count("\n")})

    def bash(self, command: str) -> str:
        done = subprocess.run(command, shell=True, cwd=self.run.repo, capture_output=True, text=True,
                              env=self.run.tool_env)
        output = (done.stdout + done.stderr).strip()
        if done.returncode:
            self.tool("Bash", {"command": command}, f"Exit code {done.returncode}\n{output}", failed=True)
        else:
            self.tool("Bash", {"command": command, "description": command.split()[0]},
                      {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False, "isImage": False})
        return output

    def edit(self, path: str, old: str, new: str) -> None:
        full = self.run.repo / path
        text = full.read_text()
        assert old in text, (path, old)
        full.write_text(text.replace(old, new, 1))
        self.tool("Edit", {"file_path": str(full), "old_string": old, "new_string": new},
                  {"filePath": str(full), "oldString": old, "newString": new, "structuredPatch": []})

    def glob(self, pattern: str) -> None:
        found = sorted(str(p) for p in self.run.repo.glob(pattern))
        self.tool("Glob", {"pattern": pattern}, {"filenames": found, "numFiles": len(found)})

    def todo(self, *items: str) -> None:
        todos = [{"content": item, "status": "pending", "activeForm": item} for item in items]
        self.tool("TodoWrite", {"todos": todos}, {"oldTodos": [], "newTodos": todos})

    def prompt(self, text: str) -> None:
        self.send("UserPromptSubmit", prompt=text)

    def stop(self, message: str) -> None:
        self.send("Stop", stop_hook_active=False, last_assistant_message=message)


class Run:
    """The hooks of one bench run: `tool_env` is the environment the sessions' shell commands run in
    (by default this venv, with the repository's src/ importable); `timed`: the floor is measured
    after each hook (bench/session_recall.py, which measures no speed, turns it off)."""

    def __init__(self, repo: Path, store_env: dict, tool_env: dict | None = None, timed: bool = True):
        self.repo, self.env, self.timed = repo, store_env, timed
        self.tool_env = tool_env or {**os.environ, "PYTHONPATH": "src", "PATH": f"{BIN}:{os.environ['PATH']}"}
        self.walls: list[float] = []
        self.floor: list[float] = []
        self.raw_output: list[str] = []
        self.payloads: list[dict] = []
        self.events = 0

    def hook(self, payload: dict) -> str:
        start = time.perf_counter()
        done = subprocess.run([*MEM, "hook"], input=json.dumps(payload), capture_output=True, text=True, env=self.env)
        self.walls.append(time.perf_counter() - start)
        self.events += 1
        self.payloads.append(payload)
        if self.timed:
            self.floor.append(floor(1)[0])  # the floor right after each hook: both see the same load
        assert done.returncode == 0 and not done.stderr, done
        return done.stdout


SOURCES = ["src/itsdangerous/__init__.py", "src/itsdangerous/_json.py", "src/itsdangerous/encoding.py",
           "src/itsdangerous/exc.py", "src/itsdangerous/serializer.py", "src/itsdangerous/signer.py",
           "src/itsdangerous/timed.py", "src/itsdangerous/url_safe.py"]
TESTS = ["tests/test_itsdangerous/test_encoding.py", "tests/test_itsdangerous/test_serializer.py",
         "tests/test_itsdangerous/test_signer.py", "tests/test_itsdangerous/test_timed.py",
         "tests/test_itsdangerous/test_url_safe.py"]
DOCS = ["docs/concepts.rst", "docs/encoding.rst", "docs/exceptions.rst", "docs/index.rst", "docs/serializer.rst",
        "docs/signer.rst", "docs/timed.rst", "docs/url_safe.rst"]
SIGNER_TESTS = "pytest -q tests/test_itsdangerous/test_signer.py"
NEW_TEST = '''

def test_empty_secret_key():
    with pytest.raises(ValueError, match="The secret key must not be empty."):
        Signer("")
'''
ROTATION_TEST = '''

def test_newest_key_signs():
    """Of several keys, the newest key signs; the older ones only verify."""
    signed = Signer(["old", "new"]).sign("value")
    assert Signer("new").unsign(signed) == b"value"
'''


def session_one(s: Session) -> None:
    s.send("SessionStart", source="startup")
    s.prompt("Signer accepts an empty secret key and signs with it silently. Make it refuse an empty key "
             "with a clear error, and add a test.")
    s.todo("find where keys are made", "add the check", "add a test")
    s.bash("git status --short")
    s.bash("git log --oneline -3")
    s.glob("src/**/*.py")
    for path in SOURCES + TESTS + ["README.md", "pyproject.toml"]:
        s.read(path)
    for pattern in ("secret_key", "_make_keys_list", "def sign", "ValueError", "def want_bytes", "key_derivation",
                    "class Signer", "BadSignature", "digest_method", "default_salt"):
        s.grep(pattern)
    s.read("src/itsdangerous/signer.py")
    s.read("src/itsdangerous/signer.py")
    s.bash(SIGNER_TESTS)
    s.edit("tests/test_itsdangerous/test_signer.py", "\n\ndef test_abstract_algorithm():",
           NEW_TEST + "\n\ndef test_abstract_algorithm():")
    s.bash(SIGNER_TESTS)
    s.edit("src/itsdangerous/signer.py", "    if isinstance(secret_key, (str, bytes)):\n        return [want_bytes(secret_key)]",
           "    if isinstance(secret_key, (str, bytes)):\n        if not secret_key:\n"
           "            raise ValueError(\"empty secret key\")\n        return [want_bytes(secret_key)]")
    s.bash(SIGNER_TESTS)
    s.edit("src/itsdangerous/signer.py", 'raise ValueError("empty secret key")',
           'raise ValueError("The secret key must not be empty.")')
    s.bash(SIGNER_TESTS)
    s.bash("git diff --stat")
    s.bash("git diff")
    s.read("src/itsdangerous/signer.py")
    for path in DOCS:
        s.read(path)
    for pattern in ("secret_key", "Signer(", "sep="):
        s.grep(pattern, "docs")
    for pattern in ("def test_", "pytest.raises", "Signer(", "sign(", "unsign(", "loads(", "dumps(", "BadSignature",
                    "salt", "fixture"):
        s.grep(pattern, "tests")
    for path in SOURCES:
        s.read(path)
    s.stop('Signer now raises ValueError("The secret key must not be empty.") from _make_keys_list in '
           "src/itsdangerous/signer.py; test_empty_secret_key in tests/test_itsdangerous/test_signer.py covers it. "
           "We decided to raise ValueError rather than TypeError, since the type is right and the value is wrong. "
           "Still need to add a CHANGES.rst entry.")
    s.send("SessionEnd", reason="prompt_input_exit")


def session_two(s: Session) -> None:
    s.send("SessionStart", source="startup")
    s.prompt("Add the CHANGES.rst entry for the empty key check, and check that URLSafeSerializer passes the "
             "error through.")
    s.todo("changelog entry", "check the serializer")
    s.read("CHANGES.rst")
    s.edit("CHANGES.rst", "Version ", "Unreleased\n----------\n\n-   ``Signer`` raises a ValueError when the secret "
           "key is empty.\n\n\nVersion ")
    s.bash("git diff --stat")
    for path in ("src/itsdangerous/serializer.py", "src/itsdangerous/url_safe.py", "src/itsdangerous/timed.py"):
        s.read(path)
    for pattern in ("Signer(", "make_signer", "secret_keys", "signer_kwargs", "fallback_signers"):
        s.grep(pattern)
    s.bash("python -c \"from itsdangerous import URLSafeSerializer; URLSafeSerializer('').dumps(1)\"")
    for pattern in ("def loads", "def dumps", "BadPayload", "BadData", "base64", "json", "int_to_bytes",
                    "bytes_to_int", "max_age", "load_payload"):
        s.grep(pattern)
    for path in DOCS:
        s.read(path)
    s.bash("python -m flake8 src")
    s.prompt("Don't add flake8; the project lints with ruff through pre-commit.")
    s.bash("grep -n ruff .pre-commit-config.yaml")
    s.read(".pre-commit-config.yaml")
    s.bash("pytest -q -p no:cacheprovider tests/test_itsdangerous/test_serializer.py")
    s.bash("pytest -q -p no:cacheprovider tests")
    for path in TESTS:
        s.read(path)
    for pattern in ("freeze_time", "import pytest", "def test_"):
        s.grep(pattern, "tests")
    s.glob("tests/**/*.py")
    s.bash("git status --short")
    for pattern in ("class URLSafeSerializerMixin", "def load_payload", "zlib", "def base64_encode", "def base64_decode",
                    "class TimestampSigner", "def get_timestamp", "def timestamp_to_datetime", "SignatureExpired",
                    "BadTimeSignature", "default_fallback_signers", "is_text_serializer"):
        s.grep(pattern)
    s.send("PreCompact", trigger="auto", custom_instructions="")
    s.stop("URLSafeSerializer('') raises the same ValueError from Signer, so serializers need no change. "
           "We decided not to add flake8: the project lints with ruff through .pre-commit-config.yaml. "
           "Left open: the timed tests need freezegun, which is not installed here.")
    s.send("SessionEnd", reason="clear")


def session_three(s: Session) -> None:
    s.send("SessionStart", source="startup")
    s.prompt("Document the new error in docs/signer.rst, add a test that the newest key signs, and run the "
             "whole test suite.")
    s.todo("docs", "rotation test", "full suite")
    for path in ("docs/signer.rst", "docs/concepts.rst", "src/itsdangerous/signer.py"):
        s.read(path)
    s.edit("docs/signer.rst", ".. autoclass:: Signer", "An empty secret key raises a ValueError.\n\n"
           ".. autoclass:: Signer")
    s.edit("tests/test_itsdangerous/test_signer.py", "\n\ndef test_abstract_algorithm():",
           ROTATION_TEST + "\n\ndef test_abstract_algorithm():")
    s.bash(SIGNER_TESTS)
    s.bash("pytest -q -p no:cacheprovider tests")
    s.bash("pytest -q -p no:cacheprovider tests --ignore=tests/test_itsdangerous/test_timed.py "
           "--ignore=tests/test_itsdangerous/test_url_safe.py")
    for pattern in ("autoclass", "versionchanged", "secret"):
        s.grep(pattern, "docs")
    for path in SOURCES:
        s.read(path)
    for pattern in ("def unsign", "def validate", "def derive_key", "hmac", "compare_digest"):
        s.grep(pattern)
    for path in TESTS + DOCS:
        s.read(path)
    for pattern in ("def test_", "raises", "freezegun", "Signer(", "TimestampSigner", "Serializer("):
        s.grep(pattern, "tests")
    s.todo("check the docs build")
    for command in ("ls src/itsdangerous", "wc -l src/itsdangerous/*.py", "python --version", "git log --oneline",
                    "head -30 pyproject.toml"):
        s.bash(command)
    for path in SOURCES:
        s.read(path)
    s.bash("git diff --stat")
    s.bash("git diff docs")
    s.bash("python -c \"import itsdangerous; print(itsdangerous.__all__[:3])\"")
    s.stop("Documented the empty-key ValueError in docs/signer.rst and added test_newest_key_signs: of several "
           "keys the newest key signs. The full suite cannot run here: tests/test_itsdangerous/test_timed.py needs "
           "freezegun. Run the suite with pytest -q tests --ignore=tests/test_itsdangerous/test_timed.py "
           "--ignore=tests/test_itsdangerous/test_url_safe.py.")
    s.send("SessionEnd", reason="logout")


def floor(n: int) -> list[float]:
    walls = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"])
        walls.append(time.perf_counter() - start)
    return walls


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def wait_for_drain(env: dict, repo: Path) -> None:
    """Until the hook's detached runner is done and nothing waits (a drain by hand picks up any rest): no
    job file left in the work queue (or, for an older checkout, in its capture queue)."""
    waiting = [repo / ".mem" / ".queue" / "jobs", repo / ".mem" / ".capture" / "queue"]
    while True:
        done = subprocess.run([*MEM, "capture", "drain", "--json"], capture_output=True, text=True, env=env, cwd=repo)
        if done.returncode == 0 and not any(any(folder.glob("*.json")) for folder in waiting if folder.is_dir()):
            return
        time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a checkout of pallets/itsdangerous")
    parser.add_argument("--against", type=Path, help="another checkout of mem, run first, for the ratio")
    args = parser.parse_args()
    ratios = {}
    for code in ([args.against] if args.against else []) + [HERE.parent]:
        print(f"=== mem of {code}")
        ratios[code] = measure(args.repo, code)
    if args.against:
        before, after = ratios[args.against], ratios[HERE.parent]
        print(f"hook p50 against the floor: {after:.2f}x here, {before:.2f}x in {args.against}: "
              f"{after / before:.2f} of before")


def measure(source: Path, code: Path) -> float:
    """The whole bench with the memcli of checkout `code`; the hook's p50 as a multiple of the floor's."""
    work = Path(tempfile.mkdtemp(prefix="mem-capture-"))
    repo = work / "itsdangerous"
    shutil.copytree(source, repo, ignore=shutil.ignore_patterns(".git"))
    git = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "b@x"}
    env = {k: v for k, v in os.environ.items() if k not in ("MEM_DIR", "MEM_CAPTURE", "MEM_CAPTURE_DRAIN")}
    env.update(git, PYTHONPATH=str(code), PYTHONSAFEPATH="1")
    for command in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "itsdangerous 672971d"]):
        subprocess.run(command, cwd=repo, check=True, env=env)
    subprocess.run([*MEM, "init", str(repo / ".mem")], check=True, capture_output=True, env=env)
    (repo / ".gitignore").open("a").write(".mem/.capture/\n.mem/.queue/\n")

    run = Run(repo, env)
    for number, script in enumerate((session_one, session_two, session_three), 1):
        script(Session(run, f"sess{number}-{os.getpid()}"))
    floor_walls = run.floor[:]
    wait_for_drain(env, repo)
    status = json.loads(subprocess.run([*MEM, "status", "--json"], capture_output=True, text=True, env=env,
                                       cwd=repo).stdout)
    walls = run.walls[:]
    context = json.loads(Session(run, "sess4").send("SessionStart", source="startup") or "{}")
    injected = context.get("hookSpecificOutput", {}).get("additionalContext", "")

    sys.path.insert(0, str(HERE.parent))  # this checkout counts the tokens for both: the same tokenizer
    from memcli.core.mem import Mem
    from memcli.store.folder import Store

    mem = Mem(Store(repo / ".mem"))
    count = mem.token_counter()
    listed = [json.loads(line) for line in subprocess.run(
        [*MEM, "ls", "--tag", "observation", "--jsonl", "--with-raw", "-n", "100000"], capture_output=True,
        text=True, env=env, cwd=repo).stdout.splitlines()]
    stored_tokens = sum(count(m["content"]) for m in listed)
    stored_raw_tokens = sum(count(m.get("content_raw", m["content"])) for m in listed)
    raw_tokens = sum(count(text) for text in run.raw_output)

    questions = json.loads(QUESTIONS.read_text())["questions"]
    in_context = in_search = 0
    for item in questions:
        answer = item["answer"].lower()
        found = answer in injected.lower()
        in_context += found
        if not found:
            hits = subprocess.run([*MEM, "search", item["q"], "--json", "-k", "5"], capture_output=True, text=True,
                                  env=env, cwd=repo).stdout
            found = answer in " ".join(h["content"] for h in (json.loads(hits) if hits.strip() else [])).lower()
        in_search += found
        item["found"] = found

    base50, base95 = statistics.median(floor_walls), pct(floor_walls, 0.95)
    p50, p95 = statistics.median(walls), pct(walls, 0.95)
    counts = status["capture"]["counts"]
    print(f"repository: pallets/itsdangerous copy in {repo}")
    print(f"hook events: {run.events - 1} over 3 sessions (+1 SessionStart measured)")
    print(f"hook wall: p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms; python -c pass right after each hook: "
          f"p50 {base50 * 1000:.1f} ms, p95 {base95 * 1000:.1f} ms; ratio p50 {p50 / base50:.2f}x, "
          f"p95 {p95 / base95:.2f}x (of the floor's p95), {p95 / base50:.2f}x (of its p50)")
    print("drained: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if status["capture"]["errors"]:
        print("problems: " + json.dumps(status["capture"]["errors"]))
    print(f"observations: {len(listed)}; tokens stored {stored_tokens} (their raw {stored_raw_tokens}) "
          f"vs raw tool output {raw_tokens}: {stored_tokens / max(raw_tokens, 1):.1%}")
    print(f"injected at the next SessionStart: {count(injected)} tokens, {len(injected)} chars")
    print(f"questions: {len(questions)}; answered in the injected context alone {in_context}/{len(questions)} "
          f"({in_context / len(questions):.0%}); with one memory search (k=5) {in_search}/{len(questions)} "
          f"({in_search / len(questions):.0%})")
    for item in questions:
        if not item["found"]:
            print(f"  missed: {item['q']} -> {item['answer']}")
    print("--- injected context ---")
    print(injected)
    return p50 / base50


if __name__ == "__main__":
    main()
