"""What a sentence of a captured session states, read from its form, never from a keyword anywhere in it:
a ruling the user lays down (a prohibition, a standing rule, a convention of the project, a choice of one
thing over another, the answer to a question the assistant asked), an item deferred or left open, a
rename; and the line of a failed command's output that says what failed.

"By the way, we decided to look at the parser" is not a ruling; "Don't touch the public API", "We lint
with ruff, not flake8", "From now on run the tests with -x" and "No, skip mypy locally" are. A question
is never one. Tool output never makes a ruling or an open item: only the user's prompts and the
assistant's own answers do, so a test's output cannot plant a standing line in later digests.
"""

from __future__ import annotations

import re
import unicodedata

# A sentence ends at a line break, or at . ! ? right after a word (or a closing quote or bracket) and
# before a space: "pip install -e . before", "v3.8.1" and "e.g. this" stay whole.
END = re.compile(r"(?<=[\w\"'`)\]])[.!?]+(?=\s)|\n+")
ABBREVIATIONS = frozenset("e.g i.e etc vs cf approx fig mr mrs dr st".split())
ANSWER_WORDS = r"yes|no|yep|nope|sure|ok|okay|right|correct|good|great|fine|thanks|please do|go ahead"
LEAD = rf"^(?:(?:please|and|also|so|but|then|now|{ANSWER_WORDS})\b[,.!:;]?\s+)*"
RULING_FORMS = [re.compile(LEAD + form, re.IGNORECASE) for form in (
    r"(?:don['’]?t|do not|never|avoid|stop|no more)\b",  # a prohibition
    r"(?:always|only|make sure|remember|from now on|going forward|henceforth|by default|in this (?:project|repo\w*|codebase))\b",
    r"(?:we|the project|this project|this repo\w*|our (?:\w+ )?(?:project|repo\w*|team|code\w*|ci|tests?|builds?))\s+(?:\w+ly\s+)?"
    r"(?:never|always|don['’]?t|do not|use|uses|prefer|lint|lints|format|run|runs|keep|want|need|require|avoid|only|ship|support|test|build)\b",
    r"(?:every|each|all|any)\s+[\w-]+(?:\s+[\w-]+){0,3}\s+(?:gets?|needs?|must|should|goes|go|has to|have to|warns?|requires?)\b",
)] + [re.compile(form, re.IGNORECASE) for form in (
    r"\b(?:never|must not|mustn['’]?t|must always|should never|from now on|every time)\b",
    r"\b(?:instead of|rather than)\b|\w,\s+not\s+[\w`'\"]",  # one thing over another: "ruff, not flake8"
)]
DEFERRAL = re.compile(
    r"\b(?:leave|keep|save|park|defer|postpone|push)\b.*\b(?:for (?:later|now|next time|another \w+|a later \w+|the next \w+|"
    r"the [\w.]+ release|v?\d[\w.]*)|until|to later)\b|\b(?:not now|next time|do (?:it|that|this) later|later, not now)\b",
    re.IGNORECASE)
OPEN_LEAD = re.compile(r"^[-*\s]*(?:not (?:yet )?done|left open|still open|open(?: question)?s?|next steps?|todo|to do|remaining|"
                       r"still to do|follow[- ]ups?|left for later|deferred|known issues?|not covered|caveats?)\s*[:\-–—]",
                       re.IGNORECASE)
OPEN_SAID = re.compile(r"\b(?:left (?:it |that |this |them )?(?:for later|open)|not (?:yet )?(?:done|tested|checked|run|covered|"
                       r"updated|implemented|fixed)|is not checked|still (?:needs?|has to|have to|to)|yet to|remains? to be|"
                       r"next step|todo|to be done|waits? for|cannot run|can't run|could not|couldn't|did not get to|"
                       r"didn't get to)\b", re.IGNORECASE)
