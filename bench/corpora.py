"""The texts compression is measured on, each with the questions a reader must still answer from them.

One split, fixed here so every script uses the same: compression is tuned on LoCoMo conv-30 and on
the developer notes (bench/data/dev_notes.json); LoCoMo conv-26 and the held-out notes
(bench/data/heldout_notes.json, written with their questions before any tuning) are only judged.

A probe is (memory index, question, gold answer, kind): kind "answer" for a question answered by the
text, "fact" for a listed fact of a developer note (question empty).
LoCoMo QA of categories 1-4 count when the answer appears in the summary of one of its evidence
sessions (evidence ids D<session>:<turn>, every one taken even from malformed strings); an answer
that appears only inside another word ("2" in "2023") is left out.
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
TUNING_CONVERSATION = "conv-30"

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


def locomo(conversation_id: str) -> Corpus:
    conversation = next(c for c in json.loads(LOCOMO.read_text()) if c["sample_id"] == conversation_id)
    corpus = Corpus(f"locomo {conversation_id}", conversation_id == TUNING_CONVERSATION)
    index_of = {}
    for key, summary in conversation["session_summary"].items():
        index_of[int(re.search(r"\d+", key).group())] = len(corpus.memories)
        corpus.memories.append(summary)
    for qa in conversation["qa"]:
        if qa.get("category") not in (1, 2, 3, 4):
            continue
        answer = str(qa.get("answer", "")).strip()
        sessions = {int(m.group(1)) for e in qa.get("evidence", []) for m in _EVIDENCE.finditer(e)}
        for session in sorted(sessions):
            index = index_of.get(session)
            if index is not None and answer and answer.lower() in corpus.memories[index].lower():
                needed = content_words(answer)
                if needed and needed <= content_words(corpus.memories[index]):
                    corpus.probes.append(Probe(index, qa["question"], answer, "answer"))
                break
    return corpus


def dev_notes() -> Corpus:
    corpus = Corpus("dev notes", True)
    for note in json.loads(DEV_NOTES.read_text())["notes"]:
        corpus.probes += [Probe(len(corpus.memories), "", fact, "fact") for fact in note["facts"]]
        corpus.memories.append(note["text"])
    return corpus


def heldout_notes() -> Corpus:
    corpus = Corpus("held-out notes", False)
    for note in json.loads(HELDOUT_NOTES.read_text())["notes"]:
        corpus.probes += [Probe(len(corpus.memories), qa["q"], qa["a"], "answer") for qa in note["qa"]]
        corpus.memories.append(note["text"])
    return corpus


def all_corpora(which: str = "all") -> list[Corpus]:
    """which: all | tuning (the corpora one may look at while changing the method) | judged."""
    corpora = [locomo(TUNING_CONVERSATION), dev_notes(), locomo("conv-26"), heldout_notes()]
    if which == "all":
        return corpora
    return [c for c in corpora if c.tuned == (which == "tuning")]
