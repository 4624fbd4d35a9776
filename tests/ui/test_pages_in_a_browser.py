"""`mem ui` in a real browser (Debian's headless Chromium, driven by Playwright) on a store a captured coding
session filled: the pages load, search finds what `mem search` finds in the same order, a delete removes
the memory, tags are edited, and the digest shown is what the next SessionStart hook hands the assistant."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from helpers import jsonl, ok, run
from ui_session import HOSTILE_OUTPUT, hook_payload


def follow(page, selector: str) -> None:
    """Click what leads to another page, and wait until that page has loaded."""
    with page.expect_navigation():
        page.click(selector)


def observation_ids() -> list[str]:
    return [row["id"] for row in jsonl(ok("ls", "--jsonl", "-t", "observation").stdout)]


def test_every_page_loads_with_what_the_session_left(page):
    assert page.locator("li.memory").count() == len(jsonl(ok("ls", "--jsonl").stdout)) > 3
    follow(page, "nav >> text=Sessions")
    session = page.locator("article.session")
    assert session.count() == 1
    assert "Fix the leap-year bug in the date parser" in session.inner_text()
    assert session.locator("div.observation").count() == len(observation_ids())
    assert "routine tool" in page.locator("table").first.inner_text()
    follow(page, "nav >> text=Store")
    assert page.locator("#savings-chart rect").count() >= 2
    assert page.locator("#doctor tr").count() > 3
    follow(page, "nav >> text=Memories")
    compressed = next(row["id"] for row in jsonl(ok("ls", "--jsonl", "-t", "observation").stdout) if row.get("optimized"))
    follow(page, f"li.memory[data-id='{compressed}'] a.id")
    assert page.locator("pre.raw").is_visible() and page.locator("pre.compressed").is_visible()
    assert page.locator("pre.raw del").count() > 0  # the words compression dropped, struck out
    assert page.locator(".verdict .badge").inner_text() in ("passes", "rejects")


def test_a_search_finds_what_mem_search_finds_in_the_same_order(page):
    page.fill("input[name=q]", "leap year tests")
    with page.expect_navigation():
        page.press("input[name=q]", "Enter")
    shown = page.locator("li.memory").evaluate_all("items => items.map(item => item.dataset.id)")
    found = [hit["id"] for hit in json.loads(ok("search", "leap", "year", "tests", "--json").stdout)]
    assert shown == found and found


def test_a_delete_removes_the_memory_and_its_file(page):
    memory_id = observation_ids()[0]
    follow(page, f'li.memory[data-id="{memory_id}"] a.id')
    page.click("details summary")
    follow(page, "button.danger")
    assert "deleted=" in page.url
    assert "Deleted" in page.locator("p.note").inner_text()
    assert page.locator(f'li.memory[data-id="{memory_id}"]').count() == 0
    assert run("show", memory_id).exit_code == 4


def test_a_noisy_observation_is_deleted_from_its_session(page):
    memory_id = observation_ids()[-1]
    follow(page, "nav >> text=Sessions")
    follow(page, f'div.observation[data-id="{memory_id}"] button')
    assert "/sessions?deleted=" in page.url
    assert page.locator(f'div.observation[data-id="{memory_id}"]').count() == 0
    assert memory_id not in observation_ids()


def test_tags_edited_on_the_page_are_the_memory_s_tags(page, served):
    memory_id = observation_ids()[0]
    page.goto(f"{served.base}/memory/{memory_id}")
    page.fill("input[name=tags]", "observation, bash flaky")
    follow(page, "text=Save tags")
    assert json.loads(ok("show", memory_id, "--json").stdout)["tags"] == ["observation", "bash", "flaky"]
    assert page.locator("input[name=tags]").input_value() == "observation bash flaky"


def test_the_digest_shown_is_what_the_next_session_start_is_handed(page, captured):
    follow(page, "nav >> text=Sessions")
    shown = page.locator("#digest").text_content()
    hook = subprocess.run([sys.executable, "-m", "memcli", "hook", "SessionStart"], capture_output=True, text=True,
                          input=json.dumps(hook_payload("SessionStart", captured, "next-session", source="startup")),
                          env=dict(os.environ), timeout=60, check=True)
    handed = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert shown == handed and "leap-year" in handed
    assert page.locator("#digest-tokens").inner_text() == str(len(handed.split()))  # the fakes count words


def test_captured_markup_is_shown_as_text_and_never_runs(page, served):
    failed = next(row["id"] for row in jsonl(ok("ls", "--jsonl", "-t", "observation").stdout) if "FAILED" in row["content"])
    for route in ["/", "/sessions", "/?q=window+pwned", f"/memory/{failed}"]:
        page.goto(served.base + route)
        assert page.evaluate("window.__pwned") is None
    assert HOSTILE_OUTPUT.splitlines()[1] in page.locator("pre.raw").text_content()
