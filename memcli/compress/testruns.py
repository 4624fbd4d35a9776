"""A test run made short: its summary, and for each failure its test, its error and where it was raised.

People ask of a test run how many passed and failed, which tests failed, with what error at which
file:line, which warnings came and which versions ran it. So the banners keep their titles without the
rulers, the session header stays, progress dots go, a failure's report keeps its `>` line, its `E`
lines and its `path:line:` lines (its source listing and captured output go), warnings keep their
location and message, summaries stay. A run of passing tests (`PASSED`, `ok`, `✓`, `--- PASS`) keeps
its first and last line and a count. pytest, unittest, go test, cargo test, jest and mocha print
these shapes.
"""

from __future__ import annotations

import re

from memcli.compress import repeats

_BANNER = re.compile(r"^([=_!-])\1{2,} (.+?) \1{3,}$")
_SPLIT = re.compile(r"^(?:_ ){3,}_?\s*$|^-{10,}\s*$|^={10,}\s*$")
_PROGRESS = re.compile(r"^(?:\S+\.py )?[.sxXfFE]+\s*(?:\[\s*\d+%\])?$")
_LOCATION = re.compile(r"^\S+:\d+:(?: |$)")
_SECTION = {"FAILURES": "failures", "ERRORS": "failures", "warnings summary": "warnings",
            "short test summary info": "summary", "test session starts": "header"}
_VERBOSE = re.compile(r"^(\S+::.*? (?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*?)\s+\[\s*\d+%\]$")
_NOISE = re.compile(r"^(?:=== (?:RUN|PAUSE|CONT)\s|\s*-- Docs: |cachedir: |collecting \.\.\. $)")
_FAILURE = re.compile(r"^(?:FAILED|ERROR|E )|\b(?:FAILED|FAIL|ERROR|failed|panicked)\b|[✗✕×]")
_FAIL_DETAIL = 12  # E lines and locations kept per failure


def compress(text: str) -> str:
    out: list[str] = []
    section, detail = None, 0
    for row in text.split("\n"):
        line = row.rstrip()
        banner = _BANNER.match(line)
        if banner:
            title = banner.group(2).strip()
            if banner.group(1) == "_":
                section, detail = "failure", 0
            elif title.startswith("Captured"):
                section = "captured"
                continue
            else:
                section = "durations" if title.startswith("slowest") else _SECTION.get(title, section)
            out.append(title)
            continue
        if not line.strip() or _SPLIT.match(line) or _PROGRESS.match(line) or _NOISE.match(line):
            continue
        if section == "captured":
            continue
        if section == "failure":
            if line.startswith(("E ", ">")) or _LOCATION.match(line):
                detail += 1
                if detail <= _FAIL_DETAIL:
                    out.append(line)
            continue
        verbose = _VERBOSE.match(line)
        out.append(verbose.group(1) if verbose else line)
    return "\n".join(repeats.collapse(out, keep=_FAILURE))


def protected(text: str) -> list[str]:
    """The summary lines and every failed test named in them: a short form keeps them."""
    keep = []
    for row in text.split("\n"):
        line = row.rstrip()
        banner = _BANNER.match(line)
        if banner and re.search(r"\b(?:passed|failed|error|errors)\b", banner.group(2)):
            keep.append(banner.group(2).strip())
        elif re.match(r"^(?:FAILED|ERROR) \S+", line):
            keep.append(line.split(" - ")[0])
    return keep
