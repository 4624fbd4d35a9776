"""The transcripts coding assistants keep of their sessions on disk, read back as the hook payloads the
client would have sent while the session ran (memcli.capture.past imports them through the hooks' own
path). One module per client: where its transcripts live (`found`) and what one file's lines say
(`payloads`), each payload with the time it happened.

A reader never trusts a line: one that is not JSON, not an object or cut off (a session still being
written) is counted in `Tally.bad_lines` and skipped, and the file goes on.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field


@dataclass
class Tally:
    """What reading the files met: lines skipped as malformed, per file."""

    bad_lines: int = 0
    bad_files: list[str] = field(default_factory=list)

    def bad(self, path) -> None:
        self.bad_lines += 1
        if str(path) not in self.bad_files:
            self.bad_files.append(str(path))


def parsed(line: bytes, path, tally: Tally) -> dict | None:
    """One line as a JSON object, or None (counted) when it is not one; a blank line is neither."""
    if isinstance(line, Exception):
        tally.bad(path)
        return None
    if not line.strip():
        return None
    try:
        value = json.loads(line.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        tally.bad(path)
        return None
    if not isinstance(value, dict):
        tally.bad(path)
        return None
    return value


def seconds(stamp, default: float = 0.0) -> float:
    """An ISO-8601 time (`2026-01-16T12:33:42.758Z`) as seconds since the epoch; `default` when it is
    not one."""
    if not isinstance(stamp, str) or not stamp:
        return default
    try:
        when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return default
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()


def texts(content) -> str:
    """The text of a message's content: a string, or the text blocks of a list of content blocks (a block
    without a type is one of Gemini's parts, `{"text": ...}`, or another part: `functionResponse`)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block["text"] for block in content
                         if isinstance(block, dict) and block.get("type", "text") in ("text", "input_text", "output_text")
                         and isinstance(block.get("text"), str))
    return ""
