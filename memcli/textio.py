"""Reading text that users hand to mem: bounded, UTF-8 only, never binary."""

from __future__ import annotations

from typing import BinaryIO

from memcli.errors import InputError

SNIFF_BYTES = 8192


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
