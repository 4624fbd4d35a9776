"""Which words pruning drops first: ranks in tiers by word class, surprisal within a tier.

Surprisal alone drops content words an answer needs (the predictable second half of "mental
health"), and a list of function words alone saves too little, so `rank_combined` orders the
candidates in tiers, dropped in this order:
  1. function words (articles, auxiliaries, prepositions, pronouns, conjunctions; in chat,
     interjections and spoken auxiliaries: "wow", "thanks", "gonna"), except a "to", "and", "or" or
     "until" between two protected spans (a change or a range: "0.4% to 2.1%"); these go even when
     the text already fits its target (memcli.compress.prune),
  2. framing words (mentioned, expressed, really, ...), evaluative adjectives and -ly adverbs of
     manner (amazing, slowly), and every occurrence of a repeated word but its most informative one
     (answers need the word once, not each time; a verb said again states another event and stays),
  3. commas, except before a number or date,
  4. the other content words (verbs, mostly): first the verbs that frame an event (want, plan,
     feel, discuss), then the rest, by surprisal smoothed over compounds (`_phrase_scores`).
Within a tier the least surprising goes first. Never candidates: protected spans
(memcli.compress.spans); words that name things (memcli.compress.lexicon: the nouns people ask
about, which the model finds as predictable as verbs); the word each number or date is about and
causal or contrastive links (memcli.compress.relations); quantifiers and the adverbs of how often,
how much and how sure (every, only, usually, mostly); modals ("would be lost") and the prepositions
of a specific place or share ("around the lake", "per API key"); what a clause states of its subject
(the word after a copula, "the studio looks amazing"); words in the scope of a negation or of a reason
("because the driver kept crashing"). At most 60% of the tier-4 words' tokens go (the least
informative ones): a text dense with spans and things keeps the words that relate them.
"""

from __future__ import annotations

from typing import Callable, Sequence

from memcli.compress.lexicon import (
    ADJECTIVES,
    is_light_verb,
    is_linking_verb,
    is_modifier,
    is_verb,
    names_a_thing,
)
from memcli.compress.meaning import meaning_words
from memcli.compress.relations import anchors
from memcli.compress.spans import Span
from memcli.compress.units import Unit, neighbour
from memcli.compress.wordlists import (
    CAUSAL_LINKS,
    FRAMING_WORDS,
    FUNCTION_WORDS,
    MODALS,
    NOUN_PHRASE_OPENERS,
    QUALIFIERS,
    QUANTIFIERS,
    RELATION_LINKS,
    SPECIFIC_PREPOSITIONS,
)

_TIER_FUNCTION, _TIER_FRAMING, _TIER_COMMA, _TIER_CONTENT = range(4)
MAX_CONTENT_DROP = 0.6
# Between two protected spans these words carry the relation: "0.4% to 2.1%", "3 or 4 days".
_LINKS = frozenset({"to", "and", "or", "until", "till", "through", "vs", "versus"})
# Never candidates; "about", "just" stay droppable function words.
_QUANTIFIERS = (QUANTIFIERS | QUALIFIERS) - FUNCTION_WORDS | MODALS | SPECIFIC_PREPOSITIONS
_INTENSIFIERS = frozenset("so very too really quite rather pretty just such still".split())
_COPULAS = frozenset("am is are was were be been being do does did doing".split())
_NOT_THINGS = FUNCTION_WORDS | FRAMING_WORDS | RELATION_LINKS | _QUANTIFIERS | NOUN_PHRASE_OPENERS | frozenset(
    "before after until during".split())

Ranker = Callable[[Sequence[Unit]], list]


def rank_combined(units: Sequence[Unit]) -> list:
    """Ranks in tiers (lower is dropped first), least surprising first within a tier."""
    ranks: list = [None] * len(units)
    score = _phrase_scores(units)
    negated = _negation_scopes(units) | _reason_scopes(units)
    kept = _relation_words(units) | _thing_words(units) | meaning_words(units)
    best: dict[str, int] = {}
    for i, unit in enumerate(units):
        if unit.kind == "word" and (unit.lower not in best or score[i] > score[best[unit.lower]]):
            best[unit.lower] = i
    for i, unit in enumerate(units):
        if unit.kind == "punct" and unit.text == "," and not _before_number(units, i):
            ranks[i] = (_TIER_COMMA, unit.surprisal)
        if (unit.kind != "word" or i in kept or unit.lower in _QUANTIFIERS or _links_spans(units, i)
                or _clitic(units, i)):
            continue
        if unit.lower in FUNCTION_WORDS:
            ranks[i] = (_TIER_FUNCTION, unit.surprisal)
        elif i in negated or _predicate(units, i):
            continue
        elif (unit.lower in FRAMING_WORDS or is_modifier(unit.lower)
              or best[unit.lower] != i and not _is_event_verb(unit.lower)):
            ranks[i] = (_TIER_FRAMING, unit.surprisal)
        else:
            ranks[i] = (_TIER_CONTENT, not is_light_verb(unit.lower), score[i])
    _keep_most_informative_content(units, ranks)
    return ranks


