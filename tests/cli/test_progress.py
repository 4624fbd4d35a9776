"""Progress as a user sees it: on a terminal, bars count the unit of work (chunks, memories) on stderr;
piped, nothing but the one-line summary.

The terminal tests run `mem` in a child process whose stderr is a real pseudo-terminal, with fake models
that take a moment per call so the work lasts past the bar's delay.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from helpers import add, ok, run, write_tree
from locations import ROOT, SUPPORT

CHILD = """
import sys, time
sys.path.insert(0, {tests!r})
import fakes

class Slow(fakes.FakeEmbedder):
    def embed(self, texts):
        time.sleep(0.15 * len(texts))
        return super().embed(texts)

class SlowCompressor(fakes.FakeCompressor):
    def __call__(self, raw, **kw):
        time.sleep(0.3)
        return super().__call__(raw, **kw)

from memcli.cli import main
main(sys.argv[1:], prog_name="mem", obj=fakes.providers(compressor=SlowCompressor(), embedder=Slow()))
"""


def on_a_terminal(*args, input: str | None = None) -> tuple[int, str, str]:
    """Run `mem ARGS` with stderr on a pseudo-terminal: (exit code, stdout, what the terminal showed)."""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=str(SUPPORT)), *map(str, args)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    out, _ = child.communicate(input.encode() if input else None, timeout=120)
    shown = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal is closed once the child is gone and everything is read
            break
        if not data:
            break
        shown += data
    os.close(master)
    return child.returncode, out.decode(), shown.decode(errors="replace")


def text_of(n_paragraphs: int) -> str:
    return "\n\n".join(f"## Part {i}\n\n" + f"Paragraph {i} says something about deploys. " * 30
                       for i in range(n_paragraphs))


def test_ingest_counts_chunks_on_a_terminal(tmp_path):
    write_tree(tmp_path / "docs", {"big.md": text_of(12), "small.md": "one short note"})
    code, _, shown = on_a_terminal("ingest", tmp_path / "docs", "--defer")
    assert code == 0, shown
    assert "ingesting chunks" in shown and "/13" in shown  # 12 chunks of one file and 1 of the other
    assert "chunks: 13 added" in shown


def test_compress_pending_and_import_count_memories(tmp_path):
    texts = [f"Memory {n}: " + "the nightly deploy window stays at two in the morning because traffic is low. " * 6
             for n in range(4)]
    for text in texts:
        ok("add", text, "--defer")
    code, _, shown = on_a_terminal("compress", "--pending")
    assert code == 0 and "compressing memories" in shown and "/4" in shown
    assert "compressed 4 memories: 4 done" in shown
    exported = ok("export").stdout
    code, _, shown = on_a_terminal("--dir", tmp_path / "copy", "import", "--no-compress", input=exported)
    assert code == 0 and "importing memories" in shown and "/4" in shown and "imported 4" in shown


def test_a_long_add_shows_that_it_is_compressing():
    long_text = "the scraper rotates its proxies every hour because Amazon blocks busy addresses. " * 8
    code, out, shown = on_a_terminal("add", long_text)
    assert code == 0 and len(out.strip()) == 26
    assert "compressing memories" in shown and "0/1" in shown
    assert "mem: compressed" in shown and "tokens" in shown


def test_no_bars_when_stderr_is_not_a_terminal(tmp_path):
    write_tree(tmp_path / "docs", {"big.md": text_of(12)})
    result = ok("ingest", tmp_path / "docs")
    assert "ingesting" not in result.stderr and "%" not in result.stderr
    summary, pending = result.stderr.strip().splitlines()[-2:]
    assert summary.startswith("mem: 1 path: 1 file read") and pending.endswith("run `mem compress --pending`")
    add("x " * 300, "--defer")
    # the 12 chunks ingest queued, and the deferred add
    assert run("compress", "--pending").stderr.strip() == "mem: compressed 13 memories: 13 done"
