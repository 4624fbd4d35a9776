"""`capture:` in mem.yaml, and `MEM_CAPTURE=0`: whether hooks are captured, what is skipped, how much
context a new session is handed. Read by the hook on every event, so it needs nothing but the mapping."""

from __future__ import annotations

import os
from dataclasses import dataclass

# Tools whose events say nothing a later session needs: bookkeeping of the assistant itself, listings.
ROUTINE_TOOLS = (
    "TodoWrite", "TodoRead", "LS", "Glob", "ExitPlanMode", "ListMcpResourcesTool", "ReadMcpResourceTool",
    "update_plan", "list_directory", "glob", "write_todos",
)
INJECT_TOKENS = 600  # what a new session is handed at most: about a screen of facts
MAX_INJECT_CHARS = 10_000  # the clients' own cap on a hook's added context
PROMPT_TOKENS = 300  # the budget of the memories found for a prompt, when that is turned on
SHARE = ("none", "summaries", "all")


@dataclass(frozen=True)
class CaptureOptions:
    enabled: bool = True
    skip_tools: tuple[str, ...] = ROUTINE_TOOLS
    inject_tokens: int = INJECT_TOKENS
    drain: str = "auto"  # "auto": the hook starts a detached drain; "manual": `mem capture drain` or `mem mcp`
    max_output_chars: int = 6000  # of one tool's output kept in an observation (head and tail)
    serve_seconds: int = 300  # how long the hook server stays up after the last hook
    prompt_context: bool = False  # answer UserPromptSubmit with the memories found for the prompt
    prompt_tokens: int = PROMPT_TOKENS
    prompt_min_score: float | None = None  # the search's cut-off; None: its calibrated default
    share: str = "none"  # what capture writes into the team's history: none, summaries, all (docs/teams.md)

    @classmethod
    def from_settings(cls, data: dict | None) -> "CaptureOptions":
        """The options from mem.yaml's `capture:` mapping; a value of the wrong shape keeps its default
        (a hook must not fail over a typo), and `MEM_CAPTURE=0` turns capture off whatever the file says."""
        data = data if isinstance(data, dict) else {}
        enabled = data.get("enabled", True) is not False and os.environ.get("MEM_CAPTURE", "1") != "0"
        skip = data.get("skip_tools")
        skip_tools = tuple(str(t) for t in skip) if isinstance(skip, list) else ROUTINE_TOOLS
        extra_skip = data.get("also_skip_tools")
        if isinstance(extra_skip, list):
            skip_tools += tuple(str(t) for t in extra_skip)
        drain = data.get("drain", "auto")
        if os.environ.get("MEM_CAPTURE_DRAIN") == "0":
            drain = "manual"
        return cls(enabled=enabled, skip_tools=skip_tools,
                   inject_tokens=_positive(data.get("inject_tokens"), INJECT_TOKENS),
                   drain=drain if drain in ("auto", "manual") else "auto",
                   max_output_chars=_positive(data.get("max_output_chars"), 6000),
                   serve_seconds=_positive(data.get("serve_seconds"), 300),
                   prompt_context=data.get("prompt_context") is True,
                   prompt_tokens=_positive(data.get("prompt_tokens"), PROMPT_TOKENS),
                   prompt_min_score=_score(data.get("prompt_min_score")),
                   share=data.get("share") if data.get("share") in SHARE else "none")

    @property
    def inject_chars(self) -> int:
        """The character room of the injected context: about four characters a token, never over the cap."""
        return min(self.inject_tokens * 4, MAX_INJECT_CHARS)


def _score(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _positive(value, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default
