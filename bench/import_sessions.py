"""`mem import --from claude-code` of a synthetic month of sessions, against `mem import` of the same text
as plain memories, in one run (issue 56).

The month: SESSIONS Claude Code transcripts (100 by default, about 52 MB), written in the format of the
real one in tests/capture/fixtures/transcripts: per turn a prompt, Read (the file twice, as
Claude Code keeps it: numbered lines for the model and the file in toolUseResult), Edit (with the whole
original file, as toolUseResult holds it), Bash (a test run, some failing), Grep, and the answer. Texts
are made of a fixed vocabulary by a seeded generator, so every run reads the same month.

Both imports run in a fresh store as a new `mem` process with compression queued (`--from` always
queues it; the plain import gets `--defer`), so the time is reading, redacting, queueing and storing,
not the compression model. The plain records are the texts the hooks would keep of the same events
(the prompt, the command and its output, the file read, the edit's new text, the answer), one memory
each.

    .venv/bin/python bench/import_sessions.py                   # 100 sessions, ~52 MB
    .venv/bin/python bench/import_sessions.py --sessions 25     # a quarter: peak memory should not follow

Prints: transcript size, events, what was stored, wall time of each import and their ratio, and each
process's peak RSS (from wait4).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("parser token cache request handler session config module error retry buffer index schema query "
         "client server socket timeout value result branch commit review lint format test build deploy").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def source_file(rng: random.Random, lines: int) -> str:
    return "".join(f"def {rng.choice(WORDS)}_{i}(x):\n    return x + {rng.randint(0, 99)}  # {sentence(rng, 6)}\n"
                   for i in range(lines // 2))


class Month:
    """Writes the transcripts, and the plain records of the same texts."""

    def __init__(self, root: Path, project: str, sessions: int, seed: int = 56):
        self.rng, self.project = random.Random(seed), project
        self.folder = root / "claude" / "projects" / "".join(c if c.isalnum() else "-" for c in project)
        self.folder.mkdir(parents=True)
        self.plain = root / "plain.jsonl"
        self.sessions, self.events = sessions, 0

    def write(self) -> None:
        start = time.mktime((2026, 11, 1, 9, 0, 0, 0, 0, 0))
        with self.plain.open("w") as plain:
            for n in range(self.sessions):
                sid = f"5e55{n:04d}-0000-4000-8000-{n:012d}"
                with (self.folder / f"{sid}.jsonl").open("w") as out:
                    self._session(out, plain, sid, start + n * 6.5 * 3600)

    def _session(self, out, plain, sid: str, at: float) -> None:
        rng, uid = self.rng, iter(range(10**9))

        def line(kind: str, message: dict, **extra) -> None:
            nonlocal at
            at += rng.uniform(1, 20)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at * 1000) % 1000:03d}Z"
            out.write(json.dumps({"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": self.project,
                                  "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": kind,
                                  "message": message, "uuid": f"{sid[:8]}-{next(uid):08d}", "timestamp": stamp,
                                  **extra}) + "\n")

        def keep(text: str, tags: list[str]) -> None:
            plain.write(json.dumps({"raw": text, "tags": tags, "source": f"plain/{sid}"}) + "\n")
            self.events += 1

        def tool(name: str, tool_input: dict, result, content: str, error: bool = False) -> None:
            tid = f"toolu_{sid[:8]}{next(uid):010d}"
            line("assistant", {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": tool_input}]})
            block = {"type": "tool_result", "tool_use_id": tid, "content": content, **({"is_error": True} if error else {})}
            line("user", {"role": "user", "content": [block]}, toolUseResult=result)

        for turn in range(rng.randint(8, 13)):
            prompt = sentence(rng, rng.randint(8, 30))
            line("user", {"role": "user", "content": prompt})
            keep(prompt, ["prompt"])
            for _ in range(rng.randint(1, 3)):
                path = f"{self.project}/src/{rng.choice(WORDS)}_{rng.randint(0, 40)}.py"
                text = source_file(rng, rng.randint(60, 220))
                numbered = "".join(f"{i + 1:6}\u2192{t}\n" for i, t in enumerate(text.splitlines()))
                tool("Read", {"file_path": path}, {"type": "text", "file": {"filePath": path, "content": text}}, numbered)
                keep(f"Read {path}\n{text}", ["read"])
                old, new = text.splitlines()[1], f"    return x * {rng.randint(2, 9)}"
                tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                     {"filePath": path, "oldString": old, "newString": new, "originalFile": text,
                      "structuredPatch": [{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1,
                                           "lines": [f"-{old}", f"+{new}"]}]}, f"The file {path} has been updated.")
                keep(f"Edit {path}\n-{old}\n+{new}", ["edit"])
            failed = rng.random() < 0.3
            output = "".join(f"tests/test_{rng.choice(WORDS)}.py::test_{i} PASSED\n" for i in range(rng.randint(20, 80)))
            output += "1 failed, 40 passed in 1.2s\n" if failed else "41 passed in 1.1s\n"
            if failed:
                tool("Bash", {"command": "pytest -q"}, f"Error: Exit code 1\n{output}", f"Exit code 1\n{output}", error=True)
            else:
                tool("Bash", {"command": "pytest -q"}, {"stdout": output, "stderr": "", "interrupted": False}, output)
            keep(f"pytest -q\n{output}", ["bash"])
            tool("Grep", {"pattern": rng.choice(WORDS)}, {"mode": "files_with_matches", "filenames": [path], "numFiles": 1}, path)
            keep(f"grep {path}", ["grep"])
            answer = " ".join(sentence(rng, rng.randint(8, 20)) for _ in range(rng.randint(2, 6)))
            line("assistant", {"role": "assistant", "content": [{"type": "text", "text": answer}]})
            keep(answer, ["answer"])


def timed(command: list[str], env: dict, cwd: Path) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in MB, stderr) of one `mem` process."""
    began = time.perf_counter()
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{stderr}")
    return time.perf_counter() - began, usage.ru_maxrss // 1024, stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    mem = [sys.executable, "-m", "memcli"]
    with tempfile.TemporaryDirectory(prefix="mem-import-bench-") as tmp:
        root = Path(tmp)
        project = root / "calc"
        (project / ".git").mkdir(parents=True)
        month = Month(root, str(project), args.sessions)
        month.write()
        size = sum(p.stat().st_size for p in month.folder.glob("*.jsonl"))
        plain_size = month.plain.stat().st_size
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(root / "claude"), "MEM_CAPTURE_DRAIN": "0",
               "MEM_BACKGROUND": "0", "MEM_CONFIG_DIR": str(root / "config")}
        env.pop("MEM_DIR", None)
        subprocess.run([*mem, "init", ".mem"], env=env, cwd=project, check=True, capture_output=True)
        plain_env = {**env, "MEM_DIR": str(root / "plain-store")}
        subprocess.run([*mem, "init"], env=plain_env, cwd=root, check=True, capture_output=True)

        print(f"month: {args.sessions} sessions, {size / 1e6:.1f} MB of transcripts; plain records: "
              f"{month.events} texts, {plain_size / 1e6:.1f} MB")
        t_from, rss_from, said = timed([*mem, "import", "--from", "claude-code"], env, project)
        print(f"mem import --from claude-code: {t_from:.1f} s, peak RSS {rss_from} MB")
        print("  " + said.strip().replace("\n", "\n  "))
        t_plain, rss_plain, said = timed([*mem, "import", "--defer", str(month.plain)], plain_env, root)
        print(f"mem import --defer (plain memories): {t_plain:.1f} s, peak RSS {rss_plain} MB")
        print("  " + said.strip().replace("\n", "\n  "))
        print(f"ratio --from / plain: {t_from / t_plain:.2f}")


if __name__ == "__main__":
    main()
