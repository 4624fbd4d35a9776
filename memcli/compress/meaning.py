"""The words prose can do without: the only ones the prose method may drop (memcli.compress.prune).

"Drop whatever is not protected" was measured and failed: on sentences its lists had never seen it
dropped the verb a fact hangs on ("We tried Redis ... went back to Postgres" read "We Redis ... went back
Postgres"), the word that tells two things apart ("different versions"), the preposition of a
direction or a replacement ("for", "into") and the labels mem writes itself ("(failed)", "Not done:").
So the method turned around: every word stays unless it belongs to a closed set shown safe in its
place, where its loss changes no claim:
- articles (a, an, the), but "a few" (not "few"), a capital "A" inside a sentence ("plan A"), and one
  that ends its clause ("option a.");
- an auxiliary or copula where the word after it keeps its tense (memcli.compress.lexicon): was,
  were, been before a past participle ("the proposal was rejected" -> "proposal rejected"), am, is,
  are before an -ing form or an adjective ("the queue is empty", "the job is failing"), has, have,
  had before a past participle or "been" ("has been rebuilt" -> "rebuilt"). Not after a modal
  ("should have deployed" is no deploy), "there" or a question word, nor opening a sentence (a
  question); not "is" or "are" before a past participle ("it is burned" is a state, "it burned" an
  event), nor "was" before an adjective ("was down" is not "down");
- "that" after a verb of saying or thinking and before its clause's subject ("decided that the cache")
  and "in order" before "to";
- a verb that only frames what someone said (mentioned, expressed, emphasised, remarked, stated) once
  the text has framed a statement so: "Jon mentioned ..., Gina mentioned ..." keeps the first;
- in chat, interjections ("oh", "wow", "hmm"), the intensifiers very, really, totally, literally, truly,
  basically, super, an opening "well," "so," "anyway," "ok,", and a clause that is only a greeting or
  thanks ("Hey", "Thanks so much!", "Good to see you!"), never the name said with it.
Never dropped whatever they are: protected spans (numbers, dates, names, identifiers, paths, flags,
negations: memcli.compress.spans), punctuation (a comma or a full stop between two clauses is what
keeps them two claims; memcli.compress.units renders a full stop as the next sentence's capital), and
every word of a markdown heading. The probe of such sentences: bench/data/meaning_probe*.json.
"""

from __future__ import annotations

import re
from typing import Sequence

from memcli.compress.lexicon import is_adjective, is_participle, is_past_participle
from memcli.compress.units import Unit, neighbour, neighbour_at
from memcli.compress.wordlists import (
    ARTICLES,
    FILLERS,
    FRAMING_VERBS,
    GREETINGS,
    INTENSIFIERS,
    MODALS,
    OPENING_FILLERS,
    REPORTING_VERBS,
    SUBJECT_OPENERS,
)

_BE = frozenset("am is are was were be been being".split())
_BE_BEFORE_PARTICIPLE = frozenset("was were been".split())  # "was rejected" reads as "rejected": past
_BE_BEFORE_STATE = frozenset("am is are".split())  # "is empty", "is failing": now; "was empty" is not "empty"
_HAVE = frozenset("has have had".split())
_NO_DROP_AFTER = MODALS | frozenset("will won't there here what which who whom whose where when why how".split())
# Adverbs an auxiliary may stand apart from its participle by: "was not rebuilt", "has already run".
_BETWEEN = frozenset("not never still also already now just only always often usually then currently "
                     "since ever yet recently finally".split()) | INTENSIFIERS
_LEAD_IN = frozenset("few little lot couple bit number".split())
_SENTENCE_END = re.compile(r"[.!?;:\n]")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S.*$", re.M)


