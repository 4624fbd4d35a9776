"""The summaries of a long thread cut to a budget: the sentences that carry the most, from every fold.

A thread of hundreds of turns has more summaries than a prompt holds, and questions reach back to
any part of it. Dropping whole summaries, oldest first, keeps the newest stretch and forgets the rest
(on LoCoMo conv-26 a 2,000-token context then covered the newest 26 of 69 folds). Instead each
summary is split into its sentences and the budget goes to the sentences that add the most words not
yet in the context, weighted by how rare each word is among all the summaries' sentences (inverse
document frequency): a name, a place, a number said once weighs much; "great", "thanks" and the
speakers' names, said everywhere, weigh nothing. Words already covered count no more, so a plan
repeated in ten folds is told once. This is greedy budgeted maximum coverage, the usual extractive
summariser (Gillick and Favre's concept coverage; the greedy gain-per-cost rule of Khuller et al.).
At equal worth the newer sentence wins; a sentence adding nothing new is left out.

Facts come before chatter: while a sentence holds a fact (memcli.threads.kept_facts) that the context does
not hold yet, it goes before every sentence that holds none, whatever their words weigh; a question
asks rather than tells, so it waits with the chatter; a filler sentence is never shown. The recent turns
that are not folded yet compete on the same terms, each as a whole message: a turn that states a fact
goes in before a summary sentence of chatter, and a turn of nothing but pleasantries ("Sounds good.") is
the first thing a small budget leaves out. The lines of one date are written as one, so a day folded in
several summaries carries its date once.
"""

from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from memcli.compress.wordlists import FUNCTION_WORDS
from memcli.threads.kept_facts import SENTENCE, facts, is_filler, is_filler_turn, words_of

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
DATE = re.compile(r"^\[([^\]\n]+)\]\s*")
SPEAKER = re.compile(r"^([^:\n]{1,60}): ")
ROUNDS = 3  # of choosing, checking the exact cost and filling what is left


@dataclass
class Unit:
    speaker: str | None
    text: str


@dataclass
class Digest:
    """One summary as its date and its sentences, each with its speaker, in order."""

    date: str | None
    units: list[Unit] = field(default_factory=list)

    def line(self, keep: set[int] | None = None) -> str:
        """The summary as one line of the block: `- [date] Speaker: sentence sentence Other: sentence`."""
        return _line(self.date, [unit for i, unit in enumerate(self.units) if keep is None or i in keep])


def lines(digests: list[Digest], chosen: dict[int, set[int]]) -> list[str]:
    """The block's lines for the chosen sentences ({digest: {sentence}}): one line per date, so the
    summaries of one day (a session is folded in several) carry their date once."""
    out: list[tuple[str | None, list[Unit]]] = []
    for d in sorted(chosen):
        units = [unit for u, unit in enumerate(digests[d].units) if u in chosen[d]]
        if out and out[-1][0] == digests[d].date:
            out[-1][1].extend(units)
        else:
            out.append((digests[d].date, units))
    return [_line(date, units) for date, units in out]


def _line(date: str | None, units: list[Unit]) -> str:
    parts, speaker = ["-"] + ([f"[{date}]"] if date else []), None
    for unit in units:
        if unit.speaker and unit.speaker != speaker:
            parts.append(f"{unit.speaker}:")
            speaker = unit.speaker
        parts.append(unit.text)
    return " ".join(parts)


def parse(summary: str) -> Digest:
    """A summary as `memcli.threads.summarize` writes it: `[date]`, then a line per speaker's run."""
    date = DATE.match(summary)
    digest = Digest(date[1] if date else None)
    for line in summary[date.end() if date else 0:].splitlines():
        speaker = SPEAKER.match(line)
        body = line[speaker.end():] if speaker else line
        digest.units += [Unit(speaker[1] if speaker else None, s.strip()) for s in SENTENCE.findall(body) if s.strip()]
    return digest


def concepts(text: str) -> frozenset[str]:
    return frozenset(w for w in (word.lower() for word in WORD.findall(text)) if w not in FUNCTION_WORDS)


