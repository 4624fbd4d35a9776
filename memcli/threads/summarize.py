"""Folding old turns into summaries that keep the facts: extractive, then pruned.

A summary stands in for the turns, for the model continuing the chat and for `mem search` later, so
it must hold what the turns established (memcli.threads.kept_facts): every name and place, date, number
with its unit, stated preference, constraint and decision. It is built from the thread's own
sentences, as the default 135M model writes unreliable prose. First the facts: sentences are chosen
greedily by the facts they add per word until every fact is held, a user's sentence weighing more
than the assistant's restatement of it (who said a fact is kept). Then, while the summary is under its
share of the turns, the sentences that carry the rest of the conversation: maximal marginal relevance
over MiniLM sentence vectors against the centroid of the turns. A filler sentence ("Great.", "Good
point.") is never chosen. The chosen sentences keep their order and speaker (a line per speaker's
run, under the dates), and each goes through the compressor (prune, under its guard, so nothing is
invented), the words of its facts that prune dropped put back in place.

With a provider configured (mem.yaml `provider`, sending allowed), its chat model writes the summary
instead: the turns pass the egress gate, and the reply is kept only if the guard finds no number and
no name the turns never mention and it is shorter than they are; the turns' sentences holding facts
the reply dropped are added after it. Otherwise, or if the server fails, the summary is extractive.
Either way the summary is stored as an ordinary memory (tag `thread`, source
`thread/<id>#<first>-<last>`): that one atomic write is the fold.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import TYPE_CHECKING, Sequence

from memcli.errors import describe
from memcli.threads.kept_facts import ENDS, SENTENCE, facts, is_filler, words_of
from memcli.threads.storage import Fold, Threads, summary_source
from memcli.threads.records import Message

if TYPE_CHECKING:
    from memcli.core.mem import Mem

log = logging.getLogger("memcli")

SUMMARY_SHARE = 0.3  # of the folded turns' tokens picked as sentences, before pruning
SUMMARY_MIN_TOKENS, SUMMARY_MAX_TOKENS = 24, 240
PRUNE_RATIO = 0.75
MMR_LAMBDA = 0.7
USER_WEIGHT = 1.5  # a fact the user states outweighs the assistant's restatement of it
ABSTRACT_PROMPT = (
    "You summarise part of a conversation so an assistant can recall it later. Write a few short lines, "
    "one point each, each starting with the speaker's name and a colon. Keep every name, number, date, "
    "place, plan, decision and preference exactly as written. Add nothing the conversation does not say. "
    "No other text."
)
CHARS_PER_TOKEN = 4  # the append path decides "due" without loading a tokenizer


def due(messages: Sequence[Message], folds: Sequence[Fold], every: int, window_tokens: int) -> list[Message]:
    """The oldest unfolded turns to fold now ([] while the unfolded tail is short). The newest
    `every // 2` turns always stay verbatim."""
    folded_to = max((fold.last for fold in folds), default=0)
    tail = [m for m in messages if m.role != "system" and m.seq > folded_to]
    approx_tokens = sum(len(m.content) for m in tail) // CHARS_PER_TOKEN
    if len(tail) <= every and approx_tokens <= window_tokens:
        return []
    keep = max(1, min(every // 2, len(tail) - 1))
    return tail[:len(tail) - keep]


def fold_due(mem: Mem, thread_id: str) -> bool:
    """Whether a fold is due now, read cheaply after an append: only the unfolded messages are read."""
    threads = Threads(mem)
    folds = threads.folds(thread_id)
    tail = threads.messages(thread_id, after=max((fold.last for fold in folds), default=0))
    settings = mem.settings
    return bool(due(tail, folds, settings.thread_summarize_every, settings.thread_window_tokens))


FOLD = "fold"  # the kind of a due fold in the store's work queue


def put_fold(mem: Mem, thread_id: str) -> None:
    """Queue the fold of a thread that has one due (memcli.store.queue): a runner does it, one fold of a
    thread at a time (the job's scope is the thread), `mem thread summarize` at once."""
    from memcli.store.queue import WorkQueue

    WorkQueue(mem.store.root).put(FOLD, thread_id, {"thread": thread_id}, scope=fold_scope(thread_id))


def fold_scope(thread_id: str) -> str:
    return f"thread-{thread_id}"


def summarize(mem: Mem, thread_id: str, *, force: bool = False, wait: bool = False) -> Fold | None:
    """Fold what is due (with `force`, every unfolded turn but the newest). Returns the new fold, or
    None when nothing was due or another summariser holds this thread; with `wait`, it waits for that
    one to finish first, so what it folded is in place when this returns. Never touches the messages."""
    from memcli.store.queue import WorkQueue

    thread_id = Threads(mem).resolve(thread_id)
    with WorkQueue(mem.store.root).scope(fold_scope(thread_id), wait=wait) as held:
        return fold(mem, thread_id, force=force) if held else None


def fold(mem: Mem, thread_id: str, *, force: bool = False) -> Fold | None:
    """The fold itself, by a caller that holds the thread's scope (summarize, or a runner's FOLD job)."""
    threads = Threads(mem)
    messages, folds = threads.messages(thread_id), threads.folds(thread_id)
    settings = mem.settings
    span = due(messages, folds, 1 if force else settings.thread_summarize_every,
               0 if force else settings.thread_window_tokens)
    if not span:
        return None
    text = summary_text(mem, span)
    from memcli.core.compressing import CompressOptions
    from memcli.core.writing import write_each

    [written] = write_each(mem, [(text, summary_source(thread_id, span[0].seq, span[-1].seq))], tags=["thread"],
                           written_by="thread", compressing=CompressOptions(enabled=False), check_source=False)
    return Fold(span[0].seq, span[-1].seq, written.memory)


def fold_job(mem: Mem, job) -> None:
    """A runner's FOLD job: the thread's due fold, if the thread is still there and one is still due."""
    from memcli.errors import NotFound

    try:
        fold(mem, job.data["thread"])
    except NotFound:
        return  # the thread was removed meanwhile


def summary_text(mem: Mem, span: Sequence[Message]) -> str:
    count = mem.token_counter()
    target = min(SUMMARY_MAX_TOKENS, max(SUMMARY_MIN_TOKENS, int(SUMMARY_SHARE * sum(count(m.content) for m in span))))
    sentences = [(m, s.strip()) for m in span for s in SENTENCE.findall(m.content) if s.strip()]
    written = abstractive(mem, span, target) if mem.providers.writer else None
    if written:
        missing = [sentences[i] for i in cover(sentences, words_of(written))]
        return "\n".join([f"[{_dates(span)}]", written, *_lines([(m, s) for m, s in missing])])
    picked = pick(sentences, mem.embedder(), count, target)
    return "\n".join([f"[{_dates(span)}]", *_lines([(m, _pruned(mem, s)) for m, s in picked])])


def _lines(picked: list[tuple[Message, str]]) -> list[str]:
    """A line per speaker's run: `Name: sentence sentence`."""
    lines, speaker = [], None
    for message, sentence in picked:
        if who(message) != speaker:
            speaker = who(message)
            lines.append(f"{speaker}: {sentence}")
        else:
            lines[-1] += f" {sentence}"
    return lines


def abstractive(mem: Mem, span: Sequence[Message], target: int) -> str | None:
    """The provider's own summary of the turns, in at most about `target` tokens, a line per point
    ("Name: ..."); None when the turns may not leave the machine, the server fails, or the guard finds
    a number or a name the turns never mention (then the summary is extractive)."""
    from memcli.compress import guard
    from memcli.privacy import egress

    transcript = "\n".join(f"{who(m)}: {m.content}" for m in span)
    out = egress.check(mem.gate, transcript, None, keep_local=False)
    if out.text is None:
        log.info("summary made here: %s", (out.info or {}).get("reason", "kept on this machine"))
        return None
    try:
        reply = mem.providers.writer(ABSTRACT_PROMPT, out.text, max_tokens=target,
                                     timeout_s=mem.settings.compress_timeout_s)
    except Exception as exc:  # the extractive summary serves; the server is someone else's problem
        log.info("summary made here: the provider failed (%s)", describe(exc))
        return None
    lines = [line.strip().lstrip("-*• ").strip() for line in reply.splitlines()]
    text = "\n".join(line for line in lines if line)
    count = mem.token_counter()
    if not text or count(text) >= count(transcript):
        reason = "empty" if not text else "not shorter than the turns"
    else:
        invented = guard.invented_facts(transcript, text)
        reason = f"invented {', '.join(map(repr, invented[:3]))}" if invented else None
    if reason:
        log.info("summary made here: the provider's was rejected (%s)", reason)
        return None
    return text


def cover(sentences: list[tuple[Message, str]], held: set[str]) -> list[int]:
    """The sentences (indexes, in order) that state the facts `held` (words) lacks: greedily the one
    adding the most facts per word, a user's weighing USER_WEIGHT, until no fact is missing."""
    stated = [facts(text) for _, text in sentences]
    held = set(held)
    wanted = {fact.words for found in stated for fact in found if not fact.held_by(held)}
    length = [max(1, len(text.split())) for _, text in sentences]
    chosen: list[int] = []
    while wanted:
        def gain(i: int) -> float:
            weight = USER_WEIGHT if sentences[i][0].role == "user" else 1.0
            return weight * sum(1 for fact in stated[i] if fact.words in wanted) / length[i]

        best = max((i for i in range(len(sentences)) if i not in chosen), key=gain, default=None)
        if best is None or gain(best) <= 0:
            break
        chosen.append(best)
        held |= words_of(sentences[best][1])
        wanted = {words for words in wanted if not words <= held}
    return sorted(chosen)


def pick(sentences: list[tuple[Message, str]], embedder, count, target: int) -> list[tuple[Message, str]]:
    """The sentences holding every fact, then more by maximal marginal relevance until `target`
    tokens; never a filler; in their original order."""
    import numpy as np

    chosen = cover(sentences, set())
    candidates = {i for i, (_, text) in enumerate(sentences) if i not in chosen and not is_filler(text)}
    used = sum(count(sentences[i][1]) for i in chosen)
    if candidates and used < target:
        vectors = np.asarray(embedder.embed([text for _, text in sentences]), dtype=np.float32)
        centroid = vectors.mean(axis=0)
        centroid /= float(np.linalg.norm(centroid)) or 1.0
        relevance = vectors @ centroid
        while candidates and used < target:
            def score(i):
                redundancy = max((float(vectors[i] @ vectors[j]) for j in chosen), default=0.0)
                return MMR_LAMBDA * relevance[i] - (1 - MMR_LAMBDA) * redundancy
            best = max(candidates, key=score)
            candidates.discard(best)
            cost = count(sentences[best][1])
            if used + cost > target and chosen:
                continue
            chosen.append(best)
            used += cost
    return [sentences[i] for i in sorted(chosen)]


def who(message: Message) -> str:
    return message.name or message.role


def _pruned(mem: Mem, text: str) -> str:
    """A picked sentence through the compressor's prune and guard; as it is if that fails. Where prune
    dropped a word of one of the sentence's facts, the sentence's own words are kept that prune kept or
    a fact needs, in their order (so nothing is invented and no fact is lost). One sentence at a time,
    ended with its mark: prune leaves out a full stop that a capital shows, but a digest
    (memcli.threads.coverage) chooses among a summary's sentences by their marks."""
    settings = mem.settings
    try:
        result = mem.providers.compressor(text, method="prune", ratio=PRUNE_RATIO, model=settings.compress_model,
                                          min_chars=0, timeout_s=settings.compress_timeout_s)
    except Exception as exc:  # a summary must not be lost to a model problem
        log.info("summary left unpruned: %s", describe(exc))
        return text
    pruned = result.text or text
    needed = set().union(*(fact.words for fact in facts(text)))
    if not needed <= words_of(pruned):
        keep = words_of(pruned) | needed
        pruned = " ".join(token for token in text.split() if words_of(token) and words_of(token) <= keep)
    return pruned if pruned.endswith(tuple(ENDS)) else pruned + "."


def _dates(span: Sequence[Message]) -> str:
    days = [_day(m.created_at) for m in (span[0], span[-1])]
    return days[0] if days[0] == days[1] else f"{days[0]} to {days[1]}"


def _day(stamp: str) -> str:
    moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return f"{moment.day} {moment:%B %Y}"
