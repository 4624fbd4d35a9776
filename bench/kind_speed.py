"""What compression by kind costs a write: `mem add` of 5 KB of a diff and of a log against 5 KB of prose,
and the time to find a text's kinds.

Each `mem add` is a whole process (import, model load, compression, embedding, files) into a fresh
store, the three texts in turn, --runs times; medians, and each kind's ratio to prose in the same run.
Texts: a real diff and a real log of ../shared/bench/devcontent (cut at a line near 5 KB), and LoCoMo
session summaries joined to 5 KB. Detection: memcli.compress.kinds.detect on 16 KB of each, median of
200 calls.

    PYTHONPATH=. nice python bench/kind_speed.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpora import LOCOMO
from devcontent import SHARED

MEM = str(Path(sys.executable).with_name("mem"))


def cut(text: str, size: int) -> str:
    """The text up to the last line break before `size` characters."""
    return text if len(text) <= size else text[: text.rfind("\n", 0, size)]


def texts(size: int) -> dict[str, str]:
    items = [json.loads(line) for line in SHARED.read_text().splitlines()]
    diff = min((i for i in items if i["kind"] == "diff"), key=lambda i: abs(len(i["raw"]) - size))["raw"]
    log = max((i for i in items if i["kind"] == "log"), key=lambda i: min(len(i["raw"]), size))["raw"]
    summaries = [s for c in json.loads(LOCOMO.read_text()) for s in c["session_summary"].values()]
    return {"prose": cut("\n\n".join(summaries), size), "diff": cut(diff, size), "log": cut(log, size)}


def add_seconds(text: str) -> tuple[float, str]:
    import yaml

    with tempfile.TemporaryDirectory() as store:
        subprocess.run([MEM, "--dir", store, "init"], check=True, capture_output=True)
        started = time.perf_counter()
        done = subprocess.run([MEM, "--dir", store, "add", "-"], input=text, text=True, capture_output=True)
        seconds = time.perf_counter() - started
        paths = list(Path(store).glob("**/memories/**/*.yaml"))
        info = yaml.safe_load(paths[0].read_text()).get("compression") or {} if paths else {}
    exit_code = "" if done.returncode == 0 else f", exit {done.returncode}"
    return seconds, f"{info.get('kind')} {info.get('raw_tokens')}->{info.get('tokens')} {info.get('status')}{exit_code}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from memcli.compress.kinds import detect

    samples = texts(5000)
    seconds: dict[str, list[float]] = {k: [] for k in samples}
    what = {}
    for _ in range(args.runs):
        for kind, text in samples.items():
            took, what[kind] = add_seconds(text)
            seconds[kind].append(took)
    prose = statistics.median(seconds["prose"])
    for kind, values in seconds.items():
        print(f"mem add, {len(samples[kind])} chars of {kind:<5} ({what[kind]}): median {statistics.median(values):.2f}s "
              f"over {args.runs} runs, x{statistics.median(values) / prose:.2f} of prose")
    for kind, text in texts(16384).items():
        text = (text * 4)[:16384]
        calls = []
        for _ in range(200):
            started = time.perf_counter()
            detect(text)
            calls.append(time.perf_counter() - started)
        print(f"detect, 16 KB of {kind:<5}: median {statistics.median(calls) * 1000:.2f} ms, "
              f"max {max(calls) * 1000:.2f} ms over 200 calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
