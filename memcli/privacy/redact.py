"""Redaction of secret-shaped text before anything is stored or handed to a model.

Each detector finds a secret and replaces only the secret itself with `[REDACTED:<kind>]`, so the
context a memory needs ("the staging DB password lives in Vault") survives. Detectors run in order,
most specific first (a GitHub token inside `GITHUB_TOKEN=...` is reported as `github-token`, not as a
generic secret); a match that touches a marker left by an earlier detector is skipped, which is what
makes redaction idempotent. What a secret looks like is memcli.privacy.detectors.

The store's own patterns (mem.yaml `redact: [{name, regex}]`) run after the built-ins, on the `regex`
engine with a time bound (memcli.util.user_regex); a pattern with a group named `secret` redacts only
that group, otherwise the whole match.
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
    """Replace every secret found by the built-in detectors and the store's `extra` patterns.

    A text holding escaped strings (JSON inside JSON, a log of a request body: `{\\"api_key\\": \\"...\\"}`,
    `\\u0022` quotes, or percent-encoded in a URL: `%22password%22%3A%22...`) is read a second time with its
    escapes undone (up to three levels); when that finds more, the text is kept so, one level plainer,
    with those secrets out."""
    found = _redacted(text, extra)
    if "\\" not in text and "%" not in text:
        return found
    suspect = [line for line in text.split("\n") if ("\\" in line or "%" in line) and _escapes_hide_secrets(line)]
    if suspect and _redacted(_plainer("\n".join(suspect)), extra).total:  # only then the whole text again
        plainer = _redacted(_plainer(text), extra)
        if plainer.total > found.total:
            return plainer
    return found


def _plainer(text: str) -> str:
    for _ in range(3):
        text = _PERCENT.sub(_decoded_percent, _ESCAPE.sub(_unescaped, text))
        if not _ESCAPE.search(text) and not _PERCENT.search(text):
            break
    return text


_ESCAPE = re.compile(r"\\([\\\"'/ntr]|u00(?:22|27|3[aAdD]))")
_PERCENT = re.compile(r"%(?:2[27]|3[aAdD]|7[bBdD]|2[cC]|20)")  # quotes, `:`, `=`, braces, `,`, space


def _decoded_percent(m: re.Match) -> str:
    return chr(int(m.group()[1:], 16))


# Where escapes can hide a secret from the detectors: a secret-like name closed by an escaped quote
# (`\\"api_key\\":`, `\\u0022`, `%22`) or followed by an encoded `=` or `:` (`password%3D`), or a
# token-like run glued to an escaped newline or tab (`\\nAKIA...`). Text with neither (most escaped JSON)
# is read once. Both are found from their backslash or percent sign, which the regex engine looks for
# fast; the name before a quote is then checked.
_ESCAPED_QUOTE = re.compile(r"\\+(?:[\"']|u00(?:22|27))|%2[27]|%3[aAdD]")
_ESCAPED_GLUE = re.compile(r"\\[ntr][A-Za-z0-9_+/-]{16,}")
_SECRET_NAME_ENDS = ("pass", "password", "passwd", "passphrase", "pw", "pwd", "secret", "token", "key", "auth",
                     "credential", "credentials", "id", "cookie", "sig")


def _escapes_hide_secrets(text: str) -> bool:
    if _ESCAPED_GLUE.search(text):
        return True
    return any(text[max(0, m.start() - 12):m.start()].lower().endswith(_SECRET_NAME_ENDS)
               for m in _ESCAPED_QUOTE.finditer(text))


_UNESCAPED = {"n": "\n", "t": "\t", "r": "\r", "u0022": '"', "u0027": "'", "u003a": ":", "u003A": ":",
              "u003d": "=", "u003D": "="}


def _unescaped(m: re.Match) -> str:
    return _UNESCAPED.get(m.group(1), m.group(1))


def _redacted(text: str, extra: Iterable[dict]) -> Redaction:
    counts: Counter[str] = Counter()
    text = _wrapped_shapes(_plain_tokens(text), counts)
    for detector in BUILTIN + store_detectors(extra):
        text = _apply(detector, text, counts)
    text = _BASE64_LINES.sub(lambda m: _replaced(m, _decoded_lines(m.group()), counts), text)
    text = _BASE64.sub(lambda m: _replaced(m, _decoded(m.group()), counts), text)
    return Redaction(text, dict(counts))


# Characters a chat, a document or a hostile hand can leave inside a key, which shapes would not see it
# through: zero-width characters, and compatibility forms whose NFKC form is ASCII (full-width letters and
# digits, ligatures such as U+FB01, mathematical and circled letters, superscript digits).
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))
_RUN = re.compile(r"(?:[A-Za-z0-9_+/=.:~-]|[^\x00-\x7f\s])+")


@lru_cache(maxsize=4096)
def _plain_char(c: str) -> str:
    import unicodedata

    plain = unicodedata.normalize("NFKC", c)
    return plain if plain.isascii() and plain.isprintable() else c


def _plain_tokens(text: str) -> str:
    """Token-like runs written plainly: zero-width characters dropped, each compatibility character whose
    NFKC form is ASCII written so. A run of 12 or more that starts in ASCII changes whenever it holds
    such characters; any other changes only when its plain form is a known key shape or holds a secret's
    name (`ｐａｓｓｗｏｒｄ=`), so text written in full-width forms (and `mc²`) stays as it is."""
    if text.isascii():
        return text
    import unicodedata

    if unicodedata.is_normalized("NFKC", text) and not any(c in text for c in "\u00ad\u200b\u200c\u200d\u2060\ufeff"):
        return text
    from memcli.privacy.detectors import SHAPES
    from memcli.privacy.secret_values import SECRET_WORD

    def plain(m: re.Match) -> str:
        run = m.group()
        if run.isascii():
            return run
        plain_run = "".join(map(_plain_char, run.translate(_INVISIBLE)))
        if plain_run == run:
            return run
        if (len(run) >= 12 and run[0].isascii()) or SECRET_WORD.search(plain_run) \
                or any(detector.pattern.search(plain_run) for detector in SHAPES):
            return plain_run
        return run

    return _RUN.sub(plain, text)


# Two token-like runs, the first at a line's end and the second at the next line's start (a key wrapped
# by an e-mail client or a terminal), and a run that may be base64 (of a key, written as an env value).
_WRAPPED = re.compile(r"(?<![\w+/=.-])([\w+/=.-]{8,})[ \t]*\r?\n[ \t]*([\w+/=.-]{4,})(?![\w+/=.-])")
_BASE64 = re.compile(r"(?<![\w+/-])[A-Za-z0-9+/]{24,4096}={0,2}(?![\w+/=-])")
# base64 as `base64` and PEM write it: lines of one length (76, 64) and a shorter last one.
_BASE64_LINES = re.compile(r"(?<![\w+/=-])(?:[A-Za-z0-9+/]{40,100}\r?\n){1,60}[A-Za-z0-9+/]{4,100}={0,2}(?![\w+/=-])")


def _wrapped_shapes(text: str, counts: Counter) -> str:
    """A key known by its shape and wrapped over two lines, replaced whole (before the detectors that
    would take only its first half as an assigned value)."""
    if "\n" not in text:
        return text
    return _WRAPPED.sub(lambda m: _replaced(m, m.group(1) + m.group(2), counts, split=len(m.group(1))), text)


def _replaced(m: re.Match, whole: str | None, counts: Counter, split: int | None = None) -> str:
    """The marker for the shape found in `whole` (across `split`, when given), else the match as it was.
    `whole` is what the match stands for: its two halves joined, or what its base64 decodes to."""
    from memcli.privacy.detectors import SHAPES

    for detector in SHAPES if whole else ():
        if detector.keywords and not any(word in whole for word in detector.keywords):
            continue
        for found in detector.pattern.finditer(whole):
            # A wrapped key is cut by the line's end: its first half alone is no key, and it ends the second run.
            wrapped = split is None or (found.start() < split and found.end() == len(whole)
                                        and not detector.pattern.search(whole[:split]))
            if wrapped and detector.accept(found):
                counts[detector.kind] += 1
                return f"[REDACTED:{detector.kind}]"
    return m.group()


def _decoded(run: str) -> str | None:
    """What a base64 run stands for, when that is text (lines of it: a credentials file)."""
    import base64
    import binascii

    try:
        data = base64.b64decode(run + "=" * (-len(run) % 4))
    except (binascii.Error, ValueError):
        return None
    text = data.decode("ascii", "replace")
    return text if text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable() else None


def _decoded_lines(block: str) -> str | None:
    """What a block of wrapped base64 lines stands for, when every line but the last has one length."""
    lines = block.split()
    if len({len(line) for line in lines[:-1]}) != 1 or len(lines[0]) % 4 or len(lines[-1]) > len(lines[0]):
        return None
    return _decoded("".join(lines))


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
    from memcli.util.user_regex import compile_pattern

    return tuple(Detector(name, compile_pattern(name, regex)) for name, regex in rules)


# What still marks a private key after redaction: a BEGIN line without its END, an END line without its
# BEGIN, or the private part of a PuTTY key without its header or MAC.
PRIVATE_KEY_TRACE = re.compile(r"-{4,5} ?(?:BEGIN|END)[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?(?: ?-{4,5})?|PuTTY-User-Key-File-\d+:"
                               r"|^Private-Lines:[ \t]*\d+", re.MULTILINE)


def check_no_private_key(text: str) -> None:
    """The kill switch: a private key that got past redaction (a truncated block, say) stops the write."""
    m = PRIVATE_KEY_TRACE.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise Refused(
            f"refusing to store this text: it still holds a private key ('{m.group()}' on line {line}) "
            "after redaction; remove the key and try again"
        )
