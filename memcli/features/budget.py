"""Packing the best memories into a token budget: a block an assistant can paste into its prompt.

The block groups memories under the day they were made, days in the order of their best memory,
memories best first within a day; each memory is one line, its text (search results and, when asked,
a context block put its short id before it, to act on it):

    29 Nov 2026
    Amazon blocks IPs after about 30 requests per second
    the scraper backs off for 10 minutes after a 429
    3 Oct
    proxies rotate every 50 requests

A reader pays about a token per character of an id or a date, as much as a short memory's own words,
so each day is said once (its year only when it changes), on a line of its own with nothing else (a
colon after it would cost a token a day), a block for reading has no ids, and an id shown is the
shortest unique tail (see CatalogQueries.short_id).

What counts toward the budget is the whole block exactly as it is printed, every newline included.
It is counted in one piece by the compression model's tokenizer, because tokens do not add up line by
line (a tokenizer may merge across a line break); so each candidate is tried by counting the block with
it added, and kept only when the whole still fits. A memory that does not fit is skipped and the
smaller ones after it are still tried.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from memcli.core.reading import search
from memcli.errors import InputError
from memcli.index.filters import Filters
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
    under_cut: float | None = None  # nothing found: the best score the search's cut-off left out

    def to_contract(self) -> dict:
        """The JSON form (CLI --json, MCP): the block, its token count, how many results did not fit, and
        the chosen memories by id and score (their content is in the block already, not repeated)."""
        data = {"text": self.text, "tokens": self.tokens, "budget": self.budget}
        if self.skipped:
            data["skipped"] = self.skipped
        data["memories"] = [{"id": hit.memory.id, "score": round(float(hit.score), 4)} for hit in self.hits]
        return data


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def day_names(iso_days: Iterable[str]) -> list[str]:
    """'2023-05-08' → '8 May 2023' (fewer tokens than the ISO form, and no locale), the year left out
    where it is the year of the day named before ('8 May 2023', then '20 Jul'), as calendars do."""
    names, year_said = [], None
    for iso in iso_days:
        year, month, date = iso.split("-")
        names.append(f"{int(date)} {MONTHS[int(month) - 1]}" + (f" {year}" if year != year_said else ""))
        year_said = year
    return names


def block(memories: Sequence[Memory], short_id: Callable[[str], str] | None, *, raw: bool = False,
          include_raw: bool = False) -> str:
    """The read shape of several memories (MCP results, `mem context`): see the module's docstring.
    include_raw adds an indented `raw:` line under each memory whose raw text differs from the line's."""
    lines = []
    for memory in memories:
        body = " ".join((memory.raw if raw else memory.content).split())
        line = f"{short_id(memory.id)} {body}" if short_id else body
        if include_raw and not raw and memory.content != memory.raw:
            line += "\n  raw: " + " ".join(memory.raw.split())
        lines.append((memory.created_at[:10], line))
    return dated(lines)


def dated(lines: Iterable[tuple[str, str]]) -> str:
    """(ISO day, line) pairs as a block: each day once, days in the order of their first line, each
    day's lines in their order under it."""
    by_day: dict[str, list[str]] = {}
    for day, line in lines:
        by_day.setdefault(day, []).append(line + "\n")
    return "".join(f"{name}\n" + "".join(lines) for name, lines in zip(day_names(by_day), by_day.values()))


def pack(hits: Sequence[Hit], budget: int, count: Callable[[str], int], *, raw: bool = False,
         short_id: Callable[[str], str] | None = None) -> Packed:
    """Greedy by score: take each hit when the block with it still fits."""
    check_budget(budget)
    text, tokens, chosen, skipped = "", 0, [], 0
    for hit in hits:
        candidate = block([h.memory for h in chosen] + [hit.memory], short_id, raw=raw)
        used = count(candidate)
        if used <= budget:
            text, tokens = candidate, used
            chosen.append(hit)
        else:
            skipped += 1
    return Packed(text, tokens, budget, chosen, skipped)


def search_within(mem, query: str, budget: int, *, raw: bool = False, ids: bool = False, k: int = 20,
            mode: str = "hybrid", filters: Filters = Filters(), min_score: float | None = None,
            progress=None) -> Packed:
    """The best of the top k memories that fit in `budget` tokens, as a block for a prompt, with short
    ids when `ids` (`mem context`, MCP memory_context)."""
    check_budget(budget)
    hits = search(mem, query, k=k, mode=mode, filters=filters, min_score=min_score, progress=progress)
    if not hits:
        return Packed("", 0, budget, under_cut=getattr(hits, "under_cut", None))
    return pack(hits, budget, mem.token_counter(), raw=raw, short_id=mem.catalog.short_id if ids else None)


def check_budget(budget: int) -> None:
    if budget < 1:
        raise InputError(f"the token budget must be at least 1 (got {budget})")
