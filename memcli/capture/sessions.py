"""A coding session as mem keeps it: a thread of the user's prompts and the assistant's last messages,
the facts gathered from its events (files changed, commands and their failures, decisions, what was left
open), and from them an extractive summary that becomes a long-term memory at Stop, PreCompact and
SessionEnd (a new version of the same memory each time, so search finds the latest)."""

from __future__ import annotations

import os
import re
import time

DECISION = re.compile(r"\b(decided|decide|decision|chose|choose|we'll use|we will use|go with|settled on|"
                      r"instead of|prefer|switch(?:ed)? to)\b", re.IGNORECASE)
OPEN = re.compile(r"\b(todo|next step|next,|remaining|left to|not yet|still need|follow[- ]up|later|open question|"
                  r"yet to)\b", re.IGNORECASE)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
KEEP_PROMPTS = 8
KEEP_FACTS = 12


def new_state(record: dict) -> dict:
    return {"id": record["session"], "client": record.get("client", "hook"), "cwd": record.get("cwd", ""),
            "started": record.get("at", time.time()), "last": record.get("at", time.time()), "seq": 0,
            "prompts": [], "commands": [], "failures": [], "changed": [], "read": {}, "decisions": [],
            "open": [], "last_message": "", "observations": 0}


def thread_id(state: dict) -> str:
    """The id of the session's thread, fixed by the session: a capture run again after a kill, or after
    `mem thread rm` removed the thread, adds to the same one."""
    from memcli.store import ids

    return ids.keyed_id(int(state.get("started", 0) * 1000), "thread:" + state["id"])


def note_prompt(state: dict, prompt: str) -> None:
    _push(state["prompts"], _clip(prompt, 300), KEEP_PROMPTS)
    _push_all(state["decisions"], _sentences(prompt, DECISION))


def note_message(state: dict, message: str) -> None:
    state["last_message"] = _clip(message, 1200)
    _push_all(state["decisions"], _sentences(message, DECISION))
    state["open"] = _sentences(message, OPEN)[:4]


def note_command(state: dict, command: str, failed: bool, output: str) -> None:
    _push(state["commands"], [_clip(command, 160), failed], KEEP_FACTS)
    if failed:
        _push(state["failures"], [_clip(command, 160), _telling_line(output)], KEEP_FACTS)


def note_changed(state: dict, paths: list[str]) -> None:
    for path in paths:
        if path in state["changed"]:
            state["changed"].remove(path)
        state["changed"].append(path)
        state["read"].pop(path, None)
    del state["changed"][:-40]


def summary_text(state: dict) -> str:
    """What was asked, what was done, the files changed, the decisions and what is left open: facts
    taken from the session's own words, nothing made up."""
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(state["started"]))
    project = os.path.basename(state["cwd"].rstrip("/")) or "?"
    lines = [f"Coding session {state['id'][:8]} ({state['client']}) in {project}, {when} UTC."]
    if state["prompts"]:
        lines.append("Asked: " + " | ".join(state["prompts"]))
    done = []
    if state["changed"]:
        done.append("changed " + ", ".join(state["changed"][-15:]))
    if state["commands"]:
        done.append("ran " + ", ".join(f"`{c}`" + (" (failed)" if failed else "")
                                        for c, failed in state["commands"][-8:]))
    if done:
        lines.append("Done: " + "; ".join(done) + ".")
    for command, line in state["failures"][-4:]:
        lines.append(f"Failed: `{command}`" + (f": {line}" if line else ""))
    if state["decisions"]:
        lines.append("Decided: " + " ".join(state["decisions"][-4:]))
    if state["last_message"]:
        lines.append("Last answer: " + _clip(state["last_message"], 600))
    if state["open"]:
        lines.append("Left open: " + " ".join(state["open"]))
    return "\n".join(lines)


def _telling_line(output: str) -> str:
    """The line of a failure that says what failed: a FAILED/Error line, else the last one."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for pattern in (r"^(FAILED|ERROR)\b|\w+(Error|Exception)\b", r"\b(error|failed|Traceback)\b"):
        for line in reversed(lines):
            if re.search(pattern, line):
                return _clip(line, 200)
    return _clip(lines[-1], 200) if lines else ""


def _sentences(text: str, pattern: re.Pattern) -> list[str]:
    return [_clip(s.strip(), 240) for s in SENTENCE.split(text or "") if s.strip() and pattern.search(s)]


def _push(items: list, item, keep: int) -> None:
    if item in items:
        items.remove(item)
    items.append(item)
    del items[:-keep]


def _push_all(items: list, new: list) -> None:
    for item in new:
        _push(items, item, KEEP_FACTS)


def _clip(text: str, room: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= room else text[: room - 1].rsplit(" ", 1)[0] + "…"
