"""The memories page answers the CLI's questions the CLI's way: newest first a page at a time, the filters
of `mem ls` plus the kind compression found and who wrote a memory, and a typing mistake said on the page."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from helpers import ok

from memcli.ui.memory_views import PAGE


def records(count: int, **fields) -> str:
    """Import lines, one a day from 2026-01-01 on (the last is the newest)."""
    lines = []
    for n in range(count):
        day = f"2026-{1 + n // 28:02d}-{1 + n % 28:02d}T09:00:00Z"
        lines.append(json.dumps({"raw": f"deploy note number {n} about the billing service", "created_at": day,
                                 **fields}))
    return "\n".join(lines) + "\n"


@pytest.fixture
def client(project, serving):
    ok("init")
    served = serving()
    with httpx.Client(base_url=served.base, timeout=30) as signed_in:
        assert signed_in.get(served.url).status_code == 303
        yield signed_in


def ids_on(page: str) -> list[str]:
    return re.findall(r'<li class="memory card" data-id="([0-9A-Z]+)"', page)


def listed(*args) -> list[str]:
    return [row["id"] for row in map(json.loads, ok("ls", "--jsonl", *args).stdout.splitlines())]


def test_newest_first_a_page_at_a_time_as_mem_ls_lists_them(client):
    ok("import", "--no-compress", input=records(PAGE + 7))
    first = client.get("/").text
    assert ids_on(first) == listed("-n", PAGE)
    older = re.search(r'<a href="(/\?offset=\d+)" rel="next">', first).group(1)
    assert ids_on(client.get(older).text) == listed()[PAGE:]


def test_each_filter_narrows_as_the_cli_s_filters_do(client):
    ok("import", "--no-compress", input=records(6, tags=["ops"], written_by="claude-code", source="session/s1#1"))
    ok("import", "--no-compress", input=records(4, written_by="cli").replace("deploy note", "billing memo"))
    assert ids_on(client.get("/", params={"tag": "ops"}).text) == listed("-t", "ops")
    assert ids_on(client.get("/", params={"source": "session/s1"}).text) == listed("--source", "session/s1")
    assert ids_on(client.get("/", params={"written_by": "claude-code"}).text) == listed("-t", "ops")
    assert len(ids_on(client.get("/", params={"written_by": "cli"}).text)) == 4
    assert ids_on(client.get("/", params={"since": "2026-01-04", "until": "2026-01-05"}).text) == listed(
        "--since", "2026-01-04", "--until", "2026-01-05")
    assert ids_on(client.get("/", params={"written_by": "nobody"}).text) == []


def test_the_kind_filter_finds_the_memories_compression_found_of_that_kind(client):
    log = {"status": "skipped", "kind": "log", "reason": "not smaller"}
    ok("import", "--no-compress", input=records(3, compression=log).replace("deploy note", "2026-01-01 ERROR"))
    ok("import", "--no-compress", input=records(2, compression={**log, "kind": "diff"}))
    page = client.get("/", params={"kind": "log"}).text
    assert len(ids_on(page)) == 3 and "2026-01-01 ERROR" in page and "deploy note" not in page
    assert len(ids_on(client.get("/", params={"kind": "diff"}).text)) == 2


def test_a_date_that_does_not_parse_is_said_on_the_page(client):
    answer = client.get("/", params={"since": "the day after never"})
    assert answer.status_code == 400
    assert 'role="alert"' in answer.text and "the day after never" in answer.text


def test_a_search_gives_mem_search_s_results_and_more_on_request(client):
    ok("import", "--no-compress", input=records(30))
    first = client.get("/", params={"q": "billing deploy note"}).text
    assert ids_on(first) == [hit["id"] for hit in json.loads(ok("search", "billing", "deploy", "note", "--json").stdout)]
    more = re.search(r'<a href="(/\?[^"]+)" rel="next">more results</a>', first).group(1).replace("&amp;", "&")
    assert ids_on(client.get(more).text) == [hit["id"] for hit in json.loads(
        ok("search", "billing", "deploy", "note", "-n", 20, "--json").stdout)]


def test_a_memory_that_is_not_there_is_a_page_that_says_so(client):
    answer = client.get("/memory/01ZZZZZZZZ")
    assert answer.status_code == 404 and "no memory with id" in answer.text
