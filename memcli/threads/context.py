"""The prompt a chat API gets for a thread: summaries of the older turns, then recent turns verbatim.

`build` returns `[{role, content, name?}]`: first the thread's own system messages, then one system
message "Earlier in this conversation: ..." holding summaries, then turns verbatim, oldest first. It
never exceeds the budget and never cuts a message or a summary: what does not fit is left out whole.
Coverage comes first, then fidelity: the newest turns are kept whole, then the summaries of folded
turns newest first (the oldest give way when they do not all fit); when every summary fits and room
is left, the newest folds are shown as their own turns instead of their summary, one fold at a time,
so a bigger budget never gives less. Roles are never merged or swapped. Each message costs its
content's tokens plus MESSAGE_OVERHEAD for the chat framing, counted by the compression model's
tokenizer.
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
    left_out_summaries: int = 0

    def to_dict(self) -> dict:
        return {"messages": self.messages, "tokens": self.tokens, "budget": self.budget, "turns": self.turns,
                "summaries": self.summaries, "left_out_turns": self.left_out_turns,
                "left_out_summaries": self.left_out_summaries}


def build(messages: Sequence[Message], folds: Sequence[Fold], budget: int, count: Callable[[str], int]) -> ChatContext:
    def cost(text: str) -> int:
        return count(text) + MESSAGE_OVERHEAD

    system = [m for m in messages if m.role == "system"]
    turns = [m for m in messages if m.role != "system"]
    used = sum(cost(m.content) for m in system)
    if used > budget:
        system, used = [], 0  # the thread's own instructions cannot fit; reported as left out
    present = {m.seq for m in messages}
    folds = list(folds)
    folded_to = max((fold.last for fold in folds), default=0)
    verbatim = _newest_that_fit([m for m in turns if m.seq > folded_to], budget - used, cost)
    used += sum(cost(m.content) for m in verbatim)
    summaries = _newest_summaries(folds, budget - used, cost)
    if len(verbatim) == len([m for m in turns if m.seq > folded_to]) and len(summaries) == len(folds):
        # Everything is covered: spend what is left on showing the newest folds as their own turns.
        while folds:
            fold = folds[-1]
            if not all(seq in present for seq in range(fold.first, fold.last + 1)):
                break  # pruned: the fold's turns are gone, only its summary is left
            own = [m for m in turns if fold.first <= m.seq <= fold.last]
            trial_used = used + sum(cost(m.content) for m in own)
            rest = _newest_summaries(folds[:-1], budget - trial_used, cost)
            if len(rest) < len(folds) - 1 or trial_used + _block_cost(rest, cost) > budget:
                break
            verbatim, used, folds = own + verbatim, trial_used, folds[:-1]
            summaries = rest
    result = ChatContext(budget=budget)
    out = [m.to_chat() for m in system]
    if summaries:
        out.append({"role": "system", "content": _block(summaries)})
    out += [m.to_chat() for m in verbatim]
    shown = {m.seq for m in verbatim}
    covered = {seq for fold, _ in summaries for seq in range(fold.first, fold.last + 1)}
    result.messages = out
    result.tokens = sum(cost(m["content"]) for m in out)
    result.turns, result.summaries = len(verbatim), len(summaries)
    result.left_out_summaries = len(folds) - len(summaries)
    result.left_out_turns = sum(1 for m in turns if m.seq not in shown and m.seq not in covered)
    return result


def _newest_that_fit(turns: list[Message], room: int, cost) -> list[Message]:
    kept: list[Message] = []
    for message in reversed(turns):
        need = cost(message.content)
        if need > room:
            break
        kept.append(message)
        room -= need
    return kept[::-1]


def _newest_summaries(folds: list[Fold], room: int, cost) -> list[tuple[Fold, str]]:
    """The summaries that fit in `room` as one block, newest first chosen, oldest first shown."""
    chosen: list[tuple[Fold, str]] = []
    for fold in reversed(folds):
        candidate = [(fold, f"- {fold.memory.raw}"), *chosen]
        if _block_cost(candidate, cost) > room:
            break
        chosen = candidate
    return chosen


def _block(summaries: list[tuple[Fold, str]]) -> str:
    return "\n".join([SUMMARY_HEADER, *(line for _, line in summaries)])


def _block_cost(summaries: list[tuple[Fold, str]], cost) -> int:
    return cost(_block(summaries)) if summaries else 0

