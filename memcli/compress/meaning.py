"""The small words a sentence's meaning hangs on, which pruning never drops, and headings' words.

Dropping one of these reverses or blurs a note rather than shortening it (real examples: "Prefer
pytest fixtures over setUp methods" read "Prefer pytest fixtures setUp methods"; "back off
exponentially" read "back"; "I check whether legal allows" read "Check legal allows"):
- comparison and choice (over, than, rather, instead, or, nor, either, neither), condition and
  exception (if, unless, only, except, otherwise, whether, when), time order (before, after, until,
  since, during, once, then); negations are protected spans already (memcli.compress.spans);
- the particles that change a verb (off, up, out, back, down; "on" where it ends a clause: "leave
  the cache on for the sale"), and the -ly adverb that says how right after one ("back off
  exponentially", "roll out gradually"): elsewhere such adverbs are modifiers pruning may drop;
- a first- or second-person subject before its verb (I, we, you, they): without it the note turns
  into an order, or says someone else acts;
- every word of a markdown heading ("## Running" must not become "##").
The probe of such sentences is bench/data/meaning_probe.json (bench/meaning_probe.py).
"""

from __future__ import annotations

import re
from typing import Sequence

from memcli.compress.lexicon import is_modifier, is_verb
from memcli.compress.units import Unit, neighbour
from memcli.compress.wordlists import FUNCTION_WORDS, MODALS, NEGATIONS

RELATIONS = frozenset(
    """
    over than rather instead or nor either neither
    if unless only except otherwise whether when whenever
    before after until till since during once then
    off up out back down
    """.split()
)
PARTICLES = frozenset("off up out back down".split())
SUBJECTS = frozenset("i we you they".split())
_AUXILIARIES = frozenset("am is are was were do does did have has had will shall can must should".split())
_CLAUSE_END_AFTER_ON = frozenset("for during until till when while in at".split())
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S.*$", re.M)


def meaning_words(units: Sequence[Unit]) -> set[int]:
    """Indexes of the units pruning must keep for the meaning: relation words, particles, acting
    subjects and the words of headings."""
    kept: set[int] = set()
    headings = [(m.start(), m.end()) for m in _HEADING.finditer("".join(u.text for u in units))]
    for i, unit in enumerate(units):
        if unit.kind != "word":
            continue
        word = unit.lower
        if (word in RELATIONS or word == "on" and _ends_clause(units, i) or word in SUBJECTS and _acts(units, i)
                or _says_how(units, i)):
            kept.add(i)
        elif headings and any(start <= unit.start < end for start, end in headings):
            kept.add(i)
    return kept


def _says_how(units: Sequence[Unit], index: int) -> bool:
    before = neighbour(units, index, -1)
    return before is not None and before.lower in PARTICLES and is_modifier(units[index].lower)


def _ends_clause(units: Sequence[Unit], index: int) -> bool:
    after = neighbour(units, index, 1)
    return after is None or after.kind == "punct" or after.lower in _CLAUSE_END_AFTER_ON


def _acts(units: Sequence[Unit], index: int) -> bool:
    """Whether a pronoun is the subject of the verb after it ("I merge it", "we don't deploy"): a
    content word, a modal, an auxiliary or a negation follows it (an object pronoun is followed by
    an article or a preposition: "send you the file")."""
    after = neighbour(units, index, 1)
    if after is None or after.kind == "punct":
        return False
    word = after.lower.replace("’", "'")
    return (is_verb(word) or word not in FUNCTION_WORDS or word in MODALS or word in _AUXILIARIES
            or word in NEGATIONS or word.endswith("n't"))
