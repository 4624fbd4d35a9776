"""The compression methods mem knows: one list read by the settings, the CLI and the pipeline.

Adding a method: a module in this package with `run(raw, model, *, ratio, max_tokens, deadline)`-like
code, a line here, and its branch in memcli.compress.pipeline. The order is the fallback order: a
method that fails falls back to the next one below it, and the last one to the raw text.
"""

from __future__ import annotations

METHODS: dict[str, str] = {
    "facts": "abstractive: one line of KEY=value pairs (needs an instruct model of ~1B parameters or more)",
    "prune": "extractive: drops the least informative words, never a protected span (the default)",
}
DEFAULT_METHOD = "prune"
# Shorter memories are stored raw: below ~50 characters (a dozen tokens) prune saves 2-3 tokens, less than
# the id and date a read puts around each memory. Above it, chat turns of 50-400 characters save 35-40%
# and blind readers answer from them as well as from the raw (README, "Short memories").
DEFAULT_MIN_CHARS = 50


def check(method: str) -> str | None:
    """Why `method` cannot be used, or None."""
    if method in METHODS:
        return None
    return f"unknown compression method {method!r} (use {' or '.join(sorted(METHODS))})"
