"""Closed classes of English words that compression reasons about.

Function words carry grammar, not facts, so the pruner drops them first; negations are function
words that flip a fact, so they are protected instead. The lists are written for this project.
"""

from __future__ import annotations

# English first, then the common ones of German, Dutch, French, Spanish, Italian and Portuguese, so a
# note in another language does not lose its "nicht" or "sans" either.
NEGATIONS = frozenset(
    """
    not no never nor neither none nobody nothing nowhere without cannot
    nicht kein keine keinen keinem keiner keines nie niemals nichts ohne niet geen nooit zonder
    pas jamais sans aucun aucune rien nunca sin nada ningún ninguna tampoco
    non mai senza niente nessun nessuno não sem nenhum nenhuma
    """.split()
)

# Articles, pronouns, auxiliaries, prepositions and conjunctions; in chat, interjections and greetings
# ("wow", "hey", "thanks") and the spoken forms of auxiliaries ("gonna", "kinda"). Quantifiers and focus words
# (only, all, more, still), obligation (must, should) and order (before, after, until) are left
# out on purpose: dropping them changes the fact.
FUNCTION_WORDS = frozenset(
    """
    a an the this that these those there here
    i me my mine myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs themselves
    who whom whose which what whatever whoever
    am is are was were be been being have has had having do does did doing done
    will would shall can could may might
    i'm i've i'd i'll you're you've you'd you'll he's he'd he'll she's she'd she'll
    it's it'd it'll we're we've we'd we'll they're they've they'd they'll
    that's there's here's what's who's let's
    of at by for with about against between into through above below
    to from up down in out on off over under onto upon within along across around toward towards
    among amongst via per
    and or but if as so then though although whereas whether
    also too very just such
    how when where why
    s t ll re ve d m
    oh ah aw aww wow whoa ooh hey hi hello haha lol omg hmm um uh yeah yep yup cheers bye
    thanks thank congrats congratulations
    gonna wanna gotta kinda sorta 'em ya lemme gimme
    """.split()
)

# Function words that still change the claim: modals of possibility and obligation ("would be lost on
# transfer" is not "lost on transfer") and the prepositions of a specific place or share ("around the
# lake", "per API key", "via the VPN"), unlike the common in, on, at, of, to. Never dropped.
MODALS = frozenset("would could might may shall".split())
SPECIFIC_PREPOSITIONS = frozenset("around across along within toward towards among amongst via per onto upon".split())

# Words that frame a statement rather than state it: reporting verbs and intensifiers (not hedges:
# "probably" changes how sure the fact is).
# Dropped before content words; they are in no answer a reader asks about.
FRAMING_WORDS = frozenset(
    """
    mentioned mentions said says told tells shared expressed expresses discussed discusses
    talked noted explained explains stated replied asked responded remarked emphasized emphasised
    really actually basically simply quite rather somewhat certainly definitely indeed
    """.split()
)

# Words between a number and the word that governs it that change the amount: "save another $90".
QUANTIFIERS = frozenset(
    """
    another more less fewer extra additional further total only just almost nearly about around
    roughly approximately over under least most some all each every both half
    """.split()
)

# Adverbs that qualify a fact rather than colour it: how often, how much of it, how sure, how long
# ("usually", "weekly", "mostly", "probably", "permanently"). Dropping one changes what is claimed,
# unlike a manner adverb ("slowly", "happily").
QUALIFIERS = frozenset(
    """
    always usually often sometimes rarely seldom occasionally frequently regularly normally generally
    typically hourly daily nightly weekly fortnightly monthly yearly annually quarterly
    mostly mainly largely partly fully completely entirely hardly barely exactly especially
    particularly primarily solely probably possibly likely maybe perhaps permanently
    temporarily early late soon
    """.split()
)

# Determiners, possessives and prepositions: the content words after one form a noun phrase.
NOUN_PHRASE_OPENERS = frozenset(
    """
    a an the my your his her its our their this that these those some any each every several many
    few of at in on for with from by about into onto over under near behind beside after before
    during through via per to like as
    """.split()
)

# Causal and contrastive links: "switched to X because Y", "kept A instead of B". Dropping one turns
# a reason into a second, unrelated fact.
RELATION_LINKS = frozenset(
    """
    because since so therefore thus hence but yet although though whereas while instead unless
    despite otherwise
    """.split()
)

# The links among those that introduce a reason: the clause after one answers a "why".
CAUSAL_LINKS = frozenset("because since so therefore thus hence".split())

# Sentence adverbs and connectives: at the start of a sentence they are capitalised but no name.
CONNECTIVES = frozenset(
    """
    however therefore meanwhile moreover furthermore additionally overall anyway besides otherwise
    instead thus hence finally later afterwards eventually unfortunately fortunately luckily sadly
    yes ok okay well please thanks now first next last lastly still yet already again once
    """.split()
)

# Spelled-out numbers and ordinals are facts like digits are.
NUMBER_WORDS = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
    hundred hundreds thousand thousands million millions billion billions trillion dozen dozens
    half twice thrice first second third fourth fifth sixth seventh eighth ninth tenth
    """.split()
)

MONTHS = "January February March April May June July August September October November December".split()
MONTH_ABBREVIATIONS = "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split()

WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()

RELATIVE_DAYS = "yesterday today tonight tomorrow".split()

TIME_UNITS = (
    "second seconds minute minutes hour hours day days night nights week weeks weekend weekends "
    "month months year years decade decades morning evening afternoon summer winter spring autumn fall"
).split()