def select(digests: list[Digest], room: int, block_cost: Callable[[list[str]], int],
           count: Callable[[str], int], turns: Sequence[str] = (),
           turn_cost: Callable[[str], int] | None = None,
           assistant_turns: frozenset[int] = frozenset()) -> tuple[dict[int, set[int]], set[int]]:
    """Which sentences of which digests ({digest: {sentence}}) and which of the `turns` (whole messages,
    oldest first, each costing turn_cost(text)) to show within `room` tokens: those with facts not yet
    shown first, each tier by rare-word coverage per token; a filler never. block_cost(lines) is the
    exact cost of the block the lines make. At equal standing the user's facts go before the assistant's:
    the user states what must be remembered, the assistant mostly restates it or proposes (the turns
    numbered in `assistant_turns` are the assistant's)."""
    units = [(d, u, concepts(unit.text)) for d, digest in enumerate(digests) for u, unit in enumerate(digest.units)
             if not is_filler(unit.text)]
    units += [(-1 - t, 0, concepts(text)) for t, text in enumerate(turns) if not is_filler_turn(text)]
    texts = [digests[d].units[u].text if d >= 0 else turns[-1 - d] for d, u, _ in units]
    stated = [[] if text.rstrip().endswith("?") else [fact.words for fact in facts(text)] for text in texts]
    spoken = [words_of(text) for text in texts]
    assistant = [(digests[d].units[u].speaker == "assistant") if d >= 0 else (-1 - d in assistant_turns)
                 for d, u, _ in units]
    frequency: dict[str, int] = {}
    for _, _, words in units:
        for word in words:
            frequency[word] = frequency.get(word, 0) + 1
    weight = {word: math.log((len(units) + 1) / (n + 1)) for word, n in frequency.items()}
    costs = [max(1, count(text) if d >= 0 else turn_cost(text)) for (d, _, _), text in zip(units, texts)]
    newness = [d if d >= 0 else len(digests) - 1 - d for d, _, _ in units]  # the turns are newer than every fold
    empty = block_cost([""])  # the header and the message framing
    openings: dict[str, int] = {}  # "- [date]" and its line break, by date (many folds share one)
    for digest in digests:
        line = digest.line(set())
        if line not in openings:
            openings[line] = block_cost(["", line]) - empty
    opening = [openings[digest.line(set())] for digest in digests]
    labels = {speaker: count(f"{speaker}:") for speaker in {unit.speaker for digest in digests for unit in digest.units}
              if speaker}
    covered: set[str] = set()
    held: set[str] = set()  # the words of the chosen sentences, as facts are matched
    chosen: dict[int, set[int]] = {}
    shown: set[int] = set()  # the turns chosen
    speaking: set[tuple[str | None, str | None]] = set()  # (date, speaker) already labelled on a date's line
    order: list[int] = []

    def worth(i: int) -> tuple[bool, bool, float]:
        """(adds a fact, the user's, rare-word coverage per token, the more for each fact it adds); both only fall
        as the context grows."""
        new = sum(1 for words in stated[i] if not words <= held)
        return new > 0, not assistant[i], (1 + new) * sum(weight[word] for word in units[i][2] - covered) / costs[i]

    def said(i: int) -> tuple[str | None, str | None]:
        d, u, _ = units[i]
        return digests[d].date, digests[d].units[u].speaker

    def need(i: int) -> int:
        d, _, _ = units[i]
        if d < 0:
            return costs[i]
        label = 0 if said(i) in speaking else labels.get(said(i)[1], 0)
        opened = any(digests[c].date == digests[d].date for c in chosen)  # a date is written once
        return costs[i] + (0 if opened else opening[d]) + label

    def block() -> int:
        return (block_cost(lines(digests, chosen)) if chosen else empty) + sum(turn_cost(turns[t]) for t in shown)

    def take(i: int) -> None:
        d, u, _ = units[i]
        if d < 0:
            shown.add(-1 - d)
        else:
            chosen.setdefault(d, set()).add(u)
            speaking.add(said(i))

    def drop(i: int) -> None:
        d, u, _ = units[i]
        if d < 0:
            shown.discard(-1 - d)
        else:
            chosen[d].discard(u)
            if not chosen[d]:
                del chosen[d]

    left = list(range(len(units)))
    used = empty
    for _ in range(ROUNDS):
        # Lazy greedy: a sentence's worth only falls as words get covered, so a stale worth is an upper bound.
        heap = [(*_key(worth(i)), -newness[i], i) for i in left]
        heapq.heapify(heap)
        left = []
        while heap:
            *_, newer, i = heapq.heappop(heap)
            value = worth(i)
            if value[2] <= 0:
                continue
            if heap and _key(value) > heap[0][:3]:
                heapq.heappush(heap, (*_key(value), newer, i))
                continue
            if used + need(i) > room:
                left.append(i)
                continue
            used += need(i)
            take(i)
            order.append(i)
            covered |= units[i][2]
            held |= spoken[i]
        # The estimate is close, not exact (the tokenizer joins words across pieces): drop the last
        # picks until the block as written fits, then spend what the estimate left over.
        while order and block() > room:
            drop(order.pop())
            speaking = {said(j) for j in order if units[j][0] >= 0}
            covered = set().union(*(units[i][2] for i in order))
            held = set().union(*(spoken[i] for i in order))
        used = block()
        if not left or room - used < min(costs[i] for i in left):
            break
    return chosen, shown


def _key(worth: tuple[bool, bool, float]) -> tuple[int, int, float]:
    """A heap key: smallest first, so fact-adding sentences, the user's first, then the most worth."""
    return (0 if worth[0] else 1), (0 if worth[1] else 1), -worth[2]

