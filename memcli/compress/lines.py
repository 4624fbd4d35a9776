"""What single lines say about the text they stand in: the patterns memcli.compress.kinds decides by.

Each pattern is one a tool really prints (git, pytest, unittest, go test, cargo test, jest, mocha,
Python, Node, Java, Go and Rust tracebacks, pip, npm, apt, syslog) or one a person really writes
(sentences, markdown). Compiled once; every test is a match at the start of a line.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})(.*)$")
# Where one of the parts with a start of their own may begin (memcli.compress.kinds._region), tested
# first so that an ordinary line costs one match.
ANY_START = re.compile(r"^(?:\s{0,3}(?:`{3}|~{3})|\S*\s?[$%❯›] |diff |Index: |--- |commit |\s*Traceback |=|[.FEsxX]"
                       r"|\S+\.py |\S+::|running |=== RUN|PASS |FAIL )")
# Fence info words that say the kind outright; any other word is taken as the language of code.
FENCE_KINDS = {
    "diff": ("diff", None), "patch": ("diff", None), "udiff": ("diff", None),
    "console": ("shell", None), "shell-session": ("shell", None), "terminal": ("shell", None),
    "json": ("json", None), "jsonc": ("json", None), "yaml": ("json", None), "yml": ("json", None),
    "toml": ("json", None), "ini": ("json", None), "csv": ("table", None), "tsv": ("table", None),
    "log": ("log", None), "text": (None, None), "txt": (None, None), "output": (None, None),
    "pytb": ("traceback", "python"), "traceback": ("traceback", None), "python-traceback": ("traceback", "python"),
    "md": ("markdown", None), "markdown": ("markdown", None),
}
PROMPT = re.compile(r"^(?:\(\S+\) )?(?:[\w.@~:/-]*\s?)?[$%❯›] \S")

_DIFF_HEAD = re.compile(
    r"^(?:diff --git |diff -|index [0-9a-f]+\.\.|--- |\+\+\+ |new file mode|deleted file mode|old mode|new mode"
    r"|similarity index|dissimilarity index|rename (?:from|to) |copy (?:from|to) |Binary files |commit [0-9a-f]{7,40}"
    r"|Merge: |Author: |AuthorDate: |Commit: |CommitDate: |Date: |From [0-9a-f]{40} |From: |Subject: |---$"
    r"| \S.*\|\s+(?:\d+ ?[+-]*|Bin .*)$| \d+ files? changed|    |\\ No newline)"
)
_HUNK = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+")
_COMMIT = re.compile(r"^commit [0-9a-f]{7,40}\b")

PY_DEFINITION = re.compile(r"^\s*(?:(?:async )?def \w+\(|class \w+[(:]|import \w|from [\w.]+ import )")
PROGRESS = re.compile(r"^[.FEsxX]+\s*$")
PY_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_CHAIN = re.compile(r"^(?:During handling of the above exception, another exception occurred:"
                    r"|The above exception was the direct cause of the following exception:)\s*$")
PY_FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+)(?:, in (.+))?$')
_STACK = re.compile(r"^\s+at \S|^goroutine \d+ \[|^thread '.*' panicked at|^panic: |^Exception in thread "
                    r"|^Caused by: |^\s+\d+: \S+::")

TEST_START = re.compile(
    r"^(?:=+ test session starts =+|=+ (?:FAILURES|ERRORS) =+|[.FEsxX]{2,}\s*(?:\[\s*\d+%\])?|[.FEsxX]\s*\[\s*\d+%\]"
    r"|\S+\.py [.FEsxX]+\s*(?:\[\s*\d+%\])?|\S+::\S+ (?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*"
    r"|running \d+ tests?|=== RUN\s+\S+|(?:PASS|FAIL) \S+\.(?:test|spec)\.[cm]?[jt]sx?\b.*)\s*$"
)
_TEST_END = re.compile(
    r"^(?:=*\s*(?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)(?:, )?)+"
    r".* in [\d.]+s\b.*|OK(?: \(.*\))?|FAILED \(.*\)|test result: .*|(?:ok|FAIL|---)\s+\S+\s+[\d.]+s.*|FAIL|PASS"
    r"|Ran all test suites.*|Tests:\s+.*|Time:\s+.*|\s+\d+ (?:passing|failing|pending)\b.*|error: test failed.*)\s*$"
)
TEST_LINE = re.compile(
    TEST_START.pattern + "|" + _TEST_END.pattern
    + r"|^(?:FAILED|PASSED|ERROR) \S+::|^_{3,} \S.* _{3,}$|^E {3}|^--- (?:FAIL|PASS|SKIP): |^test \S+ \.\.\. "
      r"|^\s+[✓✔✗✕×] |^FAIL: test|^ERROR: test|^Ran \d+ tests? in |^collected \d+ items?"
)

LOG_LINE = re.compile(
    r"^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{2}:\d{2}:\d{2}|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}"
    r"|\d{10}(?:\.\d+)?\s|\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL)\]?[\s:]"
    r"|(?:error|warning|note|help)(?:\[\w+\])?: |(?:npm|yarn|pnpm) (?:verbose|info|http|silly|sill|warn|WARN|ERR!|error|notice|timing)\b"
    r"|\[\.\.\. \d+ lines omitted \.\.\.\]| [ *+!=t-] (?:\[[\w ]+\]|[0-9a-f]+\.\.\.?[0-9a-f]+)\s+\S+\s+->"
    r"|\w[\w.-]*\[\d+\]: |[IWEF]\d{4} |remote: |(?:Get|Hit|Ign|Err):\d+ |(?:Inst|Conf|Remv|Purg) \S"
    r"|\s*(?:Compiling|Downloading|Downloaded|Checking|Finished|Updating|Fresh|Installing|Collecting"
    r"|Requirement already satisfied|Successfully|Using cached|Processing|Preparing|Getting requirements"
    r"|Created wheel|Stored in directory|Building wheel|Reading package lists|Building dependency tree"
    r"|Reading state information|Receiving objects|Resolving deltas|Counting objects|Compressing objects"
    r"|Enumerating objects|Unpacking objects|Cloning into|Fetching|Selecting previously|Unpacking|Setting up)\b)"
)
MARKDOWN = re.compile(r"^\s*(?:#{1,6}\s+\S|[-*+]\s+\S|\d+[.)]\s+\S|>\s|\|.*\|\s*$)")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")

_CODE = re.compile(
    r"^\s*(?:(?:async )?def |class \w|import \w|from [\w.]+ import |return\b|raise\b|yield\b|elif .*:$|else:$"
    r"|try:$|finally:$|except\b.*:$|(?:if|for|while|with) .*:$|@\w[\w.]*(?:\(.*)?$"
    r"|function\b|const |let |var |export |module\.exports|\}\)?[;,]?$|\{$|\]\)?[;,]?$|\);?$"
    r"|fn |pub |impl\b|use [\w:]+|struct |enum |match |mod |#\[|package \w|func |type \w+ (?:struct|interface)"
    r"|(?:public|private|protected|static|final|void|int|char)\b|#include|#define|//|/\*|\*/|#!/)"
    r"|.*(?:[;{]|=>|\) \{|\):|\]:)\s*$"
    r"|^\s*[\w.\[\]'\"]+\s*(?:=|\+=|-=|:=|\|=)\s*\S"
    r"|^\s*[\w.]+\(.*\)[;,]?\s*$"
)
_BULLET = re.compile(r"^\s*(?:[-*+•>]|\d+[.)]|#{1,6})\s+")
_PLAIN_WORD = re.compile(r"^[(\"'“‘*_]*[A-Za-z][A-Za-z'’-]*[,.;:!?)\"”’*_]*$")
_CODE_MARKS = re.compile(r"[{}();=<>\[\]]")

_LANGUAGES = {
    "python": re.compile(r"^\s*(?:def |class \w+.*:$|import \w|from [\w.]+ import|elif |self\.|@\w|print\(|"
                         r"if __name__)|:\s*$"),
    "javascript": re.compile(r"\bfunction\b|\bconst \w+ = |\blet \w+ = |=>|require\(|module\.exports|console\.log"),
    "rust": re.compile(r"^\s*(?:pub |fn |impl |use \w+::|let mut |match |struct |enum |mod )|::\w+|->\s*[\w<]"),
    "go": re.compile(r"^\s*(?:func |package |type \w+ struct)|:= |\berr != nil"),
    "java": re.compile(r"^\s*(?:public|private|protected) (?:static )?(?:final )?[\w<>\[\]]+ \w+|System\.out"),
    "c": re.compile(r"^\s*#include|^\s*(?:int|void|char|static) \w+\(|printf\(|->\w"),
    "sql": re.compile(r"(?i)^\s*(?:select|insert into|update \w+ set|create table|delete from|alter table)\b"),
    "shell": re.compile(r"^#!/bin/(?:ba|z)?sh|^\s*(?:export \w+=|fi$|then$|done$|esac$)|\$\{?\w+\}?"),
}


def count(pattern: re.Pattern, rows: list[str]) -> int:
    return sum(1 for r in rows if pattern.match(r))


def is_prose(row: str) -> bool:
    """A line a person wrote: mostly plain words, few code marks."""
    words = _BULLET.sub("", row).split()
    if len(words) < 3:
        return False
    plain = sum(1 for w in words if _PLAIN_WORD.match(w))
    return plain >= 0.6 * len(words) and len(_CODE_MARKS.findall(row)) <= max(2, len(words) // 4)


def is_code(row: str) -> bool:
    return bool(_CODE.match(row)) and not HEADING.match(row)


def is_traceback(rows: list[str]) -> bool:
    return any(PY_FRAME.match(r) for r in rows) or sum(1 for r in rows if _STACK.match(r)) >= 2 or any(
        r.startswith(("panic: ", "thread '")) and "panic" in r for r in rows)


def is_table(rows: list[str]) -> bool:
    if len(rows) < 2:
        return False
    piped = [r for r in rows if r.strip().startswith("|") and r.strip().endswith("|")]
    if len(piped) >= 2 and len(piped) >= 0.8 * len(rows) and any(re.match(r"^\s*\|?\s*:?-{3,}", r) for r in rows):
        return True
    if len(rows) < 3:
        return False
    for sep in ("\t", ",", ";", "|"):
        counts = [r.count(sep) for r in rows]
        common = max(set(counts), key=counts.count)
        if common >= (1 if sep == "\t" else 2) and counts.count(common) >= 0.9 * len(rows):
            return sum(is_prose(r) for r in rows) < 0.5 * len(rows)
    return False


_CONFIG = re.compile(r"^\s*(?:- )?[\w.\-\"']+\s*(?::|=)(?:\s+\S.*)?$|^\s*- \S|^\s*\[[\w.\-\"' ]+\]\s*$|^\s*#")
_KEY_VALUE = re.compile(r"^\s*(?:- )?[\w.\-\"']+\s*(?::|=)(?:\s|$)")
_FIRST_WORD = re.compile(r"^\s*([^\W\d_]+)")
STRONG_CODE = re.compile(
    r"^\s*(?:\"\"\"|'''|(?:async )?def \w|class \w|import \w|from [\w.]+ import |@\w|(?:pub(?:\([\w:]+\))? )?(?:fn|struct|enum|impl|mod|trait) "
    r"|use [\w:{]+|(?:export )?(?:async )?function\b|(?:export )?(?:const|let|var) \w+ = |package \w|func |#include"
    r"|#!/|(?:public|private|protected) )"
)


def is_config(rows: list[str]) -> bool:
    """YAML, TOML or INI: key/value lines, list items and [sections] only, mostly key/value lines."""
    return len(rows) >= 3 and count(_CONFIG, rows) >= 0.9 * len(rows) and count(_KEY_VALUE, rows) >= 0.5 * len(rows)


def repeated_starts(rows: list[str]) -> int:
    """Lines (not list items) whose first word starts three or more lines: the shape of a tool's log."""
    firsts = [m.group(1).lower() if m and not MARKDOWN.match(r) else None for r, m in
              ((r, _FIRST_WORD.match(r)) for r in rows)]
    return sum(1 for w in firsts if w is not None and firsts.count(w) >= 3)


