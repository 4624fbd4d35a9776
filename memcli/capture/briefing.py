"""The context a new session is handed at SessionStart: a compact digest of what the last sessions in
this store asked, changed, ran, decided and left open, written as statements of fact (never as
instructions to the assistant), within the character room of `capture.inject_tokens`.

The drain writes it after each batch, so the SessionStart hook only reads a file: no model, no index."""

from __future__ import annotations

import os
import re
import time

from typing import Callable

from memcli.capture.options import MAX_INJECT_CHARS
from memcli.capture.sessions import _clip

LAST_SESSIONS = 3
TEST_RUNNER = re.compile(r"\b(pytest|tox|nox|unittest|npm (?:run )?test|yarn test|pnpm test|cargo (?:test|build)|"
                         r"go (?:test|build)|make(?: \w+)?|mvn|gradle|ctest|rspec|jest|vitest|phpunit)\b")


def digest(sessions: list[dict], tokens: int, count: Callable[[str], int]) -> str:
    """What fits in `tokens` (as `count` counts them) and in the clients' character cap, breadth first:
    every recent session's ask and changed files, then the decisions and open ends, then the failures,
    then the checks that passed, each newest first; shown grouped by session. Empty when nothing was
    captured."""
    recent = sorted((s for s in sessions if s.get("seq")), key=lambda s: s.get("last", 0), reverse=True)
    if not recent:
        return ""
    project = os.path.basename((recent[0].get("cwd") or "").rstrip("/")) or "this project"
    header = f"Facts mem captured from earlier coding sessions in {project} (newest first):"
    closing = "More: the memories tagged `session` and `observation` (mem search, or MCP memory_search)."
    groups = [_lines(state) for state in recent[:LAST_SESSIONS]]  # per session, per tier: its lines
    order = [(g, tier, i) for tier in range(TIERS) for g, group in enumerate(groups)
             for i in range(len(group[tier]))]
    chosen: set = set()

    def render(picked: set) -> str:
        body = [line for g, group in enumerate(groups) for tier in range(TIERS)
                for i, line in enumerate(group[tier]) if (g, tier, i) in picked]
        return "\n".join([header, *body, closing])

    def fits(text: str) -> bool:
        return len(text) <= MAX_INJECT_CHARS and count(text) <= tokens

    for key in order:
        if fits(render(chosen | {key})):
            chosen.add(key)
        elif key[1] == 0:  # a session's headline does not fit: the older ones would not either
            break
    if not chosen:
        return ""
    text = render(chosen)
    return text if fits(text) else text[: -len(closing) - 1]


TIERS = 4


def _lines(state: dict) -> list[list[str]]:
    """A session's lines by tier: its headline; decisions and open ends; failures; checks that passed."""
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(state.get("last", 0)))
    asked = "; ".join(_clip(p, 160).rstrip(".") for p in state.get("prompts", [])[-3:])
    line = f"- Session {state['id'][:8]} ({state.get('client', '?')}, {when} UTC)"
    line += f": asked {asked}." if asked else "."
    if state.get("changed"):
        line += " Changed " + ", ".join(state["changed"][-8:]) + "."
    said = [f"  - Decided: {s}" for s in state.get("decisions", [])[-2:]]
    said += [f"  - Left open: {s}" for s in state.get("open", [])[:2]]
    failures = [f"  - `{command}` failed" + (f": {what}" if what else "") + "."
                for command, what in state.get("failures", [])[-2:]]
    passing = _telling_passes(state.get("commands", []))
    passes = ["  - Ran without failing: " + ", ".join(f"`{c}`" for c in passing) + "."] if passing else []
    return [[line], said, failures, passes]


def _telling_passes(commands: list) -> list[str]:
    """Up to three commands that passed, those that run tests or builds first (how to check the work is
    the fact a next session needs most), then the latest others."""
    passed = list(dict.fromkeys(c for c, failed in commands if not failed))
    checks = [c for c in passed if TEST_RUNNER.search(c)]
    return (checks[-3:] + [c for c in reversed(passed) if c not in checks])[:3]
