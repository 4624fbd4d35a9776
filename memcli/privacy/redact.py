"""Redaction of secret-shaped text before anything is stored or handed to a model.

Each detector finds a secret and replaces only the secret itself with `[REDACTED:<kind>]`, so the
context a memory needs ("the staging DB password lives in Vault") survives. Detectors run in order,
most specific first (a GitHub token inside `GITHUB_TOKEN=...` is reported as `github-token`, not as a
generic secret); a match that touches a marker left by an earlier detector is skipped, which is what
makes redaction idempotent. What a secret looks like is memcli.privacy.detectors.

The store's own patterns (mem.yaml `redact: [{name, regex}]`) run after the built-ins; a pattern
with a group named `secret` redacts only that group, otherwise the whole match.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

from memcli.errors import Refused, StoreError
from memcli.privacy.detectors import BUILTIN, Detector

MARKER = re.compile(r"\[REDACTED:[A-Za-z0-9_.-]+\]")
KIND_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass
class Redaction:
    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def redact(text: str, extra: Iterable[dict] = ()) -> Redaction:
    """Replace every secret found by the built-in detectors and the store's `extra` patterns."""
    counts: Counter[str] = Counter()
    for detector in BUILTIN + store_detectors(extra):
        text = _apply(detector, text, counts)
    return Redaction(text, dict(counts))


def store_detectors(extra: Iterable[dict]) -> tuple[Detector, ...]:
    """Detectors for mem.yaml's `redact` list; a broken entry is a StoreError naming it.

    Call it when a store opens to report a bad pattern before any write is attempted.
    """
    rules = []
    for rule in extra:
        name, regex = rule.get("name"), rule.get("regex")
        if not isinstance(name, str) or not KIND_NAME.match(name):
            raise StoreError(
                f"mem.yaml: redact pattern name {name!r} must be letters, digits, '-', '_' or '.' "
                "(it becomes [REDACTED:<name>])"
            )
        if not isinstance(regex, str) or not regex:
            raise StoreError(f"mem.yaml: redact pattern {name!r} needs a non-empty 'regex' string")
        rules.append((name, regex))
    return _compile(tuple(rules))


def _apply(detector: Detector, text: str, counts: Counter) -> str:
    if detector.keywords and not any(word in text for word in detector.keywords):
        return text
    if not detector.pattern.search(text):
        return text
    markers = [m.span() for m in MARKER.finditer(text)]
    marker_ends = [e for _, e in markers]
    out: list[str] = []
    pos = 0
    for m in detector.pattern.finditer(text):
        start, end = detector.span(m)
        # Markers do not overlap, so only the first one ending after `start` can touch the span.
        i = bisect_right(marker_ends, start)
        if start == end or (i < len(markers) and markers[i][0] < end) or not detector.accept(m):
            continue
        kind = detector.kind_of(m)
        out.append(text[pos:start])
        out.append(f"[REDACTED:{kind}]")
        pos = end
        counts[kind] += 1
    out.append(text[pos:])
    return "".join(out)


@lru_cache(maxsize=32)
def _compile(rules: tuple[tuple[str, str], ...]) -> tuple[Detector, ...]:
    detectors = []
    for name, regex in rules:
        try:
            detectors.append(Detector(name, re.compile(regex)))
        except re.error as exc:
            raise StoreError(f"mem.yaml: redact pattern {name!r} has an invalid regex {regex!r}: {exc}") from None
    return tuple(detectors)


# What still marks a private key after redaction: a BEGIN line without its END, or the private part of
# a PuTTY key without its header or MAC.
PRIVATE_KEY_TRACE = re.compile(r"-{4,5} ?BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?(?: ?-{4,5})?|PuTTY-User-Key-File-\d+:|^Private-Lines:[ \t]*\d+",
                               re.MULTILINE)


def check_no_private_key(text: str) -> None:
    """The kill switch: a private key that got past redaction (a truncated block, say) stops the write."""
    m = PRIVATE_KEY_TRACE.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise Refused(
            f"refusing to store this text: it still holds a private key ('{m.group()}' on line {line}) "
            "after redaction; remove the key and try again"
        )
