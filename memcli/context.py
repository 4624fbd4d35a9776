"""Packing the best memories into a token budget: a block an assistant can paste into its prompt.

The block is one line per memory, best first, each line ending in a newline:

    [01JDQ4R8 2026-11-29] Amazon blocks IPs after about 30 requests per second

What counts toward the budget is the whole block exactly as it is printed: every `[id date] ` prefix,
the text, and every newline, including the last one. There is no header. It is counted in one piece by
the compression model's tokenizer, because tokens do not add up line by line (a tokenizer may merge
across a line break); so each candidate is tried by counting the block with it added, and kept only
when the whole still fits. A memory that does not fit is skipped and the smaller ones after it are
still tried.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from memcli.errors import InputError
from memcli.index.search import Hit
from memcli.store.memory import Memory

DEFAULT_BUDGET = 1000
"""Tokens a block may take when the caller does not say: room for a dozen compressed memories, a small
share of even a small model's context window."""


@dataclass
class Packed:
    text: str
    tokens: int
    budget: int
    hits: list[Hit] = field(default_factory=list)
    skipped: int = 0

    def to_contract(self) -> dict:
        """The JSON form (CLI --json, MCP): the block, its token count, how many results did not fit, and
        the chosen memories by id and score (their content is in the block already, not repeated)."""
        data = {"text": self.text, "tokens": self.tokens, "budget": self.budget}
        if self.skipped:
            data["skipped"] = self.skipped
        data["memories"] = [{"id": hit.memory.id, "score": round(float(hit.score), 4)} for hit in self.hits]
        return data


def line_for(memory: Memory, short_id: str, *, raw: bool = False) -> str:
    body = " ".join((memory.raw if raw else memory.content).split())
    return f"[{short_id} {memory.created_at[:10]}] {body}\n"


def pack(hits: Sequence[Hit], budget: int, count: Callable[[str], int], *, raw: bool = False,
         short_id: Callable[[str], str] = lambda memory_id: memory_id) -> Packed:
    """Greedy by score: take each hit whose line still fits with everything taken so far."""
    check_budget(budget)
    text, tokens, chosen, skipped = "", 0, [], 0
    for hit in hits:
        candidate = text + line_for(hit.memory, short_id(hit.memory.id), raw=raw)
        used = count(candidate)
        if used <= budget:
            text, tokens = candidate, used
            chosen.append(hit)
        else:
            skipped += 1
    return Packed(text, tokens, budget, chosen, skipped)


def check_budget(budget: int) -> None:
    if budget < 1:
        raise InputError(f"the token budget must be at least 1 (got {budget})")
