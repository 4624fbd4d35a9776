"""A store filled the way a coding assistant fills it, and `mem ui` serving it: for tests/ui and for the
screenshots in docs/ (tests/ui/screenshots.py).

The payloads are Claude Code's hook payloads (its hooks reference: session_id, transcript_path, cwd,
hook_event_name and each event's fields). They go through the real capture path, memcli.capture.hook.run
(the work of `mem hook`: redaction, `<private>` removal, the queue), and the work queue is then run as
`mem capture drain` runs it. The server runs in a thread of the test's process, on the test's providers.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from work_helpers import drain

# Debian's Chromium as root, on a machine whose only network is the package registries (the machine
# notes: without the background-networking flags its connections are refused, many at a time).
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
HOSTILE_OUTPUT = ('FAILED tests/test_dates.py::test_leap - AssertionError\n'
                  '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">\n'
                  '1 failed, 11 passed in 0.42s')


def hook_payload(event: str, cwd: Path, session: str, **fields) -> dict:
    return {"session_id": session, "transcript_path": f"/home/dev/.claude/projects/p/{session}.jsonl",
            "cwd": str(cwd), "permission_mode": "default", "hook_event_name": event, **fields}


def tool_payload(cwd: Path, session: str, n: int, tool: str, tool_input: dict, tool_response: dict) -> dict:
    return hook_payload("PostToolUse", cwd, session, tool_name=tool, tool_use_id=f"toolu_{session}_{n:02d}",
                        tool_input=tool_input, tool_response=tool_response)


def scripted_session(project: Path, session: str = "a1b2c3d4-session") -> list[dict]:
    """One coding session: a prompt, a failing test run whose output holds markup, an edit, a routine tool
    (skipped), the passing run, the assistant's last words, the end."""
    dates = str(project / "src" / "dates.py")
    return [
        hook_payload("SessionStart", project, session, source="startup"),
        hook_payload("UserPromptSubmit", project, session,
                     prompt="Fix the leap-year bug in the date parser; we decided to keep the public API unchanged."),
        tool_payload(project, session, 1, "Bash", {"command": "pytest -q tests/test_dates.py"},
                     {"stdout": HOSTILE_OUTPUT, "stderr": "", "interrupted": False, "isImage": False}),
        tool_payload(project, session, 2, "Edit",
                     {"file_path": dates, "old_string": "return year % 4 == 0",
                      "new_string": "return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)"},
                     {"filePath": dates, "success": True}),
        tool_payload(project, session, 3, "TodoWrite", {"todos": [{"content": "fix leap", "status": "done"}]}, {}),
        tool_payload(project, session, 4, "Bash", {"command": "pytest -q tests/test_dates.py"},
                     {"stdout": "12 passed in 0.40s", "stderr": "", "interrupted": False, "isImage": False}),
        hook_payload("Stop", project, session, last_assistant_message=(
            "Fixed the leap-year rule in src/dates.py: centuries are leap years only when divisible by 400. "
            "All 12 date tests pass. Still need to update the changelog.")),
        hook_payload("SessionEnd", project, session, reason="exit"),
    ]


def capture(payloads: list[dict], mem) -> None:
    """Each payload through `mem hook`'s work, then the queue run."""
    from memcli.capture.hook import run

    for payload in payloads:
        run(json.dumps(payload))
    drain(mem)


class Running:
    """`mem ui`'s server on the store `open_mem` opens, in a thread, while the `with` block runs."""

    def __init__(self, open_mem):
        from memcli.ui.launch import Served

        self.served = Served(open_mem)
        self.thread = threading.Thread(target=self.served.run, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.served.port}"

    @property
    def url(self) -> str:
        return self.served.url

    def __enter__(self) -> "Running":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.served.stop()
        self.thread.join(30)
