"""What compression saves a reader: tokens of the raw texts against tokens actually read."""

from __future__ import annotations

from typing import Callable, Iterable

from memcli.core.reading import listing
from memcli.store.memory import Memory

UNKNOWN_KIND = "unknown"  # compressed before mem knew kinds: `mem compress --all` finds it


def savings(memories: Iterable[Memory], count_tokens: Callable[[str], int], tokenizer: str) -> dict:
    """Totals, by status, by method (the compressed memories) and by kind (every memory whose counts
    were stored: one kept raw reads as many tokens as it has). Stored token counts are used where the
    compressor left them; only memories without them are counted with the tokenizer."""
    totals = {"memories": 0, "optimized": 0, "raw_tokens": 0, "read_tokens": 0}
    by_status: dict[str, int] = {}
    by_method: dict[str, dict] = {}
    by_kind: dict[str, dict] = {}
    for memory in memories:
        info = memory.compression or {}
        status = info.get("status", "none")
        by_status[status] = by_status.get(status, 0) + 1
        stored = stored_counts(memory)
        raw_tokens, read_tokens = stored or (count_tokens(memory.raw),) * 2
        if memory.optimized and stored:
            method = by_method.setdefault(str(info.get("method")), {"memories": 0, "raw_tokens": 0, "tokens": 0})
            method["memories"] += 1
            method["raw_tokens"] += raw_tokens
            method["tokens"] += read_tokens
            totals["optimized"] += 1
        if stored:
            kind = by_kind.setdefault(str(info.get("kind") or UNKNOWN_KIND), {"memories": 0, "raw_tokens": 0, "tokens": 0})
            kind["memories"] += 1
            kind["raw_tokens"] += raw_tokens
            kind["tokens"] += read_tokens
        totals["memories"] += 1
        totals["raw_tokens"] += raw_tokens
        totals["read_tokens"] += read_tokens
    for row in [*by_method.values(), *by_kind.values()]:
        row["saved_percent"] = _percent(row["raw_tokens"] - row["tokens"], row["raw_tokens"])
    return {
        **totals,
        "optimized_percent": _percent(totals["optimized"], totals["memories"]),
        "saved_tokens": totals["raw_tokens"] - totals["read_tokens"],
        "saved_percent": _percent(totals["raw_tokens"] - totals["read_tokens"], totals["raw_tokens"]),
        "by_status": by_status,
        "by_method": by_method,
        "by_kind": by_kind,
        "tokenizer": tokenizer,
    }


def store_savings(mem) -> dict:
    """What compression saves a reader of this store (`mem stats`)."""
    return savings(listing(mem), lambda text: mem.token_counter()(text), mem.settings.compress_model)


def stored_counts(memory: Memory) -> tuple[int, int] | None:
    """(raw tokens, tokens read by default) as the write left them, or None. A memory kept raw reads
    its raw text, so its two counts are the same."""
    info = memory.compression or {}
    raw, short = info.get("raw_tokens"), info.get("tokens") if memory.optimized else info.get("raw_tokens")
    return (raw, short) if isinstance(raw, int) and isinstance(short, int) else None


def read_cost(memories: Iterable[Memory], count_tokens: Callable[[str], int], *, raw: bool = False) -> dict:
    """What a read handed over, in tokens: `tokens` of the contents returned and `raw_tokens` of the raw
    texts of the same memories. Stored counts where there are some; the tokenizer only for the rest."""
    tokens = raw_tokens = 0
    for memory in memories:
        stored = stored_counts(memory)
        full, short = stored if stored else (count_tokens(memory.raw), None)
        raw_tokens += full
        tokens += full if raw or not memory.optimized else short if short is not None else count_tokens(memory.content)
    return {"tokens": tokens, "raw_tokens": raw_tokens}


def _percent(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0