def safe_drops(units: Sequence[Unit]) -> set[int]:
    """Indexes of the word units the prose method may drop without changing what the text says."""
    text = "".join(u.text for u in units)
    headings = [(m.start(), m.end()) for m in _HEADING.finditer(text)]
    safe: set[int] = set(_greetings(units))
    framed = False
    for i, unit in enumerate(units):
        if unit.kind != "word" or i in safe:
            continue
        if headings and any(start <= unit.start < end for start, end in headings):
            continue
        word = unit.lower
        if (word in ARTICLES and _plain_article(units, i) or word in _BE | _HAVE and _auxiliary(units, i)
                or word == "that" and _complementiser(units, i) or word in ("in", "order") and _in_order_to(units, i)
                or word in FILLERS or word in INTENSIFIERS and _intensifies(units, i)
                or word in OPENING_FILLERS and _opens_with_comma(units, i)
                or word in FRAMING_VERBS and framed):
            safe.add(i)
        framed = framed or word in FRAMING_VERBS
    return safe


def _plain_article(units: Sequence[Unit], index: int) -> bool:
    after = neighbour(units, index, 1)
    if after is None or after.kind == "punct" or after.lower in _LEAD_IN:
        return False
    return not (units[index].text == "A" and not _opens_sentence(units, index))


def _auxiliary(units: Sequence[Unit], index: int) -> bool:
    """Whether a form of be or have only carries the tense of the participle or adjective after it."""
    word = units[index].lower
    before = neighbour(units, index, -1)
    if before is None or _opens_sentence(units, index) or before.lower in _NO_DROP_AFTER:
        return False
    at = neighbour_at(units, index, 1)
    while at is not None and (units[at].lower in _BETWEEN or units[at].span_kind == "negation"):
        at = neighbour_at(units, at, 1)
    if at is None or units[at].kind != "word":
        return False
    following = units[at].lower
    if word in _HAVE:
        return following in _BE or is_past_participle(following)
    if following in _BE:
        return word != "be"
    if is_past_participle(following):
        return word in _BE_BEFORE_PARTICIPLE
    return word in _BE_BEFORE_STATE and (is_participle(following) or is_adjective(following))


def _complementiser(units: Sequence[Unit], index: int) -> bool:
    """"that" opening what was said or thought: after a verb of saying or thinking, before a subject."""
    before, after = neighbour(units, index, -1), neighbour(units, index, 1)
    if before is None or after is None or before.lower not in REPORTING_VERBS:
        return False
    return after.lower in SUBJECT_OPENERS or after.span_kind == "name"


def _in_order_to(units: Sequence[Unit], index: int) -> bool:
    """"in" and "order" of "in order to"."""
    start = index if units[index].lower == "in" else neighbour_at(units, index, -1)
    words = [start]
    while start is not None and len(words) < 3 and words[-1] is not None:
        words.append(neighbour_at(units, words[-1], 1))
    return None not in words and " ".join(units[at].lower for at in words) == "in order to"


def _intensifies(units: Sequence[Unit], index: int) -> bool:
    after = neighbour(units, index, 1)
    return after is not None and after.kind == "word" and (units[index].lower != "so" or is_adjective(after.lower))


def _opens_with_comma(units: Sequence[Unit], index: int) -> bool:
    after = neighbour(units, index, 1)
    return _opens_sentence(units, index) and after is not None and after.text == ","


def _opens_sentence(units: Sequence[Unit], index: int) -> bool:
    at = neighbour_at(units, index, -1)
    if at is None:
        return True
    between = "".join(u.text for u in units[at + 1:index])
    return (units[at].kind == "punct" and _SENTENCE_END.search(units[at].text) is not None) or "\n" in between


def _greetings(units: Sequence[Unit]):
    """The words of each clause that is only a greeting, thanks or a goodbye (names said with it stay;
    one with a date or a number says more: "see you tomorrow")."""
    clause: list[int] = []
    for i, unit in enumerate(units + [Unit(".", "punct", -1)]):
        if unit.kind == "punct" and unit.text[0] in ",.!?;:\n…" or unit.kind == "space" and "\n" in unit.text:
            said = " ".join(units[j].lower for j in clause if units[j].kind == "word")
            dated = any(units[j].kind == "protected" and units[j].span_kind != "name" for j in clause)
            if said in GREETINGS and not dated:  # "see you tomorrow" is a plan
                yield from (j for j in clause if units[j].kind == "word")
            clause = []
        elif unit.kind != "space":
            clause.append(i)
