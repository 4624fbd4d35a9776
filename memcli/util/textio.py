"""Reading text that users hand to mem: bounded, UTF-8 only, never binary."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Iterator

from memcli.errors import InputError, MemError

SNIFF_BYTES = 8192
# A whole record (a memory file, an import line) may be this many times max_input_bytes: the raw text,
# a short form, YAML or JSON escapes (up to six bytes a character) fit; anything larger is refused unread.
RECORD_FACTOR = 16


def looks_binary(data: bytes) -> bool:
    """NUL bytes or invalid UTF-8 in the first block mean a binary file (as git and grep decide)."""
    head = data[:SNIFF_BYTES]
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the block edge is not binary.
        return exc.start < len(head) - 3
    return False


def decode(data: bytes, origin: str, limit: int) -> str:
    if len(data) > limit:
        raise InputError(f"{origin} is larger than the limit of {limit} bytes (max_input_bytes in mem.yaml)")
    if looks_binary(data):
        raise InputError(f"{origin} looks binary; mem stores text only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{origin} is not valid UTF-8 (byte {exc.start})") from None


def read_stream(stream: BinaryIO, origin: str, limit: int) -> str:
    """Read at most limit+1 bytes, so a runaway pipe is refused without filling memory."""
    return decode(stream.read(limit + 1), origin, limit)


def bounded_lines(stream: BinaryIO, limit: int) -> Iterator[bytes | InputError]:
    """The lines of a stream as bytes, none held longer than `limit` bytes: a longer line comes out as
    the InputError that names it (and is skipped to its end), so one runaway line neither fills memory
    nor stops the lines after it."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(1 << 20)
        yield InputError(f"longer than {limit} bytes; skipped")


def open_input(name: str) -> BinaryIO:
    """A file, a FIFO, /dev/stdin or /dev/null to read from ("-" is stdin); a clear error otherwise."""
    import sys

    if name == "-":
        return sys.stdin.buffer
    path = Path(name)
    if not path.exists():
        raise InputError(f"no such file: {name}")
    if path.is_dir():
        raise InputError(f"{name} is a directory; give a file")
    try:
        return path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None


def json_object(text: str, origin: str, error: type[MemError] = InputError) -> dict:
    """One JSON object (an import line, a replayed message, a thread file), or `error` naming `origin`."""
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{origin}: not JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # a number of more digits than Python converts; deep nesting
        raise error(f"{origin}: JSON that cannot be read ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise error(f"{origin}: expected a JSON object")
    return data
