"""Mapping model tokens back to the characters of the text they score."""

from __future__ import annotations

from memcli.providers.llama import _char_spans


def test_byte_level_tokens_split_inside_a_character_both_map_to_it():
    text = "Zoë in Łódź"
    pieces = [b"Zo", "ë".encode()[:1], "ë".encode()[1:], b" in", b" \xc5", "Łódź".encode()[1:]]
    spans = _char_spans(text, pieces)
    assert [text[s:e] for s, e in spans] == ["Zo", "ë", "ë", " in", " Ł", "Łódź"]


def test_sentencepiece_leading_spaces_do_not_shift_the_tokens_that_follow():
    text = "Hello world."
    spans = _char_spans(text, [b" Hello", b" world", b"."])
    assert [text[s:e] for s, e in spans] == ["Hello", " world", "."]


def test_a_token_that_is_not_in_the_text_gets_an_empty_range():
    text = "cache warm"
    spans = _char_spans(text, [b"cache", b"<unk>", b" warm"])
    assert [text[s:e] for s, e in spans] == ["cache", "", " warm"]
