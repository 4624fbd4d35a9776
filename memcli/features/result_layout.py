"""A search result an assistant can afford: the best hits whole, the rest as the one sentence that answers.

A reader of an MCP `memory_search` result pays for every hit it is handed, and it mostly needs the
first one or two; the ones after them are there in case, and a reader can tell from one sentence
whether one is what it wants. So the block (each day once, `ID content` lines: memcli.features.budget)
gives the first FULL hits in their compressed form, and every hit after them as one line: the sentence
of the memory that holds most of the query's weight (its rare words, as BM25 weighs them: the question
"When did Caroline go to the LGBTQ support group?" meets "I went to a LGBTQ support group yesterday",
not the turn's opening "Hey Mel!"; where no sentence holds a query word, as in a hit found by its
meaning, the sentence closest to the query in meaning), in its compressed form, under the label its
sentence is under ("Caroline:"), and ending in CUT when the memory says more. `memory_get` with its id
gives the whole.

    8 May 2023
    3KX Caroline: went LGBTQ support group yesterday, so powerful
    9QD Melanie: painted lake sunrise last year …

The sentence is chosen on the raw text, whose full stops and labels say where sentences end
(memcli.index.sentence_vectors), and shown in the compressed form: prune only leaves words out, so each
word of the compressed form is found again, in order, in the raw sentences. A form that cannot be
followed so (an abstractive one) gives the raw sentence instead. A memory of one sentence, or one whose
other sentences are a few words (fewer than CUT_WORDS), is shown whole: a fetch would cost more than the
words it saves. Two cut lines of one day that say nearly the same (memcli.index.distinct) are one line
with both ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from memcli.errors import MemError
from memcli.features.budget import dated
from memcli.index.distinct import near, shingles
from memcli.index.lexical import idf, words
from memcli.index.sentence_vectors import labelled_sentences
from memcli.store.memory import Memory

FULL = 2  # hits shown whole before the one-line form
CUT = "…"  # ends a line that is part of its memory (one token, as a full stop is)
CUT_WORDS = 6  # a memory is cut only when that leaves out at least this many of its words
LOOK_AHEAD = 12  # raw words a compressed word is looked for among: a label, which no raw sentence holds,
# is not then found in a later sentence that names the speaker
STEM = 5  # query words meet sentence words by their first letters, less an inflection and a final e:
# "painted" and "painting", "camped" and "camping", "dance" and "dancing", "make" and "makes"
EDGE = re.compile(r"^\W+|\W+$")
INFLECTION = re.compile(r"(?<=\w{3})(ing|ed|es|s)$")
FINAL_E = re.compile(r"(?<=\w{3})e$")


def stem(word: str) -> str:
    return FINAL_E.sub("", INFLECTION.sub("", EDGE.sub("", word.casefold())))[:STEM]


@dataclass(frozen=True)
class Line:
    """What the block shows of one memory: its text, and whether the memory says more (`cut`)."""

    text: str
    cut: bool = False


def query_weights(terms: Sequence[str], weight: Callable[[str], float]) -> dict[str, float]:
    """Each query word's weight, by its stem (two words of one stem count once, at the higher)."""
    weights: dict[str, float] = {}
    for term in terms:
        key = stem(term)
        if key:
            weights[key] = max(weights.get(key, 0.0), weight(term))
    return weights


def held(sentence: str, weights: dict[str, float]) -> float:
    """The weight of the query words a sentence holds, each counted once."""
    return sum(weights[key] for key in {stem(word) for word in sentence.split()} if key in weights)


Closest = Callable[[list[str]], int]  # which of some sentences is closest in meaning to the query


