"""Tags after the fact: a duplicate `mem add` merges its tags, `mem tag ID +new -old`, `mem tags`."""

from __future__ import annotations

import json

from helpers import add, jsonl, load_file, memory_files, ok, run


def test_adding_a_stored_text_with_new_tags_merges_them_and_says_so():
    first = add("the scraper rotates proxies every hour", "-t", "scraper")
    again = ok("add", "The scraper rotates  proxies every hour", "-t", "infra,scraper")
    assert again.stdout.strip() == first
    assert "merged the new tags into it: infra" in again.stderr
    assert load_file(memory_files()[0])["tags"] == ["scraper", "infra"]
    assert len(memory_files()) == 1
    quiet = ok("add", "the scraper rotates proxies every hour", "-t", "infra", "--json")
    assert json.loads(quiet.stdout)["tags_added"] == [] and "already stored" in quiet.stderr


def test_tag_adds_and_removes_by_short_id():
    memory_id = add("billing moved to fly.io", "-t", "draft,billing")
    short = memory_id[-3:]
    changed = ok("tag", short, "+infra", "-draft")
    assert changed.stdout.split() == [short, "#billing", "#infra"]
    assert load_file(memory_files()[0])["tags"] == ["billing", "infra"]
    assert [m["tags"] for m in jsonl(ok("ls", "--jsonl").stdout)] == [["billing", "infra"]]
    assert ok("search", "billing", "-t", "infra", "--mode", "text").stdout
    record = json.loads(ok("tag", memory_id, "-billing", "--json").stdout)
    assert record == [{"id": memory_id, "tags": ["infra"], "added": [], "removed": ["billing"]}]
    assert run("tag", short, "+x", "-x").exit_code == 2
    assert run("tag", "+x").exit_code == 2
    assert run("tag", "ZZZZZZZZ", "+x").exit_code == 4


def test_tag_keeps_text_id_and_compressed_form(fakes):
    text = "We decided to keep the nightly deploy window at 02:00 UTC because traffic is lowest. " * 6
    memory_id = add(text)
    before = load_file(memory_files()[0])
    ok("tag", memory_id[:8], "+ops")
    after = load_file(memory_files()[0])
    assert after["compressed"] and after["tags"] == ["ops"] and after["raw"] == before["raw"] and after["compressed"] == before["compressed"]
    assert after["id"] == memory_id and after["created_at"] == before["created_at"]


def test_tags_lists_counts():
    add("one", "-t", "scraper,infra")
    add("two", "-t", "scraper")
    add("three")
    assert ok("tags").stdout.split() == ["2", "scraper", "1", "infra"]
    assert json.loads(ok("tags", "--json").stdout) == [{"tag": "scraper", "count": 2}, {"tag": "infra", "count": 1}]
    assert jsonl(ok("tags", "-t", "infra", "--jsonl").stdout) == [{"tag": "infra", "count": 1},
                                                                  {"tag": "scraper", "count": 1}]


def test_filtering_by_more_than_a_thousand_tags_answers_instead_of_crashing():
    both = add("the scraper rotates proxies every hour", "-t", "scraper,infra")
    add("billing moved to fly.io", "-t", "infra")
    many = [arg for n in range(1100) for arg in ("-t", f"t{n}")]
    for command in (["ls"], ["tags"]):
        assert ok(*command, *many).stdout == ""
    nothing = run("search", "scraper", "--mode", "text", *many)
    assert (nothing.exit_code, nothing.stdout, nothing.stderr) == (1, "", "")  # found nothing, as grep says
    assert [m["id"] for m in jsonl(ok("ls", "--jsonl", "-t", "infra", "-t", "scraper", "-t", "infra").stdout)] == [both]
