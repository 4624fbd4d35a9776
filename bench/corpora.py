"""The texts compression is measured on, each with the questions a reader must still answer from them.

One split, fixed here so every script uses the same. Development (looked at while changing the
method, each checked on its own): the session summaries of LoCoMo conv-30 and conv-26, their evidence
turns ("Caroline: I went to a LGBTQ support group yesterday ..."), the developer notes
(bench/data/dev_notes.json) and the first round's held-out notes (bench/data/heldout_notes.json:
judged once, then looked at, so tuning data now). Judged only: the fresh notes and chat turns of
bench/data/fresh_heldout.json, written with their questions before the second round changed anything;
nobody looks at their per-item results while changing the method.

A probe is (memory index, question, gold answer, kind): kind "answer" for a question answered by the
text, "fact" for a listed fact of a developer note (question empty).
LoCoMo QA of categories 1-4 count when the answer appears in the summary of one of its evidence
sessions (evidence ids D<session>:<turn>, every one taken even from malformed strings); an answer
that appears only inside another word ("2" in "2023") is left out. For the turns corpus, a question
counts when the content words of its answer all occur in one of its evidence turns (a turn says
"yesterday", the answer "7 May 2023": not counted), and the memory is that turn as a thread stores it,
"<speaker>: <text>".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The shared benchmark data sits beside the checkout (../shared), or beside the folder of worktrees.
LOCOMO = next((p / "shared" / "bench" / "locomo-dev" / "locomo-dev.json" for p in HERE.parents
               if (p / "shared" / "bench" / "locomo-dev").is_dir()), HERE.parent.parent / "shared")
DEV_NOTES = HERE / "data" / "dev_notes.json"
HELDOUT_NOTES = HERE / "data" / "heldout_notes.json"
FRESH = HERE / "data" / "fresh_heldout.json"
CONVERSATIONS = ("conv-30", "conv-26")

# A common English stopword list (the NLTK list's words): picks the content words of an answer and
# serves the stopword baseline. It is independent of the method's own word classes.
STOPWORDS = frozenset(
    """
    i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves
    he him his himself she she's her hers herself it it's its itself they them their theirs themselves
    what which who whom this that that'll these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on off over
    under again further then once here there when where why how all any both each few more most other
    some such no nor not only own same so than too very s t can will just don don't should should've
    now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
    hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
    shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
    """.split()
)

_WORDS = re.compile(r"[^\W_]+")
_EVIDENCE = re.compile(r"D(\d+):(\d+)")


def words(text: str) -> set[str]:
    return set(_WORDS.findall(text.lower()))


def content_words(text: str) -> set[str]:
    return {w for w in _WORDS.findall(text.lower()) if w not in STOPWORDS}


@dataclass
class Probe:
    memory: int
    question: str
    answer: str
    kind: str  # answer | fact


@dataclass
class Corpus:
    name: str
    tuned: bool
    memories: list[str] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)


def _conversation(conversation_id: str) -> dict:
    return next(c for c in json.loads(LOCOMO.read_text()) if c["sample_id"] == conversation_id)


def _questions(conversation: dict):
    """(question, answer, evidence ids) of the categories that have a gold answer in the text."""
    for qa in conversation["qa"]:
        answer = str(qa.get("answer", "")).strip()
        if qa.get("category") in (1, 2, 3, 4) and answer:
            yield qa["question"], answer, [m.group() for e in qa.get("evidence", []) for m in _EVIDENCE.finditer(e)]


def locomo(conversation_id: str) -> Corpus:
    conversation = _conversation(conversation_id)
    corpus = Corpus(f"locomo {conversation_id}", True)
    index_of = {}
    for key, summary in conversation["session_summary"].items():
        index_of[int(re.search(r"\d+", key).group())] = len(corpus.memories)
        corpus.memories.append(summary)
    for question, answer, evidence in _questions(conversation):
        sessions = {int(_EVIDENCE.match(e).group(1)) for e in evidence}
        for session in sorted(sessions):
            index = index_of.get(session)
            if index is not None and answer.lower() in corpus.memories[index].lower():
                needed = content_words(answer)
                if needed and needed <= content_words(corpus.memories[index]):
                    corpus.probes.append(Probe(index, question, answer, "answer"))
                break
    return corpus


def locomo_turns(conversation_id: str) -> Corpus:
    """The evidence turns of a conversation's questions, each a short memory of its own."""
    conversation = _conversation(conversation_id)
    turns = {t["dia_id"]: f"{t['speaker']}: {t['text']}" for key, session in conversation["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session}
    corpus = Corpus(f"locomo {conversation_id} turns", True)
    index_of: dict[str, int] = {}
    for question, answer, evidence in _questions(conversation):
        needed = content_words(answer)
        turn = next((e for e in evidence if e in turns and needed and needed <= content_words(turns[e])), None)
        if turn is None:
            continue
        if turn not in index_of:
            index_of[turn] = len(corpus.memories)
            corpus.memories.append(turns[turn])
        corpus.probes.append(Probe(index_of[turn], question, answer, "answer"))
    return corpus


def dev_notes() -> Corpus:
    corpus = Corpus("dev notes", True)
    for note in json.loads(DEV_NOTES.read_text())["notes"]:
        corpus.probes += [Probe(len(corpus.memories), "", fact, "fact") for fact in note["facts"]]
        corpus.memories.append(note["text"])
    return corpus


def _with_questions(name: str, tuned: bool, items: list[dict]) -> Corpus:
    corpus = Corpus(name, tuned)
    for item in items:
        corpus.probes += [Probe(len(corpus.memories), qa["q"], qa["a"], "answer") for qa in item["qa"]]
        corpus.memories.append(item["text"])
    return corpus


def all_corpora(which: str = "all") -> list[Corpus]:
    """which: all | tuning (the corpora one may look at while changing the method) | judged."""
    fresh = json.loads(FRESH.read_text())
    corpora = [
        *(locomo(c) for c in CONVERSATIONS),
        *(locomo_turns(c) for c in CONVERSATIONS),
        dev_notes(),
        _with_questions("old held-out notes", True, json.loads(HELDOUT_NOTES.read_text())["notes"]),
        _with_questions("fresh notes", False, fresh["notes"]),
        _with_questions("fresh turns", False, fresh["turns"]),
    ]
    if which == "all":
        return corpora
    return [c for c in corpora if c.tuned == (which == "tuning")]