def always_dropped(rank) -> bool:
    """Whether a candidate goes even when the text already fits its target: a function word (tier 1)."""
    return isinstance(rank, tuple) and rank[0] == _TIER_FUNCTION


def _clitic(units: Sequence[Unit], index: int) -> bool:
    """The 's of "this month's": the tail of a word the span patterns took without it."""
    return index > 0 and units[index - 1].kind == "punct" and units[index - 1].text in ("'", "’")


def _predicate(units: Sequence[Unit], index: int) -> bool:
    """Whether the word is what its clause says of its subject: after a copula, maybe through an
    intensifier ("the store is doing great", "I'm so happy", "she felt proud"). There an evaluative
    word is the statement itself, not colour on a noun ("an amazing experience"); so is an
    evaluative adjective that no noun follows."""
    if units[index].lower in _INTENSIFIERS or units[index].lower in FUNCTION_WORDS:
        return False
    if units[index].lower in ADJECTIVES:  # an adjective with no noun after it: "makes me so happy."
        after = neighbour(units, index, 1)
        if after is None or after.kind == "punct" or after.lower in FUNCTION_WORDS:
            return True
    before = neighbour(units, index, -1)
    while before is not None and before.kind == "word" and before.lower in _INTENSIFIERS:
        index = units.index(before)
        before = neighbour(units, index, -1)
    if before is None or before.kind != "word":
        return False
    word = before.lower.replace("’", "'")
    return word in _COPULAS or word.endswith(("'s", "'re", "'m")) or is_linking_verb(word)


def _is_event_verb(word: str) -> bool:
    """A verb that states an event: said again, it states another one ("Jon lost his job ... Gina
    also lost hers"), unlike a repeated noun, which names the same thing again."""
    return is_verb(word) and not is_light_verb(word)


def _keep_most_informative_content(units: Sequence[Unit], ranks: list) -> None:
    """Past MAX_CONTENT_DROP of the content words' tokens, content words stop being candidates: a
    text dense with names and numbers then stays above the target ratio instead of turning into a
    bare list of spans with the verbs and nouns that relate them gone."""
    content = sorted((i for i, r in enumerate(ranks) if r is not None and r[0] >= _TIER_CONTENT),
                     key=lambda i: ranks[i])
    budget = MAX_CONTENT_DROP * sum(max(1, units[i].tokens) for i in content)
    spent = 0
    for i in content:
        spent += max(1, units[i].tokens)
        if spent > budget:
            ranks[i] = None


def _phrase_scores(units: Sequence[Unit]) -> list[float]:
    """A content word's score is halfway between its own surprisal and the highest one of the run of
    adjacent content words it stands in, so a compound survives whole: 'mental health', 'support
    group', 'exponential backoff' (the second word is predictable only because of the first)."""
    scores = [u.surprisal for u in units]
    run: list[int] = []

    def close() -> None:
        top = max((units[j].surprisal for j in run), default=0.0)
        for j in run:
            scores[j] = (units[j].surprisal + top) / 2
        run.clear()

    for i, unit in enumerate(units):
        if unit.kind == "word" and unit.lower not in FUNCTION_WORDS and unit.lower not in FRAMING_WORDS:
            run.append(i)
        elif not (unit.kind == "space" and unit.text == " " or unit.kind == "punct" and unit.text == "-"):
            close()
    close()
    return scores


def _relation_words(units: Sequence[Unit]) -> set[int]:
    """Indexes of the words that carry a relation, never candidates: the anchor of each number or
    date and the quantifiers between them ("save another $90"), and causal or contrastive links
    ("because", "instead", "but"; "so" only where it joins clauses, not in "so happy")."""
    starts = {u.start: i for i, u in enumerate(units)}
    kept: set[int] = set()
    spans = [Span(u.start, u.start + len(u.text), u.span_kind, u.text) for u in units if u.kind == "protected"]
    for anchor in anchors("".join(u.text for u in units), spans):
        kept.update(starts[at] for at in (anchor.start, *(s for s, _ in anchor.between)) if at in starts)
    for i, unit in enumerate(units):
        if unit.kind == "word" and unit.lower in RELATION_LINKS and (unit.lower != "so" or _joins_clauses(units, i)):
            kept.add(i)
    return kept


