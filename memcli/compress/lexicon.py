"""Which content words name things: the ones people later ask about.

Questions about a memory ask for things, activities, places, foods, genres and roles ("yoga",
"candle", "dog park", "romance"); the words that carry little are the verbs, the evaluative
adjectives and adverbs ("expressed", "amazing", "really").
A small causal LM finds a concrete noun predictable in context just as often as a verb, so
surprisal alone cannot tell them apart. This module does, without a tagger: a lexicon of common
verbs (inflections found by morphology), of evaluative adjectives, the -ly adverbs, and the word's
place in its phrase: a word after a determiner, a possessive, a preposition or a number is inside a
noun phrase, so "the dance studio" keeps "dance" while
"they dance" may lose it. Everything else is taken for a noun and kept: an unknown word costs a
few tokens, a dropped answer costs the memory.
"""

from __future__ import annotations

from memcli.compress.wordlists import QUALIFIERS

# Base forms of common English verbs; inflected forms are found by `_bases`.
VERBS = frozenset(
    """
    accept achieve add admire appreciate determine excite perform advise affirm agree aim allow announce answer appreciate approach
    argue arrange arrive ask attend avoid bake be become begin believe belong blend boost borrow
    bring build buy call care carry catch cause celebrate change cheer check choose clarify close
    collaborate come commend compare complete connect consider continue contribute cook cope
    create credit cut dance decide deliver depict describe design develop die discover discuss
    do drive drop earn eat embrace emphasise emphasize encourage end enjoy ensure enter excel
    exchange expand experience explain explore express face fall feel fight find finish fix focus
    follow forget form found gain get give go grow handle happen hate head hear help highlight
    hike hold hope host imagine improve include increase inform inquire inspire intend introduce
    invest invite join keep know learn leave let like listen live look lose love maintain make
    manage mean meet mention miss motivate move need note notice offer open organise organize
    overcome paint participate pass pay persevere pick plan play praise prefer prepare present
    promise prove provide pursue push put reach read realise realize reassure receive recall
    recommend reflect relate relax rely remain remember remind reply report request resolve
    respond rest return reveal ride rise root run save say see seek seem sell send serve set share
    show sign sing sit sleep speak spend stand start stay stop strive struggle succeed suggest
    support surprise swim take talk teach tell tend thank think thrive touch track train travel
    treat try turn understand update urge use value visit vow wait walk want watch win wish
    wonder work worry write
    """.split()
)
IRREGULAR_PAST = {
    "was": "be", "were": "be", "been": "be", "became": "become", "began": "begin", "begun": "begin",
    "brought": "bring", "built": "build", "bought": "buy", "caught": "catch", "chose": "choose",
    "chosen": "choose", "came": "come", "did": "do", "done": "do", "drove": "drive", "driven": "drive",
    "ate": "eat", "eaten": "eat", "fell": "fall", "fallen": "fall", "felt": "feel", "fought": "fight",
    "found": "find", "forgot": "forget", "forgotten": "forget", "got": "get", "gotten": "get",
    "gave": "give", "given": "give", "went": "go", "gone": "go", "grew": "grow", "grown": "grow",
    "heard": "hear", "held": "hold", "kept": "keep", "knew": "know", "known": "know", "learnt": "learn",
    "left": "leave", "lost": "lose", "made": "make", "meant": "mean", "met": "meet", "paid": "pay",
    "ran": "run", "rode": "ride", "rose": "rise", "said": "say", "saw": "see", "seen": "see",
    "sought": "seek", "sold": "sell", "sent": "send", "showed": "show", "shown": "show", "sang": "sing",
    "sat": "sit", "slept": "sleep", "spoke": "speak", "spoken": "speak", "spent": "spend",
    "stood": "stand", "swam": "swim", "took": "take", "taken": "take", "taught": "teach", "told": "tell",
    "thought": "think", "understood": "understand", "won": "win", "wrote": "write", "written": "write",
    "overcame": "overcome",
}
# Verbs that frame an event rather than state it: saying, thinking, feeling, wanting, and the aspect
# or attempt around another verb ("planned to start", "tried to fix", "seems to work"). Among the
# verbs they go first; the verb of the event itself ("lost his job", "adopted a puppy") goes last.
LIGHT_VERBS = frozenset(
    """
    be become seem appear feel think believe know hope wish want plan aim intend try start begin
    continue keep tend manage decide consider realise realize remember recall mention share express
    discuss talk say tell explain describe note reflect emphasise emphasize highlight praise encourage
    inspire motivate admire appreciate thank reassure affirm commend urge get
    """.split()
)
LINKING_VERBS = frozenset("feel seem look sound become get stay remain appear".split())
# Verbs after which an -ing word names an activity: "enjoys painting", "took up running".
ACTIVITY_VERBS = frozenset("enjoy love like hate prefer try start begin quit practise practice go take miss".split())