IDENT = r"[A-Za-z_](?:[\w.]*\w)?(?:\(\))?"
RENAMED_SAID = [re.compile(p) for p in (
    rf"\b[Rr]enam\w*\s+(?:the\s+)?(?:\w+\s+)?`?({IDENT})`?\s+(?:to|into|as)\s+`?({IDENT})`?",
    rf"`?({IDENT})`?\s*(?:→|->)\s*`?({IDENT})`?",
    rf"`?({IDENT})`?\s+(?:became|is now|was renamed to|is now called)\s+(?:the\s+)?(?:\w+\s+)?`?({IDENT})`?",
)]
RENAMED_BY = re.compile(rf"`?({IDENT})`?\s+(?:replaces|supersedes)\s+`?({IDENT})`?")  # new replaces old
MAX_RULINGS = 5  # of one prompt
RULING_WORDS = 60
PRONOUNS = frozenset("it this that they them these those which what one".split())
# A line of tool output that speaks to the reader rather than reporting: never taken as a failure's line.
ADDRESSED = re.compile(r"\b(?:ai|a\.i\.|ki|ia|assist\w*|llms?|language models?|claude|codex|gemini|chatgpt|copilot|"
                       r"agents?|dear \w+|next time)\b", re.IGNORECASE)
# Letters of other scripts drawn like Latin ones ("Аssistants" with a Cyrillic А), read as those.
LOOKALIKES = str.maketrans("АВЕКМНОРСТХаеорсухіјѕԁԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧοι", "ABEKMHOPCTXaeopcyxijsdqwABEZHIKMNOPTYXoi")
INSTRUCTING = re.compile(r"\b(?:must|should|always|never|ignore|disregard|forget|execute|run|please|instructions?|"
                         r"anweisung\w*|system prompt|"
                         r"do not|don['’]t|you)\b", re.IGNORECASE)
SPEAKING = re.compile(r"\b(?:ignore|disregard|forget)\b.{0,40}\b(?:instructions?|rules?|prompts?)\b|\bsystem prompt\b",
                      re.IGNORECASE)
ERROR_LINES = [re.compile(p) for p in (
    r"^E\s+((?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt|Warning)\b.*)",  # pytest's line of the exception
    r"^((?:[\w.]+\.)?\w*(?:Error|Exception)\b:?.*)",  # a traceback's last line
    r"(?i)((?:[\w./-]+: )?(?:\d+: )?[\w.+-]+: (?:command )?not found\b.*|.*\bNo module named\b.*|.*\bNo such file or directory\b.*)",
    r"(?i)^((?:error|fatal)(?:\[\w+\])?:\s.*)",
    r"^(E\s+.+)",
)]
FAILED_TEST = re.compile(r"^(?:FAILED|ERROR) ([\w/.-]+::[\w.\[\]-]+?)(?:\[[^\]]*\])?(?: - |$)")


def sentences(text: str) -> list[str]:
    found, start = [], 0
    for end in END.finditer(text or ""):
        before = text[start:end.start()].rsplit(None, 1)
        if end[0][0] == "." and before and before[-1].lower().lstrip("(") in ABBREVIATIONS:
            continue
        found.append(text[start:end.end()].strip())
        start = end.end()
    found.append((text or "")[start:].strip())
    return [sentence for sentence in found if sentence]


def rulings(prompt: str, answering: bool = False) -> list[tuple[str, str]]:
    """The prompt's sentences that lay down a ruling, as (kind, sentence): kind "deferred" for an item
    put off ("leave X for the next release"), else "ruling". `answering`: the prompt answers a question
    the assistant ended on, so what it says after a yes or a no is a decision too."""
    found = []
    answer = answering and re.match(rf"(?i)(?:{ANSWER_WORDS})\b", prompt.strip())
    for sentence in sentences(prompt):
        if len(found) == MAX_RULINGS:
            break
        if sentence.endswith("?") or not 3 <= len(sentence.split()) <= RULING_WORDS:
            continue  # a question asks; a very long "sentence" is pasted text (a log, a file), not a rule
        if DEFERRAL.search(sentence):
            found.append(("deferred", sentence))
        elif answer or any(form.search(clause) for clause in re.split(r"[;:]\s+", sentence) for form in RULING_FORMS):
            found.append(("ruling", sentence))
        answer = False  # the decision is the answer's first sentence; what follows is the task
    return found


