
"""`mem compress --pending` through a compression server against the same work in process.

Corpus: LoCoMo development summaries from ../shared/bench/locomo-dev (CC BY-NC 4.0, read-only, never
shipped): the session summaries, then each session's observations joined into one text, up to
--count memories. Two fresh stores get the same memories with `mem add --defer`; then, timed:
  in process - `mem compress --pending` with `compress_method: facts` on the local SmolLM2 (llama.cpp
               in the mem process; a rejected line falls back to prune, as always)
  server     - the same with `provider: llamacpp` pointing at llama-cpp-python's own server
               (`python -m llama_cpp.server`, started here on 127.0.0.1 with the same GGUF and
               threads); the mem process still loads the local model to count tokens and to prune
               when the server's line is rejected
Printed per arm: seconds per memory (wall time of the whole command, process start and model load
included, median of --runs runs), requests the server received (its access log), and the outcomes
(facts kept / pruned after a rejected line / pending). The ratio is server over in process, measured
in the same run; the load average is printed because 2 shared cores make absolute times drift.

    PYTHONPATH=. python bench/provider.py [--count 50] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
# ../shared beside the repository (a worktree one level deeper finds it one level further up)
LOCOMO = next((p / "shared" / "bench" / "locomo-dev" / "locomo-dev.json" for p in HERE.parents
               if (p / "shared" / "bench" / "locomo-dev").is_dir()), HERE.parent.parent / "shared")
sys.path.insert(0, str(HERE.parent / "tests" / "support"))

from llama_server import serve  # noqa: E402  (the tests' launcher for llama-cpp-python's server)

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def corpus(count: int) -> list[str]:
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    texts = [s for conversation in data for s in conversation["session_summary"].values()]
    for conversation in data:
        for session in conversation["observation"].values():
            texts.append(" ".join(o[0] for person in session.values() for o in person if isinstance(o, list)))
    return [t for t in texts if len(t) >= 400][:count]


def make_store(root: Path, texts: list[str], provider) -> None:
    """A store holding texts as pending memories (`mem add --defer`), set to compress with `facts`."""
    from memcli.core import writing
    from memcli.core.compressing import CompressOptions
    from memcli.core.mem import Mem

    mem = Mem.open(root)
    mem.ensure_store()
    settings = yaml.safe_load((root / "mem.yaml").read_text())
    settings.update(compress_method="facts", compress_timeout_s=900, provider=provider)
    (root / "mem.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    mem = Mem.open(root)
    for text in texts:
        writing.write(mem, writing.Text(text), compressing=CompressOptions(defer=True), allow_duplicate=True)


def compress_pending(root: Path) -> float:
    env = {**os.environ, "MEM_DIR": str(root)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memcli", "compress", "--pending"], env=env, capture_output=True)
    return time.perf_counter() - started


def outcomes(root: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in root.glob("memories/*/*/*.yaml"):
        info = yaml.safe_load(path.read_text()).get("compression") or {}
        key = info.get("status", "?")
        if key == "done":
            key = "facts kept" if info.get("method") == "facts" else "pruned after rejected facts"
        counts[key] = counts.get(key, 0) + 1
    return counts


def requests_in(log: Path) -> int:
    return sum(1 for line in log.read_text(errors="replace").splitlines() if "POST /v1/chat/completions" in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    models = Path(os.environ.get("MEM_MODELS_DIR") or Path.home() / ".cache" / "mem" / "models")
    texts = corpus(args.count)
    print(f"{len(texts)} memories, mean {statistics.mean(map(len, texts)):.0f} characters; "
          f"load average before: {os.getloadavg()[0]:.2f}")
    times: dict[str, list[float]] = {"in process": [], "server": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        log = tmp / "server.log"
        with serve(models / MODEL_FILE, log) as base_url:
            server = {"name": "llamacpp", "base_url": base_url, "model": "smollm2", "timeout_seconds": 600,
                      "max_per_minute": 100000}
            for run in range(args.runs):
                for arm, provider in (("in process", "local"), ("server", server)):
                    root = tmp / f"{arm.replace(' ', '-')}-{run}"
                    make_store(root, texts, provider)
                    before = requests_in(log)
                    seconds = compress_pending(root)
                    times[arm].append(seconds / len(texts))
                    print(f"run {run + 1} {arm:<10}: {seconds / len(texts):6.2f} s/memory, "
                          f"{requests_in(log) - before} requests to the server, {outcomes(root)}")
    inproc, remote = statistics.median(times["in process"]), statistics.median(times["server"])
    print(f"median s/memory: in process {inproc:.2f}, server {remote:.2f}, server / in process {remote / inproc:.2f}x; "
          f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
