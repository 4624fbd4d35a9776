"""Extractive compression of prose: drop only what is safe to drop, keep every other word.

The words that may go are a closed set, each shown safe in its place (memcli.compress.meaning:
articles, an auxiliary before a participle, fillers and pleasantries of chat, ...); every other word
stays, and so does every protected span and mark of punctuation, so a form says nothing its raw text
did not and keeps every sentence apart. Usually dropping all of them leaves the text above its target
(`ratio` of the raw tokens): then no forward pass is needed at all. When it would go below, the small
causal LM's surprisal (Selective Context, LLMLingua) chooses: the least surprising go first, until the
target is met.
"""

from __future__ import annotations

import math

from memcli.compress.drop_order import Ranker, rank_by_surprisal, rank_safe, rank_stopwords
from memcli.compress.units import Unit, attach_scores, render, split_units
from memcli.providers.protocols import CompressionModel, Deadline

__all__ = ["Unit", "prune", "rank_by_surprisal", "rank_safe", "rank_stopwords", "render"]


def prune(
    text: str,
    model: CompressionModel,
    *,
    ratio: float = 0.6,
    rank: Ranker | None = None,
    deadline: Deadline | None = None,
) -> str:
    """text without the words `rank` makes candidates, down to ratio x its token count at best."""
    deadline = deadline or Deadline(math.inf)
    rank = rank or rank_safe
    units = split_units(text)
    candidates = [i for i, r in enumerate(rank(units)) if r is not None]  # which, not in what order
    keep = [True] * len(units)
    for i in candidates:
        keep[i] = False
    target = math.floor(ratio * model.count_tokens(text))
    every_one_gone = render(units, keep)
    if model.count_tokens(every_one_gone) > target:
        return every_one_gone
    attach_scores(text, units, model.surprisals(text, deadline))
    ranks = rank(units)
    order = sorted(candidates, key=lambda i: (ranks[i], i))
    keep = [True] * len(units)
    estimate = model.count_tokens(text)
    cursor = 0
    while True:
        while cursor < len(order) and estimate > target:
            keep[order[cursor]] = False
            estimate -= max(1, units[order[cursor]].tokens)
            cursor += 1
        result = render(units, keep)
        if cursor >= len(order):
            return result
        estimate = model.count_tokens(result)  # the marks render leaves out count too
        if estimate <= target:
            return result