def one_line(memory: Memory, weights: dict[str, float], closest: Closest | None = None) -> Line:
    """The sentence of the memory's default form that holds most of the query's weight (the first one
    on a tie; the closest in meaning when none holds a query word), under its label, or the whole form
    when cutting would leave out little."""
    whole = " ".join(memory.content.split())
    sentences = labelled_sentences(memory.raw)
    if len(sentences) < 2:
        return Line(whole)
    weight = [held(sentence, weights) for _, sentence in sentences]
    best = max(range(len(sentences)), key=lambda n: (weight[n], -n))
    if not weight[best] and closest is not None:
        best = closest([f"{label}: {sentence}" if label else sentence for label, sentence in sentences])
    label, sentence = sentences[best]
    shown = compressed_part(memory.content, sentences, best) if memory.optimized else sentence
    if not shown:
        shown = sentence
    text = f"{label}: {shown}" if label and not shown.startswith(f"{label}:") else shown
    if len(whole.split()) - len(text.split()) < CUT_WORDS:
        return Line(whole)
    return Line(text, cut=True)


def compressed_part(content: str, sentences: list[tuple[str | None, str]], chosen: int) -> str | None:
    """The words of `content` (an extractive form of the raw text the sentences come from) that belong to
    sentence `chosen`, found by walking both in order (each among the next LOOK_AHEAD raw words); None
    when too few of its words are found so (the form is not extractive)."""
    raw = [(stem_or_word(word), n) for n, (_, sentence) in enumerate(sentences) for word in sentence.split()]
    words, at, found, part = content.split(), 0, 0, []
    for word in words:
        key = stem_or_word(word)
        for position in range(at, min(at + LOOK_AHEAD, len(raw))):
            if raw[position][0] == key:
                at, found = position + 1, found + 1
                if raw[position][1] == chosen:
                    part.append(word)
                break
    if found < 0.8 * len(words):
        return None
    return " ".join(part).strip() or None


def stem_or_word(word: str) -> str:
    """A word as the walk compares it: without the marks at its ends (a full stop the compressed form left
    out), in full; a word of marks alone as it is."""
    return EDGE.sub("", word.casefold()) or word


def result_lines(memories: Sequence[Memory], weights: dict[str, float], closest: Closest | None = None) -> list[Line]:
    """What the block shows of each memory, best first: the first FULL whole, the rest one line each."""
    return [Line(" ".join(memory.content.split())) if n < FULL else one_line(memory, weights, closest)
            for n, memory in enumerate(memories)]


def search_lines(mem, memories: Sequence[Memory], query: str, *, meaning: bool = True) -> list[Line]:
    """result_lines for a search of this store: the query's words weighed by how rare they are in it,
    and, with `meaning`, the embedding model for a hit holding none of them (the first sentence when
    the model cannot be had). Nothing is looked up when no hit is past the first FULL."""
    if len(memories) <= FULL:
        return result_lines(memories, {})
    lexicon = mem.catalog.lexicon
    stored = lexicon.memories()  # a word's weight is its idf: a name every memory says counts little
    weights = query_weights(words(query), lambda word: idf(lexicon.frequency(word), stored))
    return result_lines(memories, weights, closest_to(mem, query) if meaning else None)


def closest_to(mem, query: str) -> Closest:
    """Which of some sentences is closest to the query in meaning (the embedding model's cosine), each
    embedded under its label as the index embeds it; the first when the model cannot be had."""
    def closest(sentences: list[str]) -> int:
        import numpy as np

        try:
            vectors = np.asarray(mem.embedder().model.embed([query, *sentences]))
        except MemError:
            return 0
        return int((vectors[1:] @ vectors[0]).argmax())

    return closest


def result_block(memories: Sequence[Memory], lines: Sequence[Line], short_id: Callable[[str], str]) -> str:
    """The text of a search result, from each memory's line (see the module's docstring)."""
    rows: list[tuple[str, list[str], Line]] = []  # (day, ids, line)
    for memory, line in zip(memories, lines):
        day = memory.created_at[:10]
        twin = line.cut and next((row for row in rows if row[0] == day and row[2].cut
                                  and near(shingles(row[2].text), shingles(line.text))), None)
        if twin:
            twin[1].append(short_id(memory.id))
        else:
            rows.append((day, [short_id(memory.id)], line))
    return dated((day, " ".join(ids) + " " + line.text + (f" {CUT}" if line.cut else ""))
                 for day, ids, line in rows)
