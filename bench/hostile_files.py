"""Kinds of damage for bench/faults.py that a teammate's commit (or anyone who can push) brings: store
files from git are untrusted. A hand-made memory file and the YAML bombs (issue 13), and the kinds of
issue 53 (items 19 and 22):

  supersedes: every id      one memory file naming every memory of the store as a version it replaces
  forged cache, sorts last  a copy of the vector cache file with each record given the next record's
                            vector (valid CRCs, unit length), named to sort last; .index/ removed, as in
                            a fresh clone, so the vectors are taken from the cache
  1,200 tag filters         `mem ls` and `mem search` with 1,200 `-t` (the damage runs them itself)
  cache file is a FIFO      a FIFO (never written) among the cache files; .index/ removed. Before the fix
                            every command that reads the cache waits for ever (each is stopped at the time
                            limit, so an older checkout takes half an hour here: `--only "53 "` leaves it out)

Links to /dev/zero and /dev/stdin are left out: the first makes an older checkout read until memory runs
out (on a shared machine the OOM killer may pick another process), the second depends on what stdin the
bench has; tests/index/test_vector_cache.py covers both.
"""

from __future__ import annotations

import os
import random
import shutil
import zlib
from pathlib import Path

HEADER_SIZE = 8 + 16 + 4 + 4  # memcli/index/vector_cache.py: magic, model key, dimension, CRC
KEY_BYTES = 16


def new_file(content: str | bytes):
    """A hand-made file beside the others (no memory of the base store is replaced)."""
    def damage(root: Path, rng: random.Random) -> set[str]:
        path = root / "memories" / "2026" / "11" / "01JDQ4R8ZK3M5N7P9Q1S3T5V7X.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        return set()
    return damage


BOMB = "id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7X\nraw: lol\na: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
MERGE_BOMB = "id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7X\nraw: lol\nk0: &k0 {a0: 1, b0: 2}\n" + "".join(
    f"k{i}: &k{i} {{<<: [*k{i - 1}], x{i}: 1, y{i}: {{<<: *k{i - 1}}}}}\n" for i in range(1, 40))
HEAD = "id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7X\nraw: a hand-made memory\n"

def _ids(root: Path) -> list[str]:
    return sorted(path.stem for path in root.glob("memories/*/*/*.yaml"))


def replaces_every_id(root: Path, rng: random.Random) -> set[str]:
    path = root / "memories" / "2026" / "12" / "01JDQ4R8ZK3M5N7P9Q1S3T5V7Y.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7Y\ncreated_at: '2026-12-01T00:00:00Z'\n"
                    f"supersedes: [{', '.join(_ids(root))}]\nraw: nothing to see here\n")
    return set()


def _cache_files(root: Path) -> list[Path]:
    return sorted(root.glob("vectors/*/*.vec"))


def forged_cache(root: Path, rng: random.Random) -> set[str]:
    real = max(_cache_files(root), key=lambda path: path.stat().st_size)
    data = real.read_bytes()
    dim = int.from_bytes(data[24:28], "little")
    size = KEY_BYTES + 2 * dim + 4
    records = [data[n:n + size] for n in range(HEADER_SIZE, len(data) - size + 1, size)]
    out = bytearray(data[:HEADER_SIZE])
    for n, record in enumerate(records):
        body = record[:KEY_BYTES] + records[(n + 1) % len(records)][KEY_BYTES:KEY_BYTES + 2 * dim]
        out += body + zlib.crc32(body).to_bytes(4, "little")
    (real.parent / "9999-12-31-ffffffff.vec").write_bytes(bytes(out))
    shutil.rmtree(root / ".index")
    return set()


def fifo_in_cache(root: Path, rng: random.Random) -> set[str]:
    os.mkfifo(_cache_files(root)[0].parent / "9999-12-31-ffffffff.vec")
    shutil.rmtree(root / ".index")
    return set()


def many_tags(crashes: list[str], mem):
    """`mem` is bench/faults.py's: one `mem` process of the checkout under test."""
    def damage(root: Path, rng: random.Random) -> set[str]:
        tags = [arg for n in range(1200) for arg in ("-t", f"t{n}")]
        for command in (["ls"], ["search", "deploy", "--mode", "text"]):
            done = mem(root, *command, *tags)
            err = done.stderr.decode("utf-8", "replace")
            if done.returncode < 0 or "Traceback (most recent call last)" in err:
                crashes.append(f"mem {command[0]} with 1,200 tags: {err.strip()[-120:]}")
        return set()
    return damage


def hostile_kinds(crashes: list[str], mem) -> dict:
    return {
        "53 supersedes: every id": replaces_every_id,
        "53 forged cache, sorts last": forged_cache,
        "53 1,200 tag filters": many_tags(crashes, mem),
        "53b cache file is a FIFO": fifo_in_cache,
    }
