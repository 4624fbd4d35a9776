"""Ids of memories and threads: ULIDs, so ids sort by time and two machines never collide without talking.

26 characters of Crockford base32: 48 bits of milliseconds since the epoch, then 80 random bits.
Within one process, ids made in the same millisecond increase by one, so a batch keeps its order.

One scheme names memories and threads alike: listings show an id's short id, the shortest end of it
(MIN_HANDLE characters or more) that no other id ends or begins with, taken from the random end because
ids made close in time share long beginnings; every command takes back that, the full id or any unique
beginning (what older versions showed for threads). The catalog answers the same rule in SQL for memories.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
import time
from typing import Iterable

from memcli.errors import AmbiguousId, NotFound

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
PREFIX_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{1,26}$")

MIN_HANDLE = 3  # the shortest short id shown, and so the shortest handle taken back

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


def keyed_id(millis: int, key: str) -> str:
    """An id fixed by what it stands for (a captured event's key) and when that happened: the same event
    always gets the same id, so work done again after a kill stores it once."""
    import hashlib

    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:10], "big")
    return _encode(max(0, millis) % (1 << 50), 10) + _encode(digest, 16)


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


def handle(typed: str, kind: str = "memory") -> str:
    """What a user typed to name a memory or thread, normalised (normalise_prefix); NotFound when it cannot
    name one. A handle shorter than any short id shown is refused: `mem rm 1 -y` must not pick a memory."""
    norm = normalise_prefix(typed)
    if norm is None:
        raise NotFound(f"{typed!r} is not a {kind} id (ids are 26 letters and digits, like 01JDQ4R8ZK...)")
    if len(norm) < MIN_HANDLE:
        raise NotFound(f"{typed!r} is too short to name a {kind}: give at least {MIN_HANDLE} characters "
                       "of its id (listings show a short id)")
    return norm


def resolve_among(typed: str, every: Iterable[str], kind: str, kinds: str) -> str:
    """The one id of `every` that `typed` begins or ends (a short id, the full id, a unique beginning)."""
    norm = handle(typed, kind)
    matches = sorted(ident for ident in every if ident.startswith(norm) or ident.endswith(norm))
    if not matches:
        raise NotFound(f"no {kind} with id {typed!r}")
    if len(matches) > 1:
        raise AmbiguousId(typed, matches, kinds=kinds)
    return matches[0]


def short_ids(every: Iterable[str], min_length: int = MIN_HANDLE) -> dict[str, str]:
    """id -> its short id among `every`: its shortest end of min_length+ characters that no other id
    ends with (neighbours in the order of reversed ids tell) or begins with."""
    by_end = sorted(set(every), key=lambda ident: ident[::-1])
    by_start = sorted(by_end)
    found = {}
    for index, ident in enumerate(by_end):
        neighbours = by_end[max(index - 1, 0):index] + by_end[index + 1:index + 2]
        length = max([min_length] + [1 + len(os.path.commonprefix([ident[::-1], other[::-1]])) for other in neighbours])
        while length < len(ident) and _begins_another(by_start, ident[-length:], ident):
            length += 1
        found[ident] = ident[-length:]
    return found


def _begins_another(by_start: list[str], piece: str, ident: str) -> bool:
    at = bisect.bisect_left(by_start, piece)
    return any(other.startswith(piece) and other != ident for other in by_start[at:at + 2])
