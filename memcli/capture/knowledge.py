"""What a project's sessions learned that lasts beyond any one of them, each fact once, a newer statement
replacing an older one: the user's rulings (a later ruling on the same matter replaces the earlier), the
items deferred or left open (until a later prompt takes them up), the checks that pass (the test, lint
and build commands whose last run passed), the setup steps that fixed the environment (a setup command
after which a failing check passed), and the tools that are missing.

Why it is worked out from the sessions' states each time, not kept in a file of its own: the states are
the one record of what happened (a rerun after a kill adds nothing to them twice, memcli.capture.event_jobs),
so a second copy could only disagree with them; they are small, and the drain reads them anyway to write
the digest. Nothing here comes from tool output but the commands' outcome and error lines: a ruling or
an open item is only what the user or the assistant said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memcli.capture import sessions

TOPIC_STOP = frozenset("""
    the a an and or of to in on for with by at as is are be was were it its this that these those there we our
    you your i my me us they them he she from into than then so but if not no never always don't do does
    dont don t use uses used run runs keep make sure only every each all any now from on just also please
    should must can will would gets get got one ones new old still
""".split())
SAME_MATTER = 0.6  # share of the smaller ruling's topic words the other holds, for one to replace the other
TAKEN_UP = 0.5  # share of an open item's topic words a later prompt holds, for it to count as taken up
FLAGS_WITH_VALUES = frozenset("-m -p -k -n -o -c -W".split())  # of pytest and python: `-p no:cacheprovider`
NOT_FOUND = re.compile(r"(?:^|[\s:/])([\w.+-]+): (?:command )?not found|No module named '?([\w.]+)'?\s*$")


@dataclass
class Knowledge:
    sessions: list[dict] = field(default_factory=list)  # the project's sessions with work, newest first
    rulings: list[dict] = field(default_factory=list)  # current, newest first: {kind, text, at}
    open: list[dict] = field(default_factory=list)  # newest first: {text, at}
    checks: list[dict] = field(default_factory=list)  # command stories of test/lint/build commands, newest first
    setups: list[dict] = field(default_factory=list)  # {command, fixed: [errors]}, newest first
    missing: list[dict] = field(default_factory=list)  # {tool, error}


def gather(states: list[dict], project: str) -> Knowledge:
    """The knowledge of one project from every session state of the store."""
    mine = sorted((s for s in states if project_of_state(s) == project and sessions.has_work(s)),
                  key=lambda s: s.get("started", 0))
    known = Knowledge(sessions=mine[::-1])
    known.rulings = _current_rulings(mine)
    known.open = _still_open(mine)
    every_run = sorted((run for state in mine for run in sessions.runs(state)), key=lambda run: run["at"])
    stories = sessions.command_story(every_run)
    known.missing = _missing(every_run)
    gone = {item["tool"] for item in known.missing}
    checks = sorted((s for s in stories if s["role"] in ("test", "lint", "build") and _tool(s["command"]) not in gone),
                    key=lambda s: -s["at"])
    known.checks = list({_target(s["command"]): s for s in reversed(checks)}.values())[::-1]
    known.setups = _setups(mine)
    return known


def project_of_state(state: dict) -> str:
    from memcli.capture.projects import project_of

    return state.get("project") or project_of(state.get("cwd", ""))


def topic(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_][a-z0-9_.]*[a-z0-9_]|[a-z0-9]", text.lower()) if len(w) > 1 and w not in TOPIC_STOP}


def same_matter(a: set[str], b: set[str], share: float) -> bool:
    shared = len(a & b)
    return shared >= 2 and shared >= share * min(len(a), len(b))


def _current_rulings(states: list[dict]) -> list[dict]:
    """Every ruling once, oldest said first; a later one on the same matter replaces it."""
    current: list[dict] = []
    for state in states:
        for ruling in sorted(state.get("rulings", []), key=lambda r: r["at"]):
            words = topic(ruling["text"])
            current = [r for r in current if r["text"] != ruling["text"] and not same_matter(topic(r["text"]), words, SAME_MATTER)]
            current.append(ruling)
    return current[::-1]


def _still_open(states: list[dict]) -> list[dict]:
    """What a session left open or a ruling deferred, unless a later session's prompt took it up."""
    items = [{"text": text, "at": state.get("last", 0)} for state in states for text in state.get("open", [])]
    said = {r["text"] for state in states for r in state.get("rulings", []) if r["kind"] == "deferred"}
    items += [{"text": r["text"], "at": r["at"]} for state in states for r in state.get("rulings", []) if r["text"] in said]
    asked = [(state.get("started", 0), topic(prompt)) for state in states for prompt in state.get("prompts", [])]
    deferred = [topic(r["text"]) for state in states for r in state.get("rulings", []) if r["kind"] == "deferred"]
    still = []
    for item in items:
        words = topic(item["text"])
        if any(started > item["at"] and same_matter(words, prompt, TAKEN_UP) for started, prompt in asked):
            continue  # a later session took it up
        if item["text"] not in said and any(same_matter(words, other, TAKEN_UP) for other in deferred):
            continue  # the answer only repeats what the user deferred
        still.append(item)
    unique = {item["text"]: item for item in sorted(still, key=lambda i: i["at"])}
    return sorted(unique.values(), key=lambda i: -i["at"])


def _missing(every_run: list[dict]) -> list[dict]:
    """Tools a command could not find (`x: not found`, `python -m x`: No module named x) and no later
    command using them passed."""
    missing: dict[str, dict] = {}
    for run in every_run:
        tool = _tool(run["command"])
        found = NOT_FOUND.search(run.get("error", "")) if run["failed"] else None
        named = found and (found[1] or found[2])
        if named and named.split(".")[0] == tool:
            said = run["error"][found.start():].lstrip(" :/")
            missing[tool] = {"tool": tool, "error": said[said.find("No module"):] if "No module" in said else said}
        elif not run["failed"]:
            missing.pop(tool, None)
    return list(missing.values())


def _setups(states: list[dict]) -> list[dict]:
    """Setup commands after which a failing check passed, with the errors they fixed, newest first."""
    fixes: dict[str, dict] = {}
    for state in states:
        for story in sessions.command_story(sessions.runs(state)):
            for command in story["fixed_by"]:
                fix = fixes.pop(command, {"command": command, "fixed": []})
                if story["error"] and story["error"] not in fix["fixed"]:
                    fix["fixed"].append(story["error"])
                fixes[command] = fix
    return list(fixes.values())[::-1]


def _target(command: str) -> tuple[str, ...]:
    """What a check runs on, whatever its flags: `pytest -q tests` and `pytest -x tests` are one check (the
    newer replaces the older), `pytest tests/test_a.py` another."""
    words, tool = command.split(), _tool(command)
    after_flag = {i + 1 for i, w in enumerate(words) if w in FLAGS_WITH_VALUES}
    return (tool, *(w for i, w in enumerate(words[1:], 1)
                    if not w.startswith("-") and i not in after_flag and w != tool and not re.search(r"[:=]", w)))


def _tool(command: str) -> str:
    """The program a command runs: `python -m pytest` -> pytest, `ruff check` -> ruff."""
    words = command.split()
    if len(words) > 2 and re.fullmatch(r"python[\d.]*", words[0]) and words[1] == "-m":
        return words[2]
    return words[0].rsplit("/", 1)[-1] if words else ""
