"""Memory ids: ULIDs, so ids sort by time and two machines never collide without talking.

26 characters of Crockford base32: 48 bits of milliseconds since the epoch, then 80 random bits.
Within one process, ids made in the same millisecond increase by one, so a batch keeps its order.
"""

from __future__ import annotations

import os
import re
import threading
import time

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
PREFIX_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{1,26}$")

_lock = threading.Lock()
_last = (0, 0)


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        value, digit = divmod(value, 32)
        chars.append(ALPHABET[digit])
    return "".join(reversed(chars))


def new_id(now_ms: int | None = None) -> str:
    global _last
    with _lock:
        millis = int(time.time() * 1000) if now_ms is None else now_ms
        last_ms, last_rand = _last
        if millis <= last_ms:
            millis, rand = last_ms, last_rand + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last = (millis, rand)
    return _encode(millis, 10) + _encode(rand % (1 << 80), 16)


def created_ms(memory_id: str) -> int:
    """The creation time an id carries, in milliseconds since the epoch."""
    value = 0
    for char in memory_id[:10]:
        value = value * 32 + ALPHABET.index(char)
    return value


def normalise_prefix(text: str) -> str | None:
    """Upper-case and map Crockford look-alikes (i/l→1, o→0); None when it cannot be an id prefix."""
    candidate = text.strip().upper().translate(str.maketrans("ILO", "110"))
    return candidate if PREFIX_RE.match(candidate) else None


def is_valid(text: str) -> bool:
    return bool(ID_RE.match(text))
