"""Property-based tests (Hypothesis): no memory file, import line or search query, however made, may crash
a command or lose another memory. Examples are derandomised so CI runs the same ones every time."""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest
import yaml
from helpers import add, jsonl, ok, run, store_root
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcli.errors import InputError, InvalidMemory
from memcli.features.transfer import parse_record, to_memory
from memcli.store.memory import KEY_ORDER, Memory

FAST = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# Through the CLI, each example is a whole command: fewer of them.
CLI = settings(max_examples=25, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

VALID_ID = "01JDQ4R8ZK3M5N7P9Q1S3T5V7X"

# Text of every kind: control characters, lone surrogates, bidirectional overrides, YAML and FTS5 syntax.
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40) | st.sampled_from(
    ["", " ", "*", "&a", "*a", "<<", "- x", "{", "[", '"', "'", "\\ud800", "NEAR(", "a AND", "OR", "^", ":", "\x00",
     "\x1b[31m", "\u202e", "2020-02-30", "0001-01-01", "9999-12-31T23:59:59-12:00", "yes", "~", "nan", ".inf"])
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=10**20, max_value=10**40)
           | st.floats(allow_nan=True, allow_infinity=True) | TEXT | st.binary(max_size=8)
           | st.dates() | st.datetimes(timezones=st.none() | st.just(dt.timezone.utc))
           | st.frozensets(st.integers(), max_size=3))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(TEXT | st.integers() | st.booleans(), inner, max_size=3), max_leaves=12)
KEYS = st.sampled_from(list(KEY_ORDER)) | TEXT


@st.composite
def records(draw) -> dict:
    """A mapping like a memory file's: mostly a valid id and raw, any other fields with any values."""
    data = draw(st.dictionaries(KEYS, VALUES, max_size=6))
    if draw(st.booleans()):
        data["id"] = VALID_ID
    if draw(st.booleans()):
        data["raw"] = draw(TEXT.filter(str.strip) | st.just("a memory"))
    return data


def dump(data) -> str:
    """The YAML a person or a tool could have written for data (sets and binary with their tags)."""
    try:
        return yaml.dump(data, allow_unicode=True, sort_keys=False)
    except (yaml.YAMLError, UnicodeError, ValueError, TypeError):
        return json.dumps(data, default=str)


def must_be_usable(memory: Memory) -> None:
    """What every command does with a memory it read: JSON for the catalog, YAML for the file."""
    text = memory.to_json()
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text)
    again = Memory.from_yaml(memory.to_yaml(), "again")
    assert again.raw == memory.raw and again.id == memory.id


@FAST
@given(st.one_of(records().map(dump), TEXT, st.binary(max_size=200).map(lambda b: b.decode("utf-8", "replace"))))
def test_the_memory_file_reader_accepts_or_names_the_problem(text):
    try:
        memory = Memory.from_yaml(text, "memories/x.yaml")
    except InvalidMemory as exc:
        assert str(exc).startswith("memories/x.yaml: ")
        return
    must_be_usable(memory)


@FAST
@given(st.dictionaries(KEYS, VALUES, max_size=6).map(lambda d: json.dumps(d, default=str))
       | st.binary(max_size=100).map(lambda b: b.decode("utf-8", "surrogateescape")) | TEXT)
def test_the_import_line_reader_accepts_or_names_the_line(text):
    try:
        memory = to_memory(parse_record(text, 7), 7, 1 << 20)
    except (InvalidMemory, InputError) as exc:
        assert str(exc).startswith("line 7: ")
        return
    must_be_usable(memory)


@CLI
@given(records().map(dump))
def test_no_memory_file_crashes_a_command_or_hides_another(text):
    good = store_root() / "memories" / "2026" / "11" / "01JDQ4R8ZK3M5N7P9Q1S3T5V7Y.yaml"
    if not good.exists():
        ok("init")
        good.parent.mkdir(parents=True, exist_ok=True)
        good.write_text("id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7Y\nraw: the good memory\n")
    (good.parent / f"{VALID_ID}.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
    listed = run("ls", "--jsonl")
    assert listed.exit_code == 0, listed.stderr
    assert "01JDQ4R8ZK3M5N7P9Q1S3T5V7Y" in {row["id"] for row in jsonl(listed.stdout)}
    assert run("search", "good memory", "--mode", "text").exit_code == 0


@CLI
@given(st.lists(st.dictionaries(KEYS, VALUES, max_size=5).map(lambda d: json.dumps(d, default=str).encode())
                | st.binary(max_size=60), min_size=1, max_size=4))
def test_no_import_line_crashes_the_import_or_stops_the_others(lines):
    marker = f"good line {len(lines)} {sum(map(len, lines))}"
    payload = b"\n".join([*lines, json.dumps({"raw": marker}).encode()]) + b"\n"
    result = run("import", "-", "--json", input=payload)
    summary = json.loads(result.stdout)
    assert result.exit_code == (3 if summary["invalid"] else 7 if summary["refused"] else 0), result.stderr
    exported = [row["raw"] for row in jsonl(ok("export").stdout)]
    assert marker in exported


@pytest.fixture
def searchable():
    return [add("the kiwi harvest starts in May"), add("deploys run from the release branch")]


@CLI
@given(TEXT | st.text(max_size=300))
def test_no_query_crashes_search_or_changes_the_store(searchable, query):
    before = sorted(row["id"] for row in jsonl(ok("ls", "--jsonl").stdout))
    for mode in ("hybrid", "text"):
        result = run("search", query, "--mode", mode, "--jsonl")
        assert result.exit_code == (2 if not query.strip() else 0 if result.stdout else 1), result.stderr
        if result.exit_code == 0:
            assert all(math.isfinite(row["score"]) for row in jsonl(result.stdout))
    assert sorted(row["id"] for row in jsonl(ok("ls", "--jsonl").stdout)) == before == sorted(searchable)
