"""Abstractive compression: one line of KEY=value facts written by an instruct model.

The output is held to the line format by a llama.cpp grammar, capped in tokens, and cut as soon as
the model starts repeating itself (small models loop). With the tiny default model the line usually
invents or drops facts; the guard then rejects it and the compressor falls back to `prune`.
"""

from __future__ import annotations

import re

from memcli.providers.protocols import CompressionModel, Deadline

KEYS = (
    "TOPIC", "PROJECT", "DECISION", "PREFERENCE", "PERSON", "PLACE", "DATE", "STACK", "PROBLEM",
    "SOLUTION", "GOAL", "CONSTRAINT", "FACT", "EVENT",
)
SEPARATOR = " | "
MAX_PAIRS = 16
MAX_VALUE_CHARS = 120

SYSTEM_PROMPT = (
    "You turn a note into facts. Answer with ONE line of KEY=value pairs joined by ' | '. "
    f"Use only these keys: {', '.join(KEYS)}. A key may repeat. "
    "Copy every name, number, date, version, path and identifier exactly as written in the note. "
    "Keep negations. Never add anything the note does not say. No other text."
)

GRAMMAR = rf"""
root  ::= pair (" | " pair){{0,{MAX_PAIRS - 1}}}
pair  ::= key "=" value
key   ::= {" | ".join(f'"{k}"' for k in KEYS)}
value ::= [^|=\n ] [^|=\n]{{0,{MAX_VALUE_CHARS - 1}}}
"""

_LOOP = re.compile(r"(.{4,}?)\1{2,}$", re.S)


def facts(raw: str, model: CompressionModel, *, max_tokens: int, deadline: Deadline) -> str:
    """The facts line for raw; stops early when the model repeats a pair or loops inside a value."""
    text, pieces, cut = "", 0, False
    stream = model.generate(SYSTEM_PROMPT, raw, grammar=GRAMMAR, max_tokens=max_tokens, deadline=deadline)
    try:
        for piece in stream:
            text, pieces = text + piece, pieces + 1
            if _repeats(text):
                cut = True
                break
    finally:
        # Closing the generator at once releases the model it holds (see memcli.providers.llama._LLAMA_LOCK).
        getattr(stream, "close", lambda: None)()
    return clean(text, last_is_cut=cut or pieces >= max_tokens)


def clean(text: str, *, last_is_cut: bool = False) -> str:
    """Distinct pairs only; the last pair goes too when the cap or a loop cut it short."""
    pairs: list[str] = []
    seen: set[str] = set()
    chunks = text.split(SEPARATOR)
    for chunk in chunks[:-1] if last_is_cut else chunks:
        key, _, value = chunk.partition("=")
        key, value = key.strip(), " ".join(value.split()).strip(" ,;")
        if key not in KEYS or not value:
            continue
        identity = value.lower()
        if identity in seen:
            continue
        seen.add(identity)
        pairs.append(f"{key}={value}")
    return SEPARATOR.join(pairs)


def _repeats(text: str) -> bool:
    chunks = text.split(SEPARATOR)
    if len(chunks) > 2:
        finished = [c.strip().lower() for c in chunks[:-1]]
        if finished[-1] in finished[:-1]:
            return True
    return _LOOP.search(text[-200:]) is not None