def language(rows: list[str]) -> str | None:
    scores = {name: sum(1 for r in rows if pattern.search(r)) for name, pattern in _LANGUAGES.items()}
    best = max(scores, key=scores.get)
    return best if scores[best] else None


def starts_diff(rows: list[str], i: int) -> bool:
    row = rows[i]
    if row[:1] not in ("d", "I", "-", "c"):
        return False
    if row.startswith("diff --git ") or row.startswith("Index: ") and i + 1 < len(rows) and rows[i + 1].startswith("==="):
        return True
    if row.startswith("--- ") and i + 2 < len(rows):
        return rows[i + 1].startswith("+++ ") and bool(_HUNK.match(rows[i + 2]))
    if _COMMIT.match(row):
        ahead = rows[i + 1:i + 400]
        return any(r.startswith(("diff --git ", "@@ ")) for r in ahead)
    return False


def diff_end(rows: list[str], i: int) -> int:
    """The row after a diff that starts at i: its headers, commit messages, stat lines and hunks (each
    as long as its header's line counts say) run on; the first other line ends it."""
    j = i
    while j < len(rows):
        row = rows[j]
        hunk = _HUNK.match(row)
        if hunk:
            old = int(hunk.group(2) or 1) if hunk.group(2) != "0" else 0
            new = int(hunk.group(4) or 1) if hunk.group(4) != "0" else 0
            j += 1
            while j < len(rows) and (old > 0 or new > 0):
                mark = rows[j][:1]
                if mark == "-":
                    old -= 1
                elif mark == "+":
                    new -= 1
                elif mark in (" ", ""):
                    old, new = old - 1, new - 1
                elif mark != "\\":
                    break
                j += 1
            while j < len(rows) and rows[j].startswith("\\"):
                j += 1
            continue
        if row.strip() and not _DIFF_HEAD.match(row) and not (row and row[0] in "+- "):
            break
        j += 1
    while j > i + 1 and not rows[j - 1].strip():
        j -= 1
    return j


def traceback_end(rows: list[str], i: int) -> int:
    """The row after a Python traceback starting at i, through every exception chained to it."""
    j = i + 1
    while True:
        while j < len(rows) and (rows[j].startswith((" ", "\t")) or not rows[j].strip() and j + 1 < len(rows)
                                 and rows[j + 1].startswith((" ", "\t"))):
            j += 1
        if j < len(rows) and rows[j].strip():
            j += 1  # the exception line
        k = j
        while k < len(rows) and not rows[k].strip():
            k += 1
        if k < len(rows) and _CHAIN.match(rows[k]):
            nxt = k + 1
            while nxt < len(rows) and not rows[nxt].strip():
                nxt += 1
            if nxt < len(rows) and PY_TRACEBACK.match(rows[nxt]):
                j = nxt + 1
                continue
        return j


def test_end(rows: list[str], i: int) -> int:
    """The row after a test run starting at i: its last summary line, else the end of the text."""
    last = None
    for j in range(i, len(rows)):
        if _TEST_END.match(rows[j]):
            last = j
    return len(rows) if last is None else last + 1
