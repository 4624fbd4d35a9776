"""A memory's vector: the word-weighted mean of its sentences' vectors, each sentence embedded with the label it is under.

MiniLM is a sentence model, and one mean-pooled vector of a whole multi-sentence text blurs its
sentences together, most of all the words said once, such as the speaker's name at the start of a
chat turn ("Caroline: Thanks! ... I moved from Sweden ..."), which is what a question names ("Where
did Caroline move from?"). So each sentence is embedded on its own, carrying the label that the
text, or its line, opens with ("Caroline:", "Decision:"), as a chunk carries its document's title,
and the memory's vector is the normalised mean of those vectors, each weighted by its sentence's
words (without the label): every word counts alike, as in a vector of the whole text, and the label
counts in each sentence. Weighted alike, a "How have you been?" counted as much as the sentence
that says what happened (README: R@5 lower on conv-26, R@10 on conv-30). A fragment of one or two words ("Wow!",
"Thanks, Mel!") joins the next sentence: alone it is little more than its label. A text of one
sentence is embedded as it is. Queries are embedded whole, as before. A label stops at a blank line
(a "Subject:" or "TODO:" heads its paragraph, not the note), and code in a fence has none.

Measured with `bench/retrieval.py` on each LoCoMo development conversation (README, "How search
works"); the same sentences without their label did worse than the whole text, so the label is the
point, not the splitting.
"""

from __future__ import annotations

import re

METHOD = "sentences-2"  # part of the model id the catalog records: a change here re-embeds every memory
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")  # a mark and a space: "3.5 GB" and "v1.2" stay whole
LABEL = re.compile(r"([^\s:.!?][^:.!?\n]{0,39}):\s+")
LABEL_WORDS = 5
FRAGMENT_WORDS = 3  # fewer words than this join the next sentence
# The first sentences only, so a long text costs a bounded write (a whole text is cut at the model's 256
# tokens; 32 sentences are the first 600-1,000 tokens, more than an ingest chunk holds).
MAX_UNITS = 32


def label_of(line: str) -> tuple[str | None, str]:
    """(label, the rest) when a line opens with a short label and a colon ("Caroline: ..."), else (None, line)."""
    found = LABEL.match(line)
    if found and len(found.group(1).split()) <= LABEL_WORDS:
        return found.group(1), line[found.end():]
    return None, line


def units(text: str) -> list[str]:
    """The texts a memory's vector is the mean of: its sentences, each prefixed with the label in force
    (that of its line, else that of the lines above it up to a blank line; none inside a code fence). A
    fragment joins the next sentence under the same label, or the one before it where there is none."""
    return [_labelled(label, sentence) for label, sentence in labelled_sentences(text)]


def _labelled(label: str | None, sentence: str) -> str:
    return f"{label}: {sentence}" if label else sentence


def labelled_sentences(text: str) -> list[tuple[str | None, str]]:
    """(label, sentence) for each of units(text); [(None, text)] for a text of one sentence."""
    pairs: list[list] = []  # [label, sentence]
    label, carry, fenced = None, "", False
    for line in text.splitlines():
        line = line.strip()
        fence = line.startswith(("```", "~~~"))
        if fence or not line:
            fenced ^= fence
            _attach(pairs, label, carry)
            label, carry = None, ""
            continue
        own, rest = (None, line) if fenced else label_of(line)
        if own is not None and own != label:
            _attach(pairs, label, carry)
            label, carry = own, ""
        for sentence in SENTENCE_END.split(rest):
            sentence = f"{carry} {sentence}".strip()
            carry = ""
            if len(sentence.split()) < FRAGMENT_WORDS:
                carry = sentence
            else:
                pairs.append([label, sentence])
    _attach(pairs, label, carry)
    if len(pairs) < 2:
        return [(None, text)]
    return [(label, sentence) for label, sentence in pairs[:MAX_UNITS]]


def _attach(pairs: list[list], label: str | None, fragment: str) -> None:
    if not fragment:
        return
    if pairs and pairs[-1][0] == label:
        pairs[-1][1] = f"{pairs[-1][1]} {fragment}"
    else:
        pairs.append([label, fragment])


class MemoryEmbedder:
    """An Embedder (memcli.providers.protocols) whose `embed` gives memory vectors as above; `query`
    embeds a search query whole. Its `model_id` names the method too, so vectors made another way are
    never mixed with these."""

    def __init__(self, model):
        self.model = model
        self.model_id = f"{model.model_id}+{METHOD}"
        self.dim = model.dim

    def embed(self, texts: list[str]):
        return self.embed_with_whole(texts, whole=False)[0]

    def embed_with_whole(self, texts: list[str], *, whole: bool = True):
        """(memory vectors, each text embedded whole or None) from one call to the model: a write's
        near-duplicate check compares whole texts (memcli.core.near_duplicates) and must not embed the
        same text again. A text of one sentence is its own whole."""
        import numpy as np

        split = [labelled_sentences(text) for text in texts]
        inputs = [_labelled(label, sentence) for parts in split for label, sentence in parts]
        extra = [n for n, parts in enumerate(split) if whole and parts != [(None, texts[n])]]
        vectors = self.model.embed(inputs + [texts[n] for n in extra])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        wholes = [None] * len(texts)
        start = 0
        for row, parts in enumerate(split):
            weights = np.array([max(1, len(sentence.split())) for _, sentence in parts], dtype=np.float32)
            out[row] = weights @ vectors[start:start + len(parts)]
            if whole and row not in extra:
                wholes[row] = vectors[start]
            start += len(parts)
        for n, row in enumerate(extra):
            wholes[row] = vectors[len(inputs) + n]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12), wholes

    def query(self, text: str):
        return self.model.embed([text])[0]
