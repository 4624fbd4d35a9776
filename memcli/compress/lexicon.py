"""Verbs, participles and adjectives, told apart without a tagger.

What follows a copula or an auxiliary: a participle, or an adjective that states something.

"The proposal was rejected" reads as "proposal rejected" and "the queue is empty" as "queue empty":
the auxiliary or copula before a participle or an adjective carries only grammar, so the prose method
may drop it (memcli.compress.meaning). Before anything else ("the owner is Priya", "has two
replicas", "is like a lock") it carries the claim and stays. Told apart without a tagger: suffixes,
a list of irregular participles and one of common adjectives; a word this module does not know is
taken for something else, so the auxiliary stays (a kept word costs a token, a dropped one a fact).
The verbs (a lexicon of common ones, inflections found by morphology) tell a summary's sentence that
opens with a verb from one that opens with a name (memcli.threads.kept_facts).
"""

from __future__ import annotations

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
# Past participles that do not end in -ed.
IRREGULAR_PARTICIPLES = frozenset(
    """
    been done gone seen known shown built sent kept lost made found left run set put cut read written
    taken given broken chosen frozen stolen spoken driven eaten fallen forgotten hidden ridden risen
    shaken worn torn thrown grown drawn flown blown begun sung won held told sold paid said met felt
    meant bought brought caught taught thought sought fought spent lent burnt learnt dealt hung stuck
    struck split shut hit hurt let quit spread cost become come overcome understood withdrawn rebuilt
    rewritten mistaken undone upset reset rerun
    """.split()
)
# Words in -ed and -ing that are no participles.
_NOT_PARTICIPLES = frozenset(
    """
    bed shed seed speed feed weed reed breed sled hundred need red bred fed led wed shred
    thing nothing something anything everything morning evening spring string ceiling wedding king
    ring sibling during pudding
    """.split()
)
# Adjectives common in notes and chat: after a copula they are the statement ("the build is green").
ADJECTIVES = frozenset(
    """
    good great nice amazing awesome wonderful fantastic incredible lovely beautiful perfect bad fine
    happy glad sorry sad proud grateful thankful excited positive negative tough hard difficult easy
    important interesting special unique different similar same true false whole strong weak
    successful supportive helpful useful ready able sure certain keen fond lucky busy free idle
    wrong right correct incorrect slow fast quick safe unsafe stable unstable flaky stale fresh
    empty full open clean dirty cheap expensive large small big huge tiny long short high low
    new old young late early cold hot warm cool green red public private internal external
    optional available unavailable valid invalid possible impossible likely unlikely enough due
    local remote live alive dead current outdated visible invisible equal ok okay better worse
    best worst down up off out on
    """.split()
)
_ADJECTIVE_SUFFIXES = ("ful", "less", "able", "ible", "ous")


def is_participle(word: str) -> bool:
    """A past participle ("rejected", "rebuilt") or a present one ("failing")."""
    if word in _NOT_PARTICIPLES:
        return False
    return word in IRREGULAR_PARTICIPLES or is_past_participle(word) or (word.endswith("ing") and len(word) > 4)


def is_past_participle(word: str) -> bool:
    return word not in _NOT_PARTICIPLES and (word in IRREGULAR_PARTICIPLES
                                             or (word.endswith("ed") and len(word) > 3))


def is_adjective(word: str) -> bool:
    return word in ADJECTIVES or (word.endswith(_ADJECTIVE_SUFFIXES) and len(word) > 5)


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
