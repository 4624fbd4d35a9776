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
    """The lines, most useful first, that fit in `tokens` (as `count` counts them) and in the clients'
    character cap; empty when nothing was captured."""
    recent = sorted((s for s in sessions if s.get("seq")), key=lambda s: s.get("last", 0), reverse=True)
    if not recent:
        return ""
    project = os.path.basename((recent[0].get("cwd") or "").rstrip("/")) or "this project"
    lines = [f"Facts mem captured from earlier coding sessions in {project} (newest first):"]
    for state in recent[:LAST_SESSIONS]:
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(state.get("last", 0)))
        asked = "; ".join(_clip(p, 160).rstrip(".") for p in state.get("prompts", [])[-3:])
        line = f"- Session {state['id'][:8]} ({state.get('client', '?')}, {when} UTC)"
        line += f": asked {asked}." if asked else "."
        if state.get("changed"):
            line += " Changed " + ", ".join(state["changed"][-8:]) + "."
        lines.append(line)
        for command, what in state.get("failures", [])[-2:]:
            lines.append(f"  - `{command}` failed" + (f": {what}" if what else "") + ".")
        passing = _telling_passes(state.get("commands", []))
        if passing:
            lines.append("  - Ran without failing: " + ", ".join(f"`{c}`" for c in passing) + ".")
        for sentence in state.get("decisions", [])[-2:]:
            lines.append(f"  - Decided: {sentence}")
        for sentence in state.get("open", [])[:2]:
            lines.append(f"  - Left open: {sentence}")
    lines.append("More: the memories tagged `session` and `observation` (mem search, or MCP memory_search).")
    return _fit(lines, tokens, count)


def _telling_passes(commands: list) -> list[str]:
    """Up to three commands that passed, those that run tests or builds first (how to check the work is
    the fact a next session needs most), then the latest others."""
    passed = list(dict.fromkeys(c for c, failed in commands if not failed))
    checks = [c for c in passed if TEST_RUNNER.search(c)]
    return (checks[-3:] + [c for c in reversed(passed) if c not in checks])[:3]


def _fit(lines: list[str], tokens: int, count: Callable[[str], int]) -> str:
    """The header, then whole lines in order while they and the closing pointer fit."""
    closing = lines[-1]

    def fits(candidate: list[str]) -> bool:
        text = "\n".join(candidate)
        return len(text) <= MAX_INJECT_CHARS and count(text) <= tokens

    out = [lines[0]]
    for line in lines[1:-1]:
        if not fits(out + [line, closing]):
            break
        out.append(line)
    if fits(out + [closing]):
        out.append(closing)
    return "\n".join(out) if len(out) > 1 else ""