def _joins_clauses(units: Sequence[Unit], index: int) -> bool:
    """Whether the word at index opens a clause ("..., so we moved"), not a phrase ("so happy")."""
    before = neighbour(units, index, -1)
    return before is None or before.kind == "punct" or before.lower in ("and", "or")


def _thing_words(units: Sequence[Unit]) -> set[int]:
    """Indexes of the content words that name things (memcli.compress.lexicon), never candidates.
    A run of content words is inside a noun phrase when it follows a determiner, possessive,
    preposition, quantifier, number or a name's possessive ("Jon's dance studio"); "to" opens one
    only when no verb follows it ("went to yoga", not "wants to continue")."""
    things: set[int] = set()
    context: Unit | None = None
    run: list[int] = []
    for i, unit in enumerate(units):
        if unit.kind == "space" or (unit.kind == "punct" and unit.text == "-" and run):
            continue
        content = unit.kind == "word" and unit.lower not in _NOT_THINGS
        if content:
            if not run:
                opener = context is not None and _opens_noun_phrase(context)
                in_phrase = opener and not (context.lower == "to" and is_verb(unit.lower))
            before = units[run[-1]].lower if run else ""
            if names_a_thing(unit.lower, in_phrase, not run, before):
                things.add(i)
            run.append(i)
            continue
        run = []
        context = unit
    return things


def _opens_noun_phrase(unit: Unit) -> bool:
    if unit.kind == "protected":
        return unit.span_kind == "number" or unit.text.endswith(("'s", "’s"))
    return unit.kind == "word" and (unit.lower in NOUN_PHRASE_OPENERS or unit.lower in QUANTIFIERS)


def _links_spans(units: Sequence[Unit], index: int) -> bool:
    """A range or a change stays readable: 'from 850 ms to 300 ms' must not read '850 ms 300 ms'."""
    if units[index].lower not in _LINKS:
        return False
    around = (neighbour(units, index, -1), neighbour(units, index, 1))
    return all(u is not None and u.kind == "protected" and u.span_kind != "negation" for u in around)


def _before_number(units: Sequence[Unit], index: int) -> bool:
    """A comma before a number, date or time stays: '7 daily, 4 weekly' must not read '7 daily 4'."""
    following = neighbour(units, index, 1)
    return following is not None and following.span_kind in ("number", "date", "time")


def _negation_scopes(units: Sequence[Unit]) -> set[int]:
    """Indexes of the words a negation applies to. 'no data was lost' without 'data' and 'lost'
    keeps the negation and loses the fact."""
    return _scopes(units, [i for i, u in enumerate(units) if u.span_kind == "negation"])


def _reason_scopes(units: Sequence[Unit]) -> set[int]:
    """Indexes of the words of a reason: the clause after a causal link ('because the driver kept
    crashing'). A reason is what a 'why' question asks for, and its verb is most of it."""
    starts = [i for i, u in enumerate(units) if u.kind == "word" and u.lower in CAUSAL_LINKS
              and (u.lower != "so" or _joins_clauses(units, i))]
    return _scopes(units, starts)


def _scopes(units: Sequence[Unit], starts: list[int], reach: int = 6) -> set[int]:
    """The words after each start index: up to `reach` of them, within its clause."""
    scoped: set[int] = set()
    for i in starts:
        words = 0
        for j in range(i + 1, len(units)):
            if units[j].kind == "punct" and units[j].text[0] in ",;:.!?…()" or words >= reach:
                break
            if units[j].kind == "word":
                scoped.add(j)
                words += 1
    return scoped


def rank_by_surprisal(units: Sequence[Unit]) -> list:
    """Baseline: every unprotected word, least surprising first."""
    return [u.surprisal if u.kind == "word" else None for u in units]


def rank_stopwords(stopwords: frozenset[str]) -> Ranker:
    """Baseline: only words of the given list are candidates (use with ratio=0 to drop them all)."""
    return lambda units: [0.0 if u.kind == "word" and u.lower in stopwords else None for u in units]
