"""The prompt a chat API gets for a thread: summaries of the older turns, then recent turns verbatim.

`build` returns `[{role, content, name?}]`: first the thread's own system messages, then one system
message "Earlier in this conversation: ..." holding summaries, then turns verbatim, oldest first. It
never exceeds the budget and never cuts a message or a summary: what does not fit is left out whole.
Roles are never merged or swapped. Each message costs its content's tokens plus MESSAGE_OVERHEAD for
the chat framing, counted by the compression model's tokenizer.

Coverage comes first, then detail. Folds nest: a digest covers several older summaries (see
memcli.threads.summarize), a summary covers turns. The context starts from the coarsest cover of the
whole history: the newest turns whole, then the widest summaries, newest first (the oldest give way
when they do not all fit). When everything is covered and room is left, the newest summary is opened
into what it covers (finer summaries, or its own turns), one at a time while the whole still fits, so
recent parts read in detail, old parts in outline, and a bigger budget never gives less.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from memcli.threads.files import Fold
from memcli.threads.records import Message

MESSAGE_OVERHEAD = 4
SUMMARY_HEADER = "Earlier in this conversation:"
DEFAULT_BUDGET = 2000


@dataclass
class ChatContext:
    messages: list[dict] = field(default_factory=list)
    tokens: int = 0
    budget: int = DEFAULT_BUDGET
    turns: int = 0  # turns included verbatim
    summaries: int = 0  # summaries included
    left_out_turns: int = 0  # turns neither included nor covered by an included summary

    def to_dict(self) -> dict:
        return {"messages": self.messages, "tokens": self.tokens, "budget": self.budget, "turns": self.turns,
                "summaries": self.summaries, "left_out_turns": self.left_out_turns}


def build(messages: Sequence[Message], folds: Sequence[Fold], budget: int, count: Callable[[str], int]) -> ChatContext:
    def cost(text: str) -> int:
        return count(text) + MESSAGE_OVERHEAD

    system = [m for m in messages if m.role == "system"]
    turns = [m for m in messages if m.role != "system"]
    used = sum(cost(m.content) for m in system)
    if used > budget:
        system, used = [], 0  # the thread's own instructions cannot fit; reported as left out
    present = {m.seq for m in messages}
    cover = outermost(folds)
    folded_to = max((fold.last for fold in folds), default=0)
    tail = [m for m in turns if m.seq > folded_to]
    verbatim = _newest_that_fit(tail, budget - used, cost)
    used += sum(cost(m.content) for m in verbatim)
    summaries = _newest_summaries(cover, budget - used, cost)
    if len(verbatim) == len(tail) and len(summaries) == len(cover):
        while summaries:
            newest = summaries[-1]
            inner = outermost([f for f in folds if newest.first <= f.first and f.last <= newest.last and f is not newest])
            if inner:
                trial_summaries, trial_verbatim = summaries[:-1] + inner, verbatim
            elif all(seq in present for seq in range(newest.first, newest.last + 1)):
                trial_summaries = summaries[:-1]
                trial_verbatim = [m for m in turns if newest.first <= m.seq <= newest.last] + verbatim
            else:
                break  # pruned: the turns are gone, the summary is all there is
            trial_used = used - sum(cost(m.content) for m in verbatim) + sum(cost(m.content) for m in trial_verbatim)
            if trial_used + _block_cost(trial_summaries, cost) > budget:
                break
            summaries, verbatim, used = trial_summaries, trial_verbatim, trial_used
    result = ChatContext(budget=budget)
    out = [m.to_chat() for m in system]
    if summaries:
        out.append({"role": "system", "content": _block(summaries)})
    out += [m.to_chat() for m in verbatim]
    shown = {m.seq for m in verbatim}
    covered = {seq for fold in summaries for seq in range(fold.first, fold.last + 1)}
    result.messages = out
    result.tokens = sum(cost(m["content"]) for m in out)
    result.turns, result.summaries = len(verbatim), len(summaries)
    result.left_out_turns = sum(1 for m in turns if m.seq not in shown and m.seq not in covered)
    return result


def outermost(folds: Sequence[Fold]) -> list[Fold]:
    """The folds no other fold contains, oldest first: the coarsest cover of what was folded."""
    ordered = sorted(folds, key=lambda f: (f.first, -f.last))
    cover: list[Fold] = []
    for fold in ordered:
        if cover and fold.last <= cover[-1].last:
            continue
        cover.append(fold)
    return cover


def _newest_that_fit(turns: list[Message], room: int, cost) -> list[Message]:
    kept: list[Message] = []
    for message in reversed(turns):
        need = cost(message.content)
        if need > room:
            break
        kept.append(message)
        room -= need
    return kept[::-1]


def _newest_summaries(folds: list[Fold], room: int, cost) -> list[Fold]:
    """The summaries that fit in `room` as one block, newest first chosen, oldest first shown."""
    chosen: list[Fold] = []
    for fold in reversed(folds):
        if _block_cost([fold, *chosen], cost) > room:
            break
        chosen.insert(0, fold)
    return chosen


def _block(summaries: list[Fold]) -> str:
    return "\n".join([SUMMARY_HEADER, *(f"- {fold.memory.raw}" for fold in summaries)])


def _block_cost(summaries: list[Fold], cost) -> int:
    return cost(_block(summaries)) if summaries else 0
