"""Closed classes of English words that compression reasons about.

Function words carry grammar, not facts; the prose method still drops only the few of them shown safe
in their place (memcli.compress.meaning). Negations flip a fact, so they are protected spans. The lists
are written for this project.
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

# What the prose method may drop (memcli.compress.meaning says where).
ARTICLES = frozenset("a an the".split())
MODALS = frozenset("would could might may shall must should can will cannot".split())
# Interjections of chat: no claim hangs on them anywhere.
FILLERS = frozenset("oh ah aw aww wow whoa ooh hmm um umm uh haha hahaha lol omg yay".split())
# Degree words that colour a statement without changing it ("so" only before an adjective).
INTENSIFIERS = frozenset("very really totally literally truly basically super so".split())
# Verbs that only frame what someone said: after the first one, a reader knows the frame, and a repeat
# ("Jon mentioned ..., Gina mentioned ...") goes; a verb that says what was done ("told", "shared a
# photo", "noted the number") is not here.
FRAMING_VERBS = frozenset(
    """
    mention mentions mentioned mentioning express expresses expressed expressing emphasize emphasizes
    emphasized emphasizing emphasise emphasises emphasised emphasising remark remarks remarked remarking
    state states stated stating
    """.split()
)
# Openers of a spoken sentence, when a comma follows: "Well, ...", "Anyway, ...".
OPENING_FILLERS = frozenset("well so anyway ok okay alright".split())
# A clause that says only one of these (its words lower-cased, names left out) is a pleasantry.
GREETINGS = frozenset(
    " ".join(greeting.split()) for greeting in """
    hey|hi|hello|hey there|hi there|bye|goodbye|cheers|thanks|thank you|thanks a lot|thanks so much
    |thank you so much|thank you very much|thanks again|many thanks|congrats|congratulations|take care
    |talk soon|see you|see you soon|see you later|good to see you|nice to see you|good to hear from you
    |great to hear from you|nice to hear from you|how are you|how have you been|how's it going
    |how are things|what's up|good morning|good evening|good night
    """.split("|")
)
# Verbs of saying and thinking: "that" after one opens what was said ("decided that the cache ...").
REPORTING_VERBS = frozenset(
    """
    say says said tell tells told think thinks thought believe believes believed know knows knew
    notice noticed find finds found realise realised realize realized decide decided agree agreed
    suggest suggested note noted explain explained confirm confirmed feel feels felt hope hoped hopes
    share shared shares express expressed learn learned learnt discover discovered show showed shows
    mean means meant guess guessed assume assumed mention mentioned mentions claim claimed report
    reported hear heard read see saw ensure ensured insist insisted promise promised admit admitted
    """.split()
)
# What a clause's subject begins with.
SUBJECT_OPENERS = frozenset(
    "the a an this these those i we you he she it they there his her our their my your its".split()
)
