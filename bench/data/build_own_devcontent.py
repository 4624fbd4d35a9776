"""Builds bench/data/own_devcontent.jsonl: developer content from a public repository mem was never
tuned on (bench/data/SOURCES.md), with questions whose answers are exact spans of the raw, made by
rule from what the tools printed (so nobody picked them to suit the method).

    python bench/data/build_own_devcontent.py CLONE   # a clone of pallets/itsdangerous at 672971d66a2e

Kinds: diff (`git show --stat -p` of ten commits), commit_note (`git log -1 --format=%B` of commits
with a body), test_output (pytest on the clone with one injected bug each), traceback (small scripts
that misuse the library), log (`git clone -v --progress` of the clone).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "own_devcontent.jsonl"


def sh(*args, cwd=None, env=None) -> str:
    run = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    return run.stdout + run.stderr


def item(kind, n, raw, questions, command):
    questions = [q for q in questions if q["answer"] and (q["answer"].lower() in raw.lower())]
    return {"id": f"own-{kind}-{n:03d}", "kind": kind, "source": {"repo": "pallets/itsdangerous", "command": command},
            "raw": raw, "questions": questions, "split": "own"}


def diffs(clone):
    commits = sh("git", "log", "--no-merges", "--format=%H", cwd=clone).split()
    found = []
    for sha in commits[::25]:
        raw = sh("git", "show", "--stat", "-p", sha, cwd=clone)
        if not 1500 <= len(raw) <= 9000 or len(found) >= 10:
            continue
        total = re.search(r"^ (\d+) files? changed.*$", raw, re.M)
        author = re.search(r"^Author: (.+?) <", raw, re.M)
        hunks = re.findall(r"^@@ [^@]+ @@ (?:def |class )?(\w+)", raw, re.M)
        files = re.findall(r"^\+\+\+ b/(\S+)", raw, re.M)
        qs = [{"q": "Who authored this commit?", "answer": author.group(1) if author else ""}]
        if total:
            qs.append({"q": "How many files were changed?", "answer": total.group(1), "evidence": total.group(0).strip()})
        if hunks:
            qs.append({"q": "Which function or class does the first hunk header name?", "answer": hunks[0]})
        if files:
            qs.append({"q": "Which file is changed last?", "answer": files[-1]})
        found.append(item("diff", len(found) + 1, raw, qs, f"git show --stat -p {sha}"))
    return found


def notes(clone):
    found = []
    for sha in sh("git", "log", "--no-merges", "--format=%H", cwd=clone).split():
        raw = sh("git", "log", "-1", "--format=%B", sha, cwd=clone).strip() + "\n"
        body = raw.split("\n", 1)[1].strip() if "\n" in raw else ""
        if len(body) < 120 or len(found) >= 10:
            continue
        qs = [{"q": "What is the subject of the commit?", "answer": raw.split("\n", 1)[0]}]
        qs += [{"q": "Which issue or pull request is referenced?", "answer": ref} for ref in re.findall(r"#\d+", raw)[:2]]
        qs += [{"q": "Which name in backquotes does it mention?", "answer": name}
               for name in re.findall(r"``?([\w.]+)``?", body)[:2]]
        found.append(item("commit_note", len(found) + 1, raw, qs, f"git log -1 --format=%B {sha}"))
    return found


BUGS = [  # (file, old, new)
    ("src/itsdangerous/encoding.py", 'return base64.urlsafe_b64encode(string).rstrip(b"=")',
     'return base64.urlsafe_b64encode(string).rstrip(b"=") + b"x"'),
    ("src/itsdangerous/signer.py", "return hmac.compare_digest(sig, self.get_signature(key, value))",
     "return not hmac.compare_digest(sig, self.get_signature(key, value))"),
    ("src/itsdangerous/_json.py", 'kwargs.setdefault("separators", (",", ":"))',
     'kwargs.setdefault("separators", (", ", ": "))'),
    ("src/itsdangerous/signer.py", "return t.cast(bytes, self.digest_method(self.salt + secret_key).digest())",
     "return t.cast(bytes, self.digest_method(secret_key + self.salt).digest())"),
]


def tests(clone, python):
    found = []
    env = {**os.environ, "PYTHONPATH": str(Path(clone) / "src"), "COLUMNS": "100"}
    for n, (path, old, new) in enumerate(BUGS, 1):
        target = Path(clone) / path
        text = target.read_text()
        if old not in text:
            continue
        target.write_text(text.replace(old, new))
        try:
            command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_itsdangerous/test_signer.py",
                       "tests/test_itsdangerous/test_serializer.py", "tests/test_itsdangerous/test_encoding.py"]
            raw = sh(*command, cwd=clone, env=env)
        finally:
            target.write_text(text)
        summary = re.search(r"^=* ?(\d+) failed.*? in [\d.]+s", raw, re.M)
        failed = re.findall(r"^FAILED (\S+)", raw, re.M)
        where = re.findall(r"^(tests/\S+:\d+): ", raw, re.M)
        qs = [{"q": "How many tests failed?", "answer": summary.group(1) + " failed"}] if summary else []
        qs += [{"q": "Which test failed first?", "answer": failed[0]}] if failed else []
        qs += [{"q": "At which file and line did the first failure occur?", "answer": where[0]}] if where else []
        found.append(item("test_output", n, raw, qs, " ".join(command[1:]) + f"  (bug in {path})"))
    return found


SCRIPTS = [
    "from itsdangerous import URLSafeSerializer\nURLSafeSerializer('secret').loads('eyJ1c2VyIjo0Mn0.bad')\n",
    "from itsdangerous import TimestampSigner\nTimestampSigner('k').unsign(b'value.AAAA.BBBB', max_age=5)\n",
    "from itsdangerous import Signer\nSigner('k', digest_method='sha999').sign('x')\n",
    "import json\nfrom itsdangerous import Serializer\nSerializer('k').dumps({'when': object()})\n",
]


def tracebacks(clone, python):
    found = []
    env = {**os.environ, "PYTHONPATH": str(Path(clone) / "src")}
    for n, script in enumerate(SCRIPTS, 1):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False, dir=clone) as f:
            f.write(script)
        raw = sh(python, f.name, env=env)
        os.unlink(f.name)
        last = raw.strip().split("\n")[-1]
        frames = re.findall(r'File "[^"]+", line (\d+), in (\w+)', raw)
        qs = [{"q": "What was raised in the end?", "answer": last.split(":")[0]},
              {"q": "With which message?", "answer": last}]
        if frames:
            qs.append({"q": "Which function is the deepest frame?", "answer": frames[-1][1],
                       "evidence": f"line {frames[-1][0]}, in {frames[-1][1]}"})
        found.append(item("traceback", n, raw, qs, f"python script {n}"))
    return found


def logs(clone):
    with tempfile.TemporaryDirectory() as where:
        raw = sh("git", "clone", "-v", "--progress", "--no-local", f"file://{Path(clone).resolve()}", "copy", cwd=where)
    total = re.search(r"Total (\d+) \(delta (\d+)\)", raw)
    received = re.search(r"Receiving objects: 100% \((\d+)/\d+\), ([\d.]+ \w+)", raw)
    qs = []
    if total:
        qs.append({"q": "How many objects in total?", "answer": total.group(1), "evidence": total.group(0)})
    if received:
        qs.append({"q": "How much data was received?", "answer": received.group(2)})
    return [item("log", 1, raw, qs, "git clone -v --progress --no-local")]


def main() -> int:
    clone, python = sys.argv[1], sys.executable
    rows = diffs(clone) + notes(clone) + tests(clone, python) + tracebacks(clone, python) + logs(clone)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} items, {sum(len(r['questions']) for r in rows)} questions -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