def open_items(message: str) -> list[str]:
    """What the assistant's message leaves open: lines and sentences that say so ("Not done: ...",
    "Next step: ...", "the docs are not updated yet") and the questions it ends on."""
    found = []
    for line in (message or "").splitlines():
        if OPEN_LEAD.match(line):
            found.append(line.strip(" -*"))
            continue
        found += [s for s in sentences(line) if OPEN_SAID.search(s) and not s.endswith("?")]
    tail = sentences(message)[-2:]
    found += [s for s in tail if s.endswith("?") and s not in found]
    return list(dict.fromkeys(found))


def renames_said(text: str) -> list[tuple[str, str]]:
    """Renames a prompt or an answer states: "rename X to Y", "X -> Y", "X became Y", "Y replaces X"."""
    found = [(m[1], m[2]) for pattern in RENAMED_SAID for m in pattern.finditer(text or "")]
    found += [(m[2], m[1]) for m in RENAMED_BY.finditer(text or "")]
    return [(old, new) for old, new in found if _named(old) and _named(new) and old != new]


def renames_edited(old: str, new: str) -> list[tuple[str, str]]:
    """Renames an edit makes: a definition whose name alone changed, or a changed line whose only change
    is one identifier replaced by another that the old text never used."""
    found = []
    defined = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", re.MULTILINE)
    gone, came = set(defined.findall(old)) - set(defined.findall(new)), set(defined.findall(new)) - set(defined.findall(old))
    if len(gone) == 1 and len(came) == 1:
        found.append((gone.pop(), came.pop()))
    old_lines, new_lines = old.splitlines(), new.splitlines()
    import difflib

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes():
        if tag != "replace" or i2 - i1 != j2 - j1:
            continue
        for a, b in zip(old_lines[i1:i2], new_lines[j1:j2]):
            words_a, words_b = re.findall(r"\w+|\W", a), re.findall(r"\w+|\W", b)
            if len(words_a) != len(words_b):
                continue
            pairs = {(x, y) for x, y in zip(words_a, words_b) if x != y}
            if len(pairs) == 1:
                x, y = pairs.pop()
                if _named(x) and _named(y) and not re.search(rf"\b{re.escape(y)}\b", old):
                    found.append((x, y))
    return list(dict.fromkeys(found))


def _named(word: str) -> bool:
    """An identifier worth calling renamed: not a pronoun or a plain word ("it", "done")."""
    bare = word.rstrip("()").split(".")[-1]
    return (len(bare) >= 3 and bare.lower() not in PRONOUNS
            and ("_" in bare or "." in word or word.endswith("()") or not bare.islower() or bare.isupper()))


def _speaks(line: str) -> bool:
    """Whether a line of output speaks to its reader (an instruction addressed to an assistant), read with
    look-alike letters and compatibility forms (full-width, ligatures) folded to plain Latin."""
    line = unicodedata.normalize("NFKC", line).translate(LOOKALIKES)
    return bool(ADDRESSED.search(line) and INSTRUCTING.search(line) or SPEAKING.search(line))


def telling_line(output: str) -> str:
    """The line of a failed command's output that says what failed: the exception, a command or module not
    found, an `error:` line; with the first failed test's id. A line addressed to an assistant is never
    taken (it is the output speaking to the reader, not reporting)."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    lines = [line for line in lines if not _speaks(line)]
    said = ""
    for pattern in ERROR_LINES:
        said = next((m[1].strip() for m in map(pattern.search, lines) if m), "")
        if said:
            break
    failed = next((m[1] for m in map(FAILED_TEST.search, lines) if m), "")
    if failed and failed.rsplit("::", 1)[-1] not in said:
        said = f"{said} ({failed})" if said else failed
    return said or (lines[-1] if lines else "")
