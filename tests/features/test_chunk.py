"""Chunking for ingest: meaningful cuts, bounded size, nothing lost, same chunks every time."""

from __future__ import annotations

import random
import re

import pytest

from memcli.errors import InputError
from memcli.features.ingest.chunk import split

HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")


def squeeze(text: str) -> str:
    return "".join(text.split())


def assert_sound(text: str, chunks: list[str], limit: int) -> None:
    assert all(0 < len(c) <= limit for c in chunks), [len(c) for c in chunks]
    assert all(c == c.strip() for c in chunks)
    assert squeeze("".join(chunks)) == squeeze(text)


def sentences(n: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    words = "memory index vector store token model query file chunk search raw prose compressed".split()
    return " ".join(" ".join(rng.choice(words) for _ in range(rng.randint(5, 15))).capitalize() + "." for _ in range(n))


def test_short_text_is_one_chunk():
    assert split("  Just a note about the deploy.\n") == ["Just a note about the deploy."]


def test_whitespace_only_gives_no_chunk():
    assert split(" \n\t\n") == []
    assert split("") == []


def test_limit_must_be_positive():
    with pytest.raises(InputError):
        split("text", 0)


def test_small_sections_are_packed_and_big_ones_start_with_their_heading():
    doc = "\n\n".join([
        "# Setup\n\n" + sentences(3, 1),
        "## Install\n\n" + sentences(3, 2),
        "## Configure\n\n" + sentences(30, 3),
        "## Run\n\n" + sentences(2, 4),
    ])
    chunks = split(doc, 600)
    assert_sound(doc, chunks, 600)
    assert chunks[0].startswith("# Setup") and "## Install" in chunks[0]
    configure = [c for c in chunks if "## Configure" in c]
    assert len(configure) == 1 and configure[0].startswith("## Configure\n\n")
    assert any(c.startswith("## Run") or "\n## Run" in c for c in chunks)


def test_a_chunk_never_ends_with_a_heading():
    doc = "\n\n".join(f"## Part {i}\n\n" + sentences(4 + i % 5, i) for i in range(20))
    for limit in (200, 350, 800, 1500):
        chunks = split(doc, limit)
        assert_sound(doc, chunks, limit)
        for c in chunks:
            assert not HEADING.match(c.splitlines()[-1]), c


def test_headings_with_empty_bodies_travel_with_the_next_section():
    doc = "# Guide\n\n## Chapter 1\n\n### Intro\n\n" + sentences(40, 5)
    chunks = split(doc, 500)
    assert_sound(doc, chunks, 500)
    assert chunks[0].startswith("# Guide\n\n## Chapter 1\n\n### Intro\n\n")
    assert not HEADING.match(chunks[0].splitlines()[-1])


def test_an_empty_last_section_may_be_a_lone_heading():
    doc = sentences(40, 6) + "\n\n## Appendix\n"
    chunks = split(doc, 400)
    assert_sound(doc, chunks, 400)
    assert chunks[-1].endswith("## Appendix")


def test_paragraphs_are_kept_whole_when_they_fit():
    paragraphs = [sentences(3, i) for i in range(12)]
    doc = "\n\n".join(paragraphs)
    limit = max(len(p) for p in paragraphs) + 10
    chunks = split(doc, limit)
    assert_sound(doc, chunks, limit)
    for c in chunks:
        assert all(part in paragraphs for part in c.split("\n\n"))
    assert len(chunks) < len(paragraphs)  # neighbours were packed


def test_one_huge_paragraph_is_cut_between_sentences():
    doc = sentences(200, 7)
    chunks = split(doc, 500)
    assert_sound(doc, chunks, 500)
    assert len(chunks) > 5
    assert all(c.endswith(".") for c in chunks)


def test_lines_without_sentences_are_cut_at_line_ends():
    doc = "\n".join(f"- item {i} with some words but no full stop" for i in range(100))
    chunks = split(doc, 300)
    assert_sound(doc, chunks, 300)
    assert all(c.startswith("- item") and c.endswith("full stop") for c in chunks)


def test_a_run_without_whitespace_is_cut_hard():
    blob = "".join(random.Random(3).choice("abcdef0123456789") for _ in range(5000))
    doc = "hash list: " + blob + " end"
    chunks = split(doc, 1000)
    assert_sound(doc, chunks, 1000)
    assert squeeze("".join(chunks)) == squeeze(doc)


def test_unicode_is_counted_in_characters_and_kept_intact():
    doc = "\n\n".join([
        "# 日本語のメモ\n\n" + "これは長い文章です。" * 120,
        "## Émojis 🚀\n\n" + "Déploiement réussi 🎉 après la migration. " * 60,
    ])
    chunks = split(doc, 300)
    assert_sound(doc, chunks, 300)
    assert chunks[0].startswith("# 日本語のメモ")
    assert all(c.endswith(("。", ".")) for c in chunks)


def test_code_fences_are_not_cut_at_their_comments_or_blank_lines():
    code = "```python\n# not a heading\nx = 1\n\n# still code\ny = 2\n```"
    before = sentences(6, 8)
    introduction = before[before.rstrip(".").rindex(".") + 2:]  # the code is kept with the sentence before it
    doc = "## Example\n\n" + before + "\n\n" + code + "\n\n" + sentences(6, 9)
    limit = len(introduction) + len(code) + 40
    chunks = split(doc, limit)
    assert_sound(doc, chunks, limit)
    assert any(introduction + "\n\n" + code in c for c in chunks)


def test_same_input_gives_same_chunks():
    doc = "\n\n".join(f"## S{i}\n\n" + sentences(i % 7 + 1, i) for i in range(30))
    assert split(doc, 700) == split(doc, 700)


def test_appending_a_section_keeps_the_earlier_chunks():
    # Re-ingesting a file that only grew at the end adds memories instead of rewriting them all.
    doc = "\n\n".join(f"## S{i}\n\n" + sentences(i % 7 + 1, i) for i in range(30))
    before = split(doc, 700)
    after = split(doc + "\n\n## New\n\n" + sentences(5, 99), 700)
    assert after[: len(before) - 1] == before[:-1]


@pytest.mark.parametrize("seed", range(25))
def test_random_documents_keep_every_invariant(seed):
    rng = random.Random(seed)
    parts = []
    for _ in range(rng.randint(1, 25)):
        kind = rng.random()
        if kind < 0.25:
            parts.append("#" * rng.randint(1, 4) + " " + sentences(1, rng.random()).rstrip("."))
        elif kind < 0.35:
            parts.append("```\n" + "\n".join(f"line {i};" for i in range(rng.randint(1, 40))) + "\n```")
        elif kind < 0.45:
            parts.append("x" * rng.randint(1, 3000))
        else:
            parts.append(sentences(rng.randint(1, 30), rng.random()))
    doc = ("\n" * rng.randint(1, 3)).join(parts)
    limit = rng.choice([40, 120, 500, 1500])
    chunks = split(doc, limit)
    assert_sound(doc, chunks, limit)
    assert chunks == split(doc, limit)