# Evaluative and general adjectives: what a summary says about a thing, rarely what is asked.
# Adjectives that tell one thing from another of its kind ("the new model", "the current plan",
# "the real fix") are not here: they are content like any other word.
ADJECTIVES = frozenset(
    """
    good great nice amazing awesome wonderful fantastic incredible lovely beautiful perfect
    happy glad excited exciting proud grateful thankful positive negative tough hard difficult
    easy important interesting special unique various different
    similar true whole entire strong successful supportive inspiring inspired motivated
    determined passionate eager enthusiastic meaningful significant valuable helpful useful
    personal mutual fun ready able sure certain keen fond lucky hopeful confident
    challenging rewarding stressful overwhelming encouraging uplifting heartwarming fulfilling
    """.split()
)
# Nouns that end in -ly and name things.
_LY_NOUNS = frozenset("family jelly belly lily supply reply assembly butterfly holly rally ally italy".split())
_ED_NOUNS = frozenset("bed shed seed speed feed weed reed breed sled hundred".split())
# Nouns of attitude ("appreciation", "determination", "happiness") are not here: what a person feels
# or shows is what questions about people ask ("What does Gina admire in Jon?" "His positivity and
# determination"), so they stay like other nouns.


def _bases(word: str) -> set[str]:
    """The forms word may be an inflection of: walks → walk, tried → try, stopped → stop, making → make."""
    bases = {word}
    if word in IRREGULAR_PAST:
        bases.add(IRREGULAR_PAST[word])
    for suffix, repl in (("ies", "y"), ("ied", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"),
                         ("ing", ""), ("ing", "e")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            stem = word[: -len(suffix)] + repl
            bases.add(stem)
            if not repl and len(stem) > 2 and stem[-1] == stem[-2]:
                bases.add(stem[:-1])  # stopped → stop, running → run
    return bases


def is_verb(word: str) -> bool:
    return bool(_bases(word) & VERBS)


def is_linking_verb(word: str) -> bool:
    """A verb that links its subject to what is said of it: "feels proud", "looks amazing"."""
    return bool(_bases(word) & LINKING_VERBS)


def is_light_verb(word: str) -> bool:
    return bool(_bases(word) & LIGHT_VERBS)


def is_participle(word: str) -> bool:
    return (word.endswith("ing") and len(word) > 5) or (word.endswith("ed") and len(word) > 4
                                                         and word not in _ED_NOUNS)


def is_modifier(word: str) -> bool:
    """An evaluative adjective or an -ly adverb of manner: droppable wherever it stands. The adverbs
    that say how often, how much or how sure (QUALIFIERS) are not modifiers."""
    return word in ADJECTIVES or (word.endswith("ly") and len(word) > 4 and word not in _LY_NOUNS
                                  and word not in QUALIFIERS)


def names_a_thing(word: str, in_noun_phrase: bool, first_in_run: bool, after: str = "") -> bool:
    """Whether a content word (lower case) is taken for a concrete noun, to be kept.

    in_noun_phrase: the run of content words it stands in follows a determiner, possessive,
    preposition or number. first_in_run: no content word stands between it and that context
    word. after: the content word before it in its run, if any."""
    if is_modifier(word):
        return False
    if in_noun_phrase:
        return True
    if is_participle(word) and word.endswith("ing") and after and _bases(after) & ACTIVITY_VERBS:
        return True
    if first_in_run:
        return not (is_verb(word) or is_participle(word))
    return not is_participle(word)
