"""A coding session as mem keeps it: what its events said (the prompts, the rulings in them, the commands
run with their outcome and the line that says why one failed, the files changed and the names renamed,
the assistant's last message and what it left open), and from that its outcome, written as the session's
summary: a long-term memory at Stop, PreCompact and SessionEnd (a new version of the same memory each
time, so search finds the latest).

The summary is made of the session's own words, nothing made up: the prompts (the last whole, the earlier
by their first sentence: they are in the session's thread, folded into memories, memcli.capture.event_jobs),
and the assistant's last message as written, trimmed only by whole sentences. It is stored without
compression: its labels and its sentences are its point, which pruning word by word would lose.
"""

from __future__ import annotations

import os
import re
import time

from memcli.capture import statements
from memcli.capture.projects import project_of

KEEP_PROMPTS = 20
KEEP_RUNS = 80
KEEP_RULINGS = 40
PROMPT_CHARS = 2000  # of a prompt kept in the state (the thread has it whole)
MESSAGE_CHARS = 4000  # of the assistant's last message
RUNNER = r"^(?:\w+=\S*\s+)*(?:(?:uv|poetry|pipenv|hatch|pdm|rye) run\s+|npx\s+|sudo\s+)?(?:python[\d.]*\s+-m\s+)?"
ROLES = (  # what a command is for, by the program it runs; the order is the order of the checks a digest lists
    ("test", re.compile(RUNNER + r"(?:pytest|py\.test|tox|nox|unittest|(?:npm|yarn|pnpm) (?:run )?test|cargo test|"
                        r"go test|make (?:test|check)|ctest|rspec|jest|vitest|phpunit|mvn test|gradle test)\b")),
    ("lint", re.compile(RUNNER + r"(?:ruff|flake8|pylint|pre-commit run|eslint|black|isort|mypy|pyright|tsc|"
                        r"cargo clippy|golangci-lint|shellcheck|prettier)\b")),
    ("build", re.compile(RUNNER + r"(?:make|build|pip wheel|cargo build|go build|npm run build|cmake|gradle|"
                         r"mvn (?:package|install)|sphinx-build|mkdocs build)\b")),
    ("setup", re.compile(RUNNER + r"(?:pip3? (?:install|uninstall)|pip (?:install|uninstall)|uv (?:sync|pip|add)|"
                         r"poetry (?:install|add)|npm (?:install|ci)|yarn install|pnpm install|apt(?:-get)? install|"
                         r"brew install|conda install|pre-commit install)\b")),
)
REMOVED = re.compile(r"^(?:git rm|rm)(?:\s+-\S+)*\s+(.+)$")


def new_state(record: dict) -> dict:
    cwd = record.get("cwd", "")
    return {"id": record["session"], "client": record.get("client", "hook"), "cwd": cwd, "project": project_of(cwd),
            "started": record.get("at", time.time()), "last": record.get("at", time.time()), "seq": 0,
            "prompts": [], "rulings": [], "runs": [], "changed": [], "deleted": [], "renames": [], "read": {},
            "last_message": "", "open": [], "asked_back": False, "answers": 0, "tools": 0,
            "imported": bool(record.get("imported"))}


def thread_id(state: dict) -> str:
    """The id of the session's thread, fixed by the session: a capture run again after a kill, or after
    `mem thread rm` removed the thread, adds to the same one."""
    from memcli.store import ids

    return ids.keyed_id(int(state.get("started", 0) * 1000), "thread:" + state["id"])


def has_work(state: dict) -> bool:
    """Whether the session did anything a later one could use: an answer or a tool event. A session that
    only started (`claude mcp list`) or stopped at its first prompt (an aborted `claude -p`) did not."""
    return bool(state.get("answers") or state.get("tools") or state.get("observations") or state.get("last_message"))


def note_prompt(state: dict, prompt: str, at: float) -> None:
    _push(state["prompts"], _clip(prompt, PROMPT_CHARS), KEEP_PROMPTS)
    for kind, sentence in statements.rulings(prompt, answering=state.get("asked_back", False)):
        _push(state.setdefault("rulings", []), {"kind": kind, "text": _clip(sentence, 400), "at": at}, KEEP_RULINGS)
    state["asked_back"] = False


def note_message(state: dict, message: str) -> None:
    state["last_message"] = by_sentences(message, MESSAGE_CHARS)
    state["answers"] = state.get("answers", 0) + 1
    state["open"] = [_clip(item, 400) for item in statements.open_items(message)[:5]]
    state["asked_back"] = bool(statements.sentences(message)) and statements.sentences(message)[-1].endswith("?")
    for rename in statements.renames_said(message):
        _push(state.setdefault("renames", []), list(rename), 12)


def note_command(state: dict, command: str, failed: bool, output: str, at: float) -> None:
    error = statements.telling_line(output) if failed else ""
    _append(state.setdefault("runs", []), {"command": _clip(command, 300), "failed": failed, "error": _clip(error, 300),
                                           "at": at}, KEEP_RUNS)
    removed = REMOVED.match(command.strip())
    if removed and not failed:
        for path in removed[1].split():
            _push(state.setdefault("deleted", []), _clip(path, 300), 20)


