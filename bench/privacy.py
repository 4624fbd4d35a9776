"""Times redaction, chunking and the .memignore walk, including inputs built to make regexes backtrack.

    PYTHONPATH=. .venv/bin/python bench/privacy.py [--runs 5] [--stars 2,4,8,24] [--no-store-patterns]

Each figure is the median over the runs. Text figures sit next to a baseline from the same run (one
`re.findall(r"\\S+")` pass over the same text), the walk next to `os.walk` over the same tree, so the
ratio shows what mem's own work costs. The adversarial inputs guard against quadratic regexes: each
should take about as long as plain text of its size. Store patterns (mem.yaml `redact`, on the `regex`
engine with a time bound) are timed beside the built-ins alone; `--no-store-patterns` leaves them out (for
an older checkout, where `(\w+\s*)+;` never ends). A `.memignore` line of N stars (`a*a*...*b`) is
decided against a 200-character name; an older checkout needs `--stars 2,3,4`.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import string
import tempfile
import time
from pathlib import Path

from memcli.features.ingest.chunk import split
from memcli.privacy.ignore import IgnoreRules
from memcli.privacy.redact import redact

WORDS = ("rate limit proxy queue deploy billing postgres redis cache retry backoff scraper token password secret "
         "review release branch merge budget context search index the a of to in is for on").split()


def prose(size: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    parts, total = [], 0
    while total < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))).capitalize() + ". "
        if rng.random() < 0.1:
            sentence += "\n\n## Section " + str(total) + "\n\n"
        parts.append(sentence)
        total += len(sentence)
    return "".join(parts)[:size]


def with_secrets(size: int) -> str:
    rng = random.Random(2)
    alnum = string.ascii_letters + string.digits
    body = prose(size)
    lines = body.split(". ")
    for i in range(0, len(lines), 20):
        token = "".join(rng.choice(alnum) for _ in range(36))
        lines[i] += f". export GITHUB_TOKEN={'gh' + 'p_'}{token} and password: {token[:12]}"
    return ". ".join(lines)[:size]


ADVERSARIAL = {
    "letters run": "a" * 500_000,
    "BEGIN PRIVATE KEY without END": ("-----BEGIN " + "PRIVATE KEY-----") * 20_000,
    "scheme with colons": "http://" + "a:" * 250_000,
    "assignment keys": "token=" * 80_000,
    "quoted backslashes": 'password: "' + "a\\" * 250_000,
    "eyJ repeated": "eyJ" * 160_000,
    "mysql repeated": "mysql " * 80_000,
    "long --flag": "--" + "-" * 480_000,
    "machine login repeated": "machine a login b " * 30_000,
    "curl -u repeated": "-u a:" * 100_000,
    "lower-case words": "word " * 100_000,
    "key body lines, END far below": ("A" * 64 + "\n") * 7_000 + "-----END RSA " + "PRIVATE KEY-----",
    "base64 lines of 76": ("QUtJ" * 19 + "\n") * 6_500,
    "name: without value": "- name: DB_PASSWORD\n  note: x\n" * 15_000,
    "commands without values": "docker login -u a redis-cli -h b openssl rsa net use \\\\x htpasswd -b " * 8_000,
    "code= repeated": "?code=" * 80_000,
}


STORE_PATTERNS = ({"name": "ticket", "regex": r"TICKET-\d{4,}"},
                  {"name": "clause", "regex": r"(\w+\s*)+;"})


def median_time(runs: int, fn) -> float:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def make_tree(root: Path, files: int) -> None:
    rng = random.Random(3)
    (root / ".memignore").write_text("*.log\nbuild/\n")
    for n in range(files):
        folder = root / f"d{n % 50}" / f"e{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.{rng.choice(['md', 'txt', 'log'])}").write_text("x")
        if n % 500 == 0:
            (folder / ".memignore").write_text("!keep.log\n*.txt\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--stars", default="2,4,8,24")
    parser.add_argument("--no-store-patterns", dest="store_patterns", action="store_false")
    args = parser.parse_args()

    print(f"{'input':34} {'chars':>9} {'baseline s':>11} {'redact s':>9} {'ratio':>6} {'chunk s':>8}")
    texts = {"prose 1 MB": prose(1_000_000), "prose with secrets 1 MB": with_secrets(1_000_000), **ADVERSARIAL}
    for name, text in texts.items():
        base = median_time(args.runs, lambda: re.findall(r"\S+", text))
        red = median_time(args.runs, lambda: redact(text))
        chunk = median_time(args.runs, lambda: split(text))
        print(f"{name:34} {len(text):9} {base:11.4f} {red:9.4f} {red / base:6.1f} {chunk:8.4f}")

    if args.store_patterns:
        text = texts["prose 1 MB"]
        alone = median_time(args.runs, lambda: redact(text))
        print(f"\nstore patterns on prose 1 MB (built-ins alone {alone:.4f} s):")
        for rule in STORE_PATTERNS:
            taken = median_time(args.runs, lambda: redact(text, [rule]))
            print(f"  {rule['regex']:30} {taken:9.4f} s (ratio {taken / alone:.2f})")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        name = root / ("a" * 199 + "c")
        name.write_text("x")
        print("\n.memignore line of N stars (a*a*...*b) against a 200-character name that it does not match:")
        for stars in [int(n) for n in args.stars.split(",")]:
            (root / ".memignore").write_text("a*" * stars + "b\n")
            rules = IgnoreRules.load(None, root)
            taken = median_time(args.runs, lambda: rules.match(name))
            print(f"  {stars:3} stars {taken:9.5f} s")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root, 10_000)
        base = median_time(args.runs, lambda: sum(len(f) for _, _, f in os.walk(root)))
        walked = median_time(args.runs, lambda: sum(1 for _ in IgnoreRules.load(None, root).walk()))
        print(f"\nwalk of 10,000 files: os.walk {base:.4f} s, IgnoreRules.walk {walked:.4f} s "
              f"(ratio {walked / base:.1f})")


if __name__ == "__main__":
    main()
