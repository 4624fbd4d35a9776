"""The names a query gives, as the word index spells them: what the cut-off asks the store about.

A name is what a query is about and what a note about it must say: "Celery", "Kafka", "GraphQL",
"Gina" cannot be paraphrased the way "rate limiting" can ("blocks us after 30 requests per second").
So a name the store holds nowhere is evidence that it holds nothing the query asks about, even when
some memory sits close to the rest of the question (a question about Gina's store against a chat about
Melanie's pottery: cosine 0.4-0.5). A name is told by its spelling: a word with a capital inside it
("GraphQL", "iOS", "JWT") or a capitalised word that does not open a sentence or a quote ("the Kafka
topic"). A month is a date, not a name (memcli.index.dates), and a stopword ("I", "The") is none. A query typed in lower
case names nothing, and neither does a language that capitalises its nouns the way a name is told.
"""

from __future__ import annotations

import re

from memcli.index.dates import MONTHS
from memcli.index.lexical import STOPWORDS

_WORD = re.compile(r"\w+", re.UNICODE)
_OPENS = ".?!:;\"'(“‘"
_NOT_NAMES = frozenset(month.lower() for month in MONTHS) | STOPWORDS


def names(query: str) -> list[str]:
    """The names of a query (see the module docstring), lower-cased as lexical.words gives them, each once."""
    found = []
    for match in _WORD.finditer(query):
        word = match.group()
        before = query[:match.start()].rstrip()
        opens = not before or before[-1] in _OPENS
        if any(c.isupper() for c in word[1:]) or (word[0].isupper() and not opens):
            found.append(word.lower())
    return [word for word in dict.fromkeys(found) if word not in _NOT_NAMES]