def note_edit(state: dict, paths: list[str], tool_input) -> None:
    for path in paths:
        if path in state["changed"]:
            state["changed"].remove(path)
        state["changed"].append(path)
        state["read"].pop(path, None)
    del state["changed"][:-40]
    fields = tool_input if isinstance(tool_input, dict) else {}
    edits = fields.get("edits") if isinstance(fields.get("edits"), list) else [fields]
    for edit in edits:
        old = edit.get("old_string", edit.get("old_str")) if isinstance(edit, dict) else None
        new = edit.get("new_string", edit.get("new_str")) if isinstance(edit, dict) else None
        if isinstance(old, str) and isinstance(new, str):
            for rename in statements.renames_edited(old, new):
                _push(state.setdefault("renames", []), list(rename), 12)


def role(command: str) -> str | None:
    return next((name for name, pattern in ROLES if pattern.search(command)), None)


def runs(state: dict) -> list[dict]:
    """The session's runs in order (a state an older mem kept has commands without their errors)."""
    if "runs" in state:
        return state["runs"]
    return [{"command": c, "failed": f, "error": "", "at": state.get("last", 0)} for c, f in state.get("commands", [])]


def command_story(session_runs: list[dict]) -> list[dict]:
    """Each command run, once, in the order first run: whether its last run passed, the first error it
    met, and, when it failed and later passed, the setup commands that passed in between (what fixed it)."""
    stories: dict[str, dict] = {}
    for i, run in enumerate(session_runs):
        story = stories.setdefault(run["command"], {"command": run["command"], "role": role(run["command"]),
                                                    "runs": 0, "error": "", "fixed_by": [], "at": run["at"]})
        if run["failed"] and not story["error"]:
            story["error"] = run.get("error", "")
        if not run["failed"] and story["runs"] and story["last_failed"]:
            failed_at = max(j for j in range(i) if session_runs[j]["command"] == run["command"] and session_runs[j]["failed"])
            story["fixed_by"] = [r["command"] for r in session_runs[failed_at + 1:i]
                                 if not r["failed"] and role(r["command"]) == "setup"]
        story["runs"] += 1
        story["last_failed"] = run["failed"]
        story["at"] = run["at"]
    return list(stories.values())


def summary_text(state: dict) -> str:
    """What was asked, what changed, how each command ended, what was decided and left open, and the last
    answer as written: facts taken from the session's own words, nothing made up."""
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(state["started"]))
    project = os.path.basename((state.get("project") or state["cwd"]).rstrip("/")) or "?"
    lines = [f"Coding session {state['id'][:12]} ({state['client']}) in {project}, {when} UTC."]
    prompts = state.get("prompts", [])
    for prompt in prompts[:-1]:
        lines.append("Asked: " + first_sentence(prompt))
    if prompts:
        lines.append("Asked: " + prompts[-1])
    for ruling in state.get("rulings", []):
        lines.append(("Deferred: " if ruling["kind"] == "deferred" else "Ruled: ") + ruling["text"])
    if state.get("changed"):
        lines.append("Changed: " + ", ".join(state["changed"][-15:]) + ".")
    if state.get("deleted"):
        lines.append("Deleted: " + ", ".join(state["deleted"]) + ".")
    if state.get("renames"):
        lines.append("Renamed: " + ", ".join(f"{old} -> {new}" for old, new in state["renames"]) + ".")
    for story in command_story(runs(state))[-12:]:
        lines.append("Ran: " + tell(story, quote=lambda text: f"`{text}`"))
    for item in state.get("open", []):
        lines.append("Left open: " + item)
    if state.get("last_message"):
        lines.append("Last answer: " + state["last_message"])
    return "\n".join(lines)


def tell(story: dict, quote) -> str:
    """How a command ended, in a few words: `cmd` passed / failed: error / failed: error, then passed
    (after `setup`)."""
    text = quote(story["command"])
    if story["error"] or story["last_failed"]:
        text += " failed" + (f": {quote(story['error'])}" if story["error"] else "")
        if not story["last_failed"]:
            text += ", then passed" + (f" after {', '.join(map(quote, story['fixed_by']))}" if story["fixed_by"] else "")
    else:
        text += " passed"
    return text


def first_sentence(text: str) -> str:
    found = statements.sentences(text)
    return found[0] if found else ""


def by_sentences(text: str, room: int) -> str:
    """`text` within `room` characters, cut after a whole sentence (a first sentence longer than the room
    is cut at a word)."""
    text = (text or "").strip()
    if len(text) <= room:
        return text
    kept = ""
    for sentence in statements.sentences(text):
        if len(kept) + len(sentence) + 1 > room:
            break
        kept = f"{kept} {sentence}".strip()
    return kept or _clip(text, room)


def _push(items: list, item, keep: int) -> None:
    if item in items:
        items.remove(item)
    items.append(item)
    del items[:-keep]


def _append(items: list, item, keep: int) -> None:
    items.append(item)
    del items[:-keep]


def _clip(text: str, room: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= room else text[: room - 1].rsplit(" ", 1)[0] + "…"
