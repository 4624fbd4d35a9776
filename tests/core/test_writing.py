"""What one write costs the models: `mem add` embeds its text's sentences for the index in one call, and the
near-duplicate check embeds the whole text once, in the call that embeds the stored candidates it compares
(their index vectors carry sentence labels; memcli.core.near_duplicates)."""

from __future__ import annotations

import fakes
from helpers import ok

FIRST = "Amazon blocks our scraper's IP addresses after about 30 requests per second."
SECOND = "Amazon blocks the scraper's IP addresses after roughly 30 requests each second. We back off for a minute."


class CountingEmbedder(fakes.FakeEmbedder):
    def __init__(self):
        super().__init__()
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return super().embed(texts)


def test_mem_add_into_an_empty_store_asks_the_embedding_model_once(use_providers):
    embedder = CountingEmbedder()
    use_providers(embedder=lambda ref: embedder)
    ok("add", SECOND)
    assert len(embedder.calls) == 1


def test_mem_add_asks_the_model_twice_and_embeds_its_whole_text_once_near_duplicate_check_included(use_providers):
    embedder = CountingEmbedder()
    use_providers(embedder=lambda ref: embedder)
    ok("add", FIRST)
    embedder.calls.clear()
    written = ok("add", SECOND)
    assert len(embedder.calls) == 2  # the index's sentences; the whole text with the candidates it is compared to
    assert [text for call in embedder.calls for text in call].count(SECOND) == 1
    assert FIRST in embedder.calls[1]
    assert "similar" in written.stderr or "close" in written.stderr
