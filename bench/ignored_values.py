"""What the values taken from ignored files (memcli.capture.ignored_values) cost ordinary output, and how
many of the secrets such files hold they catch.

    PYTHONPATH=. .venv/bin/python bench/ignored_values.py [--mirror /work/.mirror] [-v]

The projects are public repositories that committed their `.env` (bench/data/ignored_values_SOURCES.md
lists them and the commit read), fetched into --mirror. For each, the values `values_of` takes from its
`.env*` files that give values (`gives_values`: not a placeholder such as `.env.example`; a secret held
only there counts as missed), as a session in that folder would hold them, then:

- its own output: each other tracked text file (at most 256 KiB, 2000 files a project), as `cat` would
  show it: the lines the values change. A value whose key names a secret (PASS, SECRET, TOKEN, KEY, ...)
  found in a kept file is a catch there (a password also written in docker-compose.yml), any other is
  over-redaction;
- other projects' output: the `raw` of /work/shared/bench/devcontent/items.jsonl (224 real tool outputs)
  with the values of every project at once: the items changed;
- catch: of the non-empty values under a secret-naming key, the share `values_of` takes. -v lists each
  value missed and each line over-redacted, so a reader can judge them (placeholders such as `YOUR API KEY`
  are missed on purpose: they are common text). --every-value measures the same without the rule.

The first half of the projects (sorted) tuned the rule; the second half is reported apart, as held out.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

from memcli.capture import ignored_values
from memcli.capture.ignored_values import IgnoredValues, gives_values, values_of

PROJECTS = ["0-ALIK+checkin-tracker-api", "0-DuongDucHuy-0+E_commerce_BE", "0-Jester-0+docker-web-server",
            "0-codelife-0+laravel_cons", "0-don+next-hono-prisma", "0-lily-0+viajera_backend",
            "0-melkonyanma-0+docker-laravel-api", "0-nikesh+Sajilotantra-web-backend", "0-pulsaR+Auth-API",
            "0-zagar-0+booking-app", "00-gab+React-Stripe", "000-AZM+voting-app"]
SECRET_KEY = re.compile(r"(?i)pass|secret|token|key|private|cred|auth|salt")
ASSIGNED = re.compile(r"^\s*(?:export\s+)?([\w.-]+)\s*=\s*(.*)$")
ENV_FILE = re.compile(r"(^|/)\.env[^/]*$")
DEVCONTENT = Path("/work/shared/bench/devcontent/items.jsonl")
MAX_FILE, MAX_FILES = 256 * 1024, 2000


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout


def files_of(repo: Path) -> dict[str, str]:
    """Every tracked text file of the repository's HEAD (path: text), within the caps."""
    listed = git(repo, "ls-tree", "-r", "-l", "HEAD").decode("utf-8", "replace").splitlines()
    blobs = []
    for line in listed:
        meta, path = line.split("\t", 1)
        _, kind, sha, size = meta.split()
        if kind == "blob" and size.isdigit() and int(size) <= MAX_FILE:
            blobs.append((path, sha))
    texts = {}
    for path, sha in sorted(blobs)[:MAX_FILES * 2]:
        data = subprocess.run(["git", "-C", str(repo), "cat-file", "blob", sha], capture_output=True).stdout
        if b"\x00" not in data:
            texts[path] = data.decode("utf-8", "replace")
        if len(texts) >= MAX_FILES and not ENV_FILE.search(path):
            break
    return texts


def secret_values(text: str) -> list[str]:
    """The non-empty values under a key that names a secret, as the program reads them."""
    found = []
    for line in text.splitlines():
        assigned = ASSIGNED.match(line)
        if assigned and SECRET_KEY.search(assigned.group(1)):
            value = assigned.group(2).split(" #")[0].strip().strip("'\"")
            if value:
                found.append(value)
    return found


def _secret_shapes() -> tuple[int, list[str]]:
    """The secrets of bench/secret_shapes.py (one a line, or a block such as a PEM key), each written in an
    ignored file as a value (`KEY=VALUE`, a block as it is), then looked for in the text it came in: caught
    when no 8-character piece of it is left there."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from secret_shapes import positives

    total, missed = 0, []
    for group, rows in positives().items():
        for line, secret in rows:
            total += 1
            held = secret if "\n" in secret else f"GENERATED_{total}={secret}"
            out = IgnoredValues(values_of(held)).replaced(line)[0]
            if any(secret[i:i + 8] in out for i in range(0, max(1, len(secret) - 7)) if "\n" not in secret[i:i + 8]):
                missed.append(group)
    return total, missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", default="/work/.mirror")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--every-value", action="store_true",
                        help="take every non-empty value, without the rule (what the rule saves)")
    args = parser.parse_args()
    if args.every_value:
        ignored_values.hidden = lambda value: bool(value)
    half = len(PROJECTS) // 2
    every: set[str] = set()
    for part, projects in (("tuned on", PROJECTS[:half]), ("held out", PROJECTS[half:])):
        secrets = caught = files = changed_files = lines = over_lines = caught_lines = 0
        for project in projects:
            texts = files_of(Path(args.mirror) / project / "repo")
            envs = {path: text for path, text in texts.items() if ENV_FILE.search(path)}
            giving = [text for path, text in envs.items() if gives_values(Path(path).name, False)]
            values = set().union(*(values_of(text) for text in giving)) if giving else set()
            every |= values
            keyed = set().union(*(secret_values(text) for text in envs.values())) if envs else set()
            placeholders = keyed - set().union(*(secret_values(text) for text in giving)) if giving else keyed
            taken = {v for v in keyed if any(v in found or found in v for found in values)}
            secrets, caught = secrets + len(keyed), caught + len(taken)
            if args.verbose:
                for value in sorted(keyed - taken):
                    print(f"  {project}: missed {value!r}" + (" (only in a placeholder file)" if value in placeholders else ""))
            hide = IgnoredValues(values)
            for path, text in texts.items():
                if path in envs:
                    continue
                files += 1
                for line in text.splitlines():
                    lines += 1
                    if hide.replaced(line)[1]:
                        hit = [v for v in values if v in line]
                        if all(v in keyed or any(v in k for k in keyed) for v in hit):
                            caught_lines += 1
                        else:
                            over_lines += 1
                            if args.verbose:
                                print(f"  {project}: over-redacted in {path}: {line.strip()[:160]!r}")
                changed_files += any(v in text for v in values)
        print(f"{part} ({len(projects)} projects): secret-keyed values caught {caught}/{secrets}; own files "
              f"changed {changed_files}/{files}; lines with a secret value replaced {caught_lines}, lines "
              f"over-redacted {over_lines} of {lines}")
    shapes, missed = _secret_shapes()
    print(f"generated secret shapes (bench/secret_shapes.py positives) written as an ignored file: caught "
          f"{shapes - len(missed)}/{shapes}" + (f"; missed groups: {', '.join(sorted(set(missed)))}" if missed else ""))
    hide = IgnoredValues(every)
    items = [json.loads(line) for line in DEVCONTENT.open()]
    changed = [item["id"] for item in items if hide.replaced(item["raw"])[1]]
    print(f"devcontent raw with every project's values ({len(every)}): items changed {len(changed)}/{len(items)}"
          + (f" ({', '.join(changed)})" if changed else ""))


if __name__ == "__main__":
    main()
