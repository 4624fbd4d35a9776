"""Extractive compression: drop the words a reader can do without, keep every protected span.

One forward pass of a small causal LM gives each token's surprisal (Selective Context, LLMLingua):
a word the model predicts easily adds little. The ranking (memcli.compress.drop_order) orders the words
by class first and surprisal second; the function words with no relation role go whatever the target
(no answer needs them: a short chat turn that reaches the target early kept its "I've" and "it"),
then words are dropped in that order until the text fits the target ratio of the raw token count. A text dense with spans and things ends up above the ratio: the reader
keeps what it would ask about and the words that relate it.
"""

from __future__ import annotations

import math

from memcli.compress.drop_order import (
    Ranker,
    always_dropped,
    rank_by_surprisal,
    rank_combined,
    rank_stopwords,
)
from memcli.compress.units import Unit, attach_scores, render, split_units
from memcli.providers.protocols import CompressionModel, Deadline

__all__ = ["Unit", "prune", "rank_by_surprisal", "rank_combined", "rank_stopwords", "render"]


def prune(
    text: str,
    model: CompressionModel,
    *,
    ratio: float = 0.6,
    rank: Ranker | None = None,
    deadline: Deadline | None = None,
) -> str:
    """text with its least informative words dropped, down to ratio x its token count at best."""
    deadline = deadline or Deadline(math.inf)
    units = split_units(text)
    scores = model.surprisals(text, deadline)
    attach_scores(text, units, scores)
    ranks = (rank or rank_combined)(units)
    order = sorted((i for i, r in enumerate(ranks) if r is not None), key=lambda i: (ranks[i], i))
    keep = [True] * len(units)
    raw_tokens = model.count_tokens(text)
    target = math.floor(ratio * raw_tokens)
    cursor = 0
    while cursor < len(order) and always_dropped(ranks[order[cursor]]):
        keep[order[cursor]] = False
        cursor += 1
    estimate = model.count_tokens(render(units, keep))  # the marks render leaves out count too
    while True:
        while cursor < len(order) and estimate > target:
            unit = units[order[cursor]]
            keep[order[cursor]] = False
            estimate -= max(1, unit.tokens)
            cursor += 1
        result = render(units, keep)
        if cursor >= len(order):
            return result
        estimate = model.count_tokens(result)
        if estimate <= target:
            return result
