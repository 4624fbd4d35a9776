"""Protected spans: what compression must never drop from a memory."""

from __future__ import annotations

import pytest

from memcli.compress.spans import find_spans


def texts(text: str) -> list[str]:
    return [span.text for span in find_spans(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The invoice came to $1,200 last month.", ["$1,200", "last month"]),
        ("We handle 30 req/s at most.", ["30 req/s"]),
        ("The trail is 5 km long.", ["5 km"]),
        ("Back off from 250 ms, capping at 8 s.", ["250 ms", "8 s"]),
        ("Upgrade to Python 3.11 first.", ["Python", "3.11"]),
        ("Tag the build as v2.4.0-rc1 today.", ["v2.4.0-rc1", "today"]),
        ("Conversion went up by 40% after the change.", ["40%"]),
        ("It leaks roughly 40 MB per hour.", ["roughly 40 MB per hour"]),
        ("The table grows by 1.5 million rows a month.", ["1.5 million rows a month"]),
        ("Released on 2026-11-29 after review.", ["2026-11-29"]),
        ("We shipped on March 3rd and again on 7 May 2023.", ["March 3rd", "7 May 2023"]),
        ("Standup is at 3pm, the deploy at 14:30 UTC.", ["3pm", "14:30 UTC"]),
        ("They met on May 25, 2023 at 1:14 pm.", ["May 25, 2023", "1:14 pm"]),
        ("The release train leaves every Friday in October.", ["Friday", "October"]),
        ("She moved there two weeks ago.", ["two weeks ago"]),
        ("Owned by Tomasz, due in Q2.", ["Tomasz", "Q2"]),
        ("Call os.path.join from utils.py.", ["os.path.join", "utils.py"]),
        ("The cookie domain moved from .shop.example.de, and .env files stay out.", [".shop.example.de", ".env"]),
        ("Back from the bank's 3-D Secure page within a 24-hour window.", ["3-D", "24-hour"]),
        ("The bug is in read_supplier_file() of importers/csv_reader.py.",
         ["read_supplier_file()", "importers/csv_reader.py"]),
        ("Set BILLING_DATABASE_URL and retry.", ["BILLING_DATABASE_URL"]),
        ("Rename getUserName to fetchUser.", ["getUserName", "fetchUser"]),
        ("The runbook is at https://wiki.example.com/billing/split-db.", ["https://wiki.example.com/billing/split-db"]),
        ("Mail ops@example.org about it.", ["ops@example.org"]),
        ("Fixed in commit 4f9c2ab yesterday.", ["4f9c2ab", "yesterday"]),
        ("Skip hooks with --no-verify only when asked.", ["--no-verify"]),
        ("Decoding failed for Windows-1250 but not UTF-8.", ["Windows-1250", "not", "UTF-8"]),
        ("We use C++ and C# there.", ["C++", "C#"]),
        ("See PR #4821 for the details.", ["PR", "#4821"]),
        ("She said \"ship it on Monday\" and left.", ['"ship it on Monday"']),
        ("Zoë and José flew from Łódź to see Müller.", ["Zoë", "José", "Łódź", "Müller"]),
        ("It is not ready, we don't ship without tests and never on Sundays.",
         ["not", "don't", "without", "never", "Sundays"]),
        ("There is no cache and nothing to warm.", ["no", "nothing"]),
        ("Der Export läuft nicht mehr nachts, ohne Ausnahme.", ["nicht", "ohne"]),
        ("On ne déploie jamais le vendredi, sans tests.", ["jamais", "sans"]),
        ("Recall was 0.27-0.30 against 0.46, and 2-3 tokens a query.", ["Recall", "0.27-0.30", "0.46", "2-3 tokens"]),
        ("Support 3.9-3.12 and upgrade from v1.2-v1.4 at 40-60 MB.", ["3.9-3.12", "v1.2-v1.4", "40-60 MB"]),
        ("Embed with all-MiniLM-L6-v2 or bge-small-en-v1.5 today.", ["all-MiniLM-L6-v2", "bge-small-en-v1.5", "today"]),
        ("Run pytest -k fast --ignore=tests/slow first.", ["-k", "--ignore=tests/slow"]),
    ],
)
def test_protected_spans_are_found(text, expected):
    found = texts(text)
    for span in expected:
        assert span in found, f"{span!r} not protected in {text!r}: {found}"


def test_url_does_not_swallow_the_sentence_period():
    assert "https://example.com/a_b?x=1" in texts("Read https://example.com/a_b?x=1.")


def test_sentence_initial_common_words_are_not_names():
    found = texts("The cache stays warm. However, the team decided. Discussed the cache. Meanwhile it rained.")
    assert not {"The", "However", "Discussed", "Meanwhile"} & set(found)


def test_sentence_initial_names_stay_names():
    found = texts("Caroline met Melanie. Priya argued for a split. Zoë agreed.")
    assert {"Caroline", "Melanie", "Priya", "Zoë"} <= set(found)


def test_a_capitalised_word_mid_sentence_is_a_name_even_if_it_starts_another():
    found = texts("Redis is fast. We moved the queue to Redis.")
    assert found.count("Redis") == 2


def test_pronoun_i_and_lowercase_modal_may_are_not_protected():
    found = texts("I think we may need more time on it.")
    assert "I" not in found and "may" not in found


def test_spans_are_sorted_and_disjoint():
    spans = find_spans("On 2026-03-14 Priya moved 1.5 million rows to billing_db at 3pm, not later.")
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
