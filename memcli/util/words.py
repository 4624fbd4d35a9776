"""Counts said in words: "1 memory", "2 memories"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
