"""Regular expressions that a store's mem.yaml supplies (its `redact` patterns).

mem.yaml is committed, so whoever controls a repository writes them, and every teammate's writes run
them. Python's `re` backtracks without bound: `(\\w+\\s*)+;` on a line of words without `;` runs for
ever. These run on the `regex` engine, which needs no backtracking for many such patterns, and every
search stops after TIME_BOUND_S; a pattern that is stopped fails the write (fail closed: a text must
not be stored with a secret the pattern was meant to catch). The built-in detectors stay on `re`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from memcli.errors import StoreError

TIME_BOUND_S = 1.0  # one pattern over one text: a linear pattern takes milliseconds on max_input_bytes


@dataclass(frozen=True)
class BoundedPattern:
    """A compiled store pattern with the face redaction uses (search, finditer, groupindex), each
    search bounded in time; StoreError naming the pattern when the bound is reached."""

    name: str
    compiled: object  # a regex.Pattern

    @property
    def pattern(self) -> str:
        return self.compiled.pattern

    @property
    def groupindex(self):
        return self.compiled.groupindex

    def search(self, text: str):
        try:
            return self.compiled.search(text, timeout=TIME_BOUND_S)
        except TimeoutError:
            raise self._too_slow(text) from None

    def finditer(self, text: str):
        try:
            yield from self.compiled.finditer(text, timeout=TIME_BOUND_S)
        except TimeoutError:
            raise self._too_slow(text) from None

    def _too_slow(self, text: str) -> StoreError:
        return StoreError(
            f"mem.yaml: redact pattern {self.name!r} ({self.compiled.pattern}) ran for more than {TIME_BOUND_S:g} s "
            f"on a text of {len(text)} characters and was stopped, so nothing was stored or sent. It backtracks: "
            "rewrite it without repetition that can match the same text two ways, such as (a|a)+ or (x+x+)+"
        )


@lru_cache(maxsize=64)
def compile_pattern(name: str, source: str) -> BoundedPattern:
    """The store pattern `source`, compiled; StoreError naming it when it is not a valid regex."""
    import regex

    try:
        return BoundedPattern(name, regex.compile(source))
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise StoreError(f"mem.yaml: redact pattern {name!r} has an invalid regex {source!r}: {exc}") from None
