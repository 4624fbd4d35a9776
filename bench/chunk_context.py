"""What an ingested chunk tells a reader about where it comes from: the chunker now against the chunker of
a baseline commit, in the same run, on the markdown files of this repository (README.md, docs/*.md).

    .venv/bin/python bench/chunk_context.py [--baseline 0a9a923] [--sizes 600,1500]

For each chunk size it prints, for both chunkers: the chunks; the chunks that start in the middle of a
section (under a heading, not opening with one) with no heading path (the baseline never gives one;
`mem ingest` now starts such a chunk with it); and the fenced code blocks whose first chunk does not
hold the sentence just before the fence (the one saying what the code is for).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memcli.features.ingest import chunk as now  # noqa: E402

FENCE = re.compile(r"^ {0,3}```", re.MULTILINE)
HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)", re.MULTILINE)


def baseline(commit: str):
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:memcli/features/ingest/chunk.py"],
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "chunk_baseline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("chunk_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def intros(text: str) -> list[tuple[int, str]]:
    """(offset of the fence, the last sentence of text before it) of every opening fence."""
    found, opened = [], False
    for m in FENCE.finditer(text):
        if not opened:
            line = text[:m.start()].rstrip().rsplit("\n", 1)[-1].strip()
            before = re.split(r"(?<=[.!?])\s+", line)[-1]
            if before and not before.startswith("```"):
                found.append((m.start(), before))
        opened = not opened
    return found


def measure(text: str, chunks: list[str], paths: list[tuple] | None) -> tuple[int, int, int]:
    """(chunks, mid-section chunks without a heading path, code blocks parted from their introduction)."""
    mid = 0
    offset = 0
    first_heading = HEADING.search(text)
    for n, chunk in enumerate(chunks):
        at = text.index(chunk, offset)
        offset = at + len(chunk)
        under = first_heading is not None and first_heading.start() < at
        if under and not HEADING.match(chunk) and not (paths and paths[n][0]):
            mid += 1
    parted = 0
    for fence, before in intros(text):
        opening = text[fence:fence + 12].strip()
        holder = next((c for c in chunks if opening in c and before in c), None)
        if holder is None:
            parted += 1
    return len(chunks), mid, parted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="0a9a923")
    parser.add_argument("--sizes", default="600,1500")
    args = parser.parse_args()
    old = baseline(args.baseline)
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    texts = [f.read_text(encoding="utf-8") for f in files]
    blocks = sum(len(intros(t)) for t in texts)
    print(f"{len(files)} markdown files, {sum(map(len, texts))} characters, {blocks} code blocks after text")
    print("size  chunker    chunks  mid-section without heading path  code parted from its introduction")
    for size in (int(s) for s in args.sizes.split(",")):
        for name, module in ((f"{args.baseline:<9}", old), ("now      ", now)):
            totals = [0, 0, 0]
            for text in texts:
                if module is now:
                    found = now.sections(text, size)
                    chunks, paths = [c for _, c in found], found
                else:
                    chunks, paths = module.split(text, size), None
                for i, value in enumerate(measure(text, chunks, paths)):
                    totals[i] += value
            print(f"{size:<5} {name}  {totals[0]:>6}  {totals[1]:>32}  {totals[2]:>32}")


if __name__ == "__main__":
    main()
