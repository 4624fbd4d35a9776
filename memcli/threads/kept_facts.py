"""The facts of a conversation that its summaries must keep, and the filler they must never keep.

A summary of folded turns is read later instead of the turns, by a model continuing the chat and by
`mem search`: what it must hold is what a person would be annoyed to repeat. A fact here is
- a protected span of the compressor (memcli.compress.spans): a name or place, a date or time, a
  number with its unit or a money amount, an identifier, a quotation;
- a stated preference, constraint or decision: the clause around a cue such as "prefer", "avoid",
  "must", "never", "budget", "allergic", "vegetarian", "decided", "let's", "booked" ("we are
  vegetarian"; "so we must avoid steep streets").
A fact is its content words; a text holds it when it holds all of them, in any order, so a pruned
sentence or a provider's paraphrase keeps a fact as long as its words stay. A filler sentence ("Great.",
"Good point.", "Sure!", "Thanks, that's really helpful.") holds no fact and no word beyond
pleasantries; a summary never spends a word on one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.compress.wordlists import FUNCTION_WORDS, MONTHS, WEEKDAYS

ENDS = ".!?"  # the marks a sentence ends with, here and where summaries are written
# A mark followed by a word character is inside the sentence: v3.8.1, 12.99 euros, e-mail.com.
SENTENCE = re.compile(rf"(?:[^{ENDS}\n]|[{ENDS}]+(?=[^\s{ENDS}]))+(?:[{ENDS}]+|$)")
WORD = re.compile(r"[^\W_]+(?:['’.,-][^\W_]+)*")
SPAN_KINDS = frozenset({"name", "date", "time", "number", "identifier", "path", "url", "email", "quote"})
CUES = re.compile(
    r"\b(?:prefer\w*|rather|avoid\w*|must|never|budget\w*|limit|allerg\w*|intoleran\w*|vegetarian|vegan|"
    r"halal|kosher|gluten|can(?:no|')t|won['’]t|don['’]t (?:want|like|eat|drink)|doesn['’]t (?:want|like|eat|drink)|"
    r"no more than|at (?:least|most)|only|hate[sd]?|love[sd]?|favou?rite|decid\w*|decision|chose|choose|chosen|"
    r"let['’]s|go(?:ing)? with|book(?:ed)?|agreed|settled|i['’]ll|we['’]ll)\b", re.I)
CLAUSE = re.compile(r"[,;:](?:\s|$)|[()\u2014]")  # between clauses; "1,000" and "7:30" stay whole
CALENDAR = frozenset(word.lower() for word in MONTHS + WEEKDAYS)  # "May" is a month here, not a modal
NUMBER_WORD_ALONE = frozenset({"one", "first"})  # "one more thing", "the first evening": no quantity told
PLEASANTRIES = frozenset(
    """
    great good nice cool ok okay sure perfect wonderful lovely awesome fantastic amazing excellent brilliant fine
    point right yes yep no nope indeed absolutely exactly totally definitely certainly course really quite
    sounds sound makes sense idea choice helpful help happy glad welcome pleasure luck exciting fun interesting
    noted understood got see agree true fair well done alright sorry please morning evening afternoon day
    now anyway actually also
    """.split()
)


@dataclass(frozen=True)
class Fact:
    kind: str  # a span kind (name, date, number ...) or "statement"
    words: frozenset[str]
    text: str

    def held_by(self, words: set[str] | frozenset[str]) -> bool:
        return self.words <= words


def words_of(text: str) -> set[str]:
    """The lower-cased words of text, as facts are matched ("1,000" and "12.99" stay whole)."""
    return {word.lower().rstrip(".,") for word in WORD.findall(text)}


def content(text: str) -> frozenset[str]:
    return frozenset(word for word in words_of(text) if word not in FUNCTION_WORDS or word in CALENDAR)


def facts(text: str) -> list[Fact]:
    """The facts a text states, each once. A capitalised word opening a sentence is a name only if
    it is no pleasantry, verb or evaluative word ("Great.", "Want to stay ...?"); a preference or
    decision asked about in a question is a request, not a statement."""
    from memcli.compress.spans import find_spans

    found: dict[frozenset[str], Fact] = {}
    for sentence in SENTENCE.finditer(text):
        body = sentence.group().strip()
        for span in find_spans(body):
            if span.kind not in SPAN_KINDS or (span.kind == "name" and _common_opening(body, span)):
                continue
            words = content(span.text)
            if span.kind == "number" and not any(c.isdigit() for c in span.text) and words & NUMBER_WORD_ALONE:
                continue
            if words:
                found.setdefault(words, Fact(span.kind, words, span.text))
        if body.rstrip().endswith("?"):
            continue
        for clause in CLAUSE.split(body):
            if CUES.search(clause):
                words = content(clause) - PLEASANTRIES
                if words:
                    found.setdefault(words, Fact("statement", words, clause.strip(" " + ENDS)))
    return list(found.values())


def _common_opening(sentence: str, span) -> bool:
    from memcli.compress.lexicon import ADJECTIVES, is_verb

    word = span.text.lower()
    return not sentence[:span.start].strip() and (word in PLEASANTRIES or word in ADJECTIVES or is_verb(word))


def is_filler(sentence: str) -> bool:
    """A sentence with no fact and nothing but pleasantries and function words."""
    return not (content(sentence) - PLEASANTRIES) and not facts(sentence)


def is_filler_turn(text: str) -> bool:
    """A message of nothing but pleasantries: every sentence a filler ("Sounds good.", "Great, thanks!")."""
    return all(is_filler(sentence) for sentence in SENTENCE.findall(text) if sentence.strip())


def retention(turns: list[str], summary: str) -> tuple[int, int]:
    """(facts of the turns the summary holds, facts of the turns): a fact stated twice counts once."""
    held = words_of(summary)
    distinct = {fact.words: fact for text in turns for fact in facts(text)}
    return sum(1 for fact in distinct.values() if fact.held_by(held)), len(distinct)
