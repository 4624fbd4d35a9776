"""The prompt a chat API gets for a thread: summaries of the older turns, then recent turns verbatim.

`build` returns `[{role, content, name?}]`: first the thread's own system messages, then one system
message "Earlier in this conversation:" holding summaries, a line each, then turns verbatim, oldest
first. It never exceeds the budget and never cuts a message: what does not fit is left out whole.
When every summary and every unfolded turn fit, all are shown, and the room left shows the newest
folds as their own turns instead of their summary, one fold at a time. When they do not all fit, the
newest turn is kept first, and the rest of the budget goes, facts first, to what carries the most
(see memcli.threads.coverage): the summaries' sentences and the older unfolded turns alike, those
stating facts not yet shown before any other, so every stretch of the conversation keeps its names,
numbers, preferences and decisions; repetition gives way first, the older before the newer, and a
filler ("Sounds good.") is the first thing left out. Without summaries, the turns kept are the newest
that fit, fillers left out first. What was shortened is counted: the sentences left out, and how many
of the summaries' facts the context no longer holds. Roles are never merged or swapped.
Each message costs its content's tokens plus MESSAGE_OVERHEAD for the chat framing, counted by the
compression model's tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from memcli.threads.coverage import lines, parse, select
from memcli.threads.kept_facts import facts, is_filler_turn, words_of
from memcli.threads.storage import Fold
from memcli.threads.records import Message
from memcli.util.words import counted

MESSAGE_OVERHEAD = 4
SUMMARY_HEADER = "Earlier in this conversation:"
DEFAULT_BUDGET = 2000


@dataclass
class ChatContext:
    messages: list[dict] = field(default_factory=list)
    tokens: int = 0
    budget: int = DEFAULT_BUDGET
    turns: int = 0  # turns included verbatim
    summaries: int = 0  # summaries included, whole or in part
    shortened: int = 0  # summaries of which only some sentences fit
    left_out_turns: int = 0  # turns neither included nor covered by an included summary
    left_out_summaries: int = 0
    left_out_sentences: int = 0  # of the summaries, whether or not their summary is shown
    left_out_facts: int = 0  # facts of the summaries that the messages no longer hold

    def to_dict(self) -> dict:
        return {"messages": self.messages, "tokens": self.tokens, "budget": self.budget, "turns": self.turns,
                "summaries": self.summaries, "shortened": self.shortened, "left_out_turns": self.left_out_turns,
                "left_out_summaries": self.left_out_summaries, "left_out_sentences": self.left_out_sentences,
                "left_out_facts": self.left_out_facts}

    def report(self) -> str:
        """One line saying what the context holds and what it shortened, for a person or a model."""
        shortened = ""
        if self.shortened or self.left_out_sentences:
            lost = f"{counted(self.left_out_facts, 'fact')} lost" if self.left_out_facts else "no fact lost"
            shortened = (f" ({self.shortened} shortened: {counted(self.left_out_sentences, 'sentence')} left out,"
                         f" {lost})")
        left = self.left_out_turns + self.left_out_summaries
        return (f"{self.tokens} of {self.budget} tokens: {counted(self.summaries, 'summary', 'summaries')}{shortened}, "
                f"{counted(self.turns, 'turn')}" + (f"; {counted(left, 'older item')} did not fit" if left else ""))


def build(messages: Sequence[Message], folds: Sequence[Fold], budget: int, count: Callable[[str], int]) -> ChatContext:
    def cost(text: str) -> int:
        return count(text) + MESSAGE_OVERHEAD

    def block_cost(block_lines: list[str]) -> int:
        return cost(_block(block_lines)) if block_lines else 0

    system = [m for m in messages if m.role == "system"]
    turns = [m for m in messages if m.role != "system"]
    used = sum(cost(m.content) for m in system)
    if used > budget:
        system, used = [], 0  # the thread's own instructions cannot fit; reported as left out
    present = {m.seq for m in messages}
    folds = list(folds)
    digests = [parse(fold.memory.raw) for fold in folds]
    folded_to = max((fold.last for fold in folds), default=0)
    tail = [m for m in turns if m.seq > folded_to]
    chosen = {d: set(range(len(digest.units))) for d, digest in enumerate(digests)}
    if block_cost(lines(digests, chosen)) + sum(cost(m.content) for m in tail) <= budget - used:
        verbatim = tail
        used += sum(cost(m.content) for m in tail)
        # Everything is covered: spend what is left on showing the newest folds as their own turns.
        while folds and all(seq in present for seq in range(folds[-1].first, folds[-1].last + 1)):
            own = [m for m in turns if folds[-1].first <= m.seq <= folds[-1].last]
            trial_used = used + sum(cost(m.content) for m in own)
            fewer = {d: keep for d, keep in chosen.items() if d < len(folds) - 1}
            if trial_used + block_cost(lines(digests, fewer)) > budget:
                break
            verbatim, used = own + verbatim, trial_used
            folds, digests, chosen = folds[:-1], digests[:-1], fewer
    elif not digests:
        verbatim = _newest_that_fit(tail, budget - used, cost)
    else:
        newest = tail[-1:] if tail and cost(tail[-1].content) <= budget - used else []
        older = tail[:-1] if newest else []
        room = budget - used - sum(cost(m.content) for m in newest)
        chosen, kept = select(digests, room, block_cost, count, [m.content for m in older], cost,
                              frozenset(t for t, m in enumerate(older) if m.role == "assistant"))
        verbatim = [m for t, m in enumerate(older) if t in kept] + newest
    result = ChatContext(budget=budget)
    out = [m.to_chat() for m in system]
    shown_lines = lines(digests, chosen)
    if shown_lines:
        out.append({"role": "system", "content": _block(shown_lines)})
    out += [m.to_chat() for m in verbatim]
    shown = {m.seq for m in verbatim}
    covered = {seq for d in chosen for seq in range(folds[d].first, folds[d].last + 1)}
    result.messages = out
    result.tokens = sum(cost(m["content"]) for m in out)
    result.turns, result.summaries = len(verbatim), len(chosen)
    result.shortened = sum(1 for d, keep in chosen.items() if len(keep) < len(digests[d].units))
    result.left_out_summaries = len(folds) - len(chosen)
    result.left_out_turns = sum(1 for m in turns if m.seq not in shown and m.seq not in covered)
    result.left_out_sentences = sum(len(digest.units) - len(chosen.get(d, ())) for d, digest in enumerate(digests))
    held = words_of(" ".join(m["content"] for m in out))
    stated = {fact.words for digest in digests for unit in digest.units for fact in facts(unit.text)}
    result.left_out_facts = sum(1 for words in stated if not words <= held)
    return result


def _newest_that_fit(turns: list[Message], room: int, cost) -> list[Message]:
    """The newest turns that fit, in order; a turn of nothing but pleasantries is left out first (the
    newest turn aside), so that an older turn saying something takes its room."""
    everything = sum(cost(m.content) for m in turns)
    if everything > room:
        turns = [m for m in turns[:-1] if not is_filler_turn(m.content)] + turns[-1:]
    kept: list[Message] = []
    for message in reversed(turns):
        need = cost(message.content)
        if need > room:
            break
        kept.append(message)
        room -= need
    return kept[::-1]


def _block(lines: list[str]) -> str:
    return "\n".join([SUMMARY_HEADER, *lines])
