"""A project whose store a captured coding session filled, `mem ui` serving it, and a headless Chromium
(Debian's, driven by Playwright) to look at it."""

from __future__ import annotations

import os

import fakes
import pytest
from helpers import ok, open_mem
from ui_session import CHROMIUM, CHROMIUM_FLAGS, Running, capture, scripted_session


@pytest.fixture
def captured(project):
    """The project (cwd, MEM_DIR its .mem/) after one captured session."""
    ok("init")
    capture(scripted_session(project), open_mem())
    return project


@pytest.fixture
def serving():
    """`serving()`: `mem ui`'s server on the test's store (MEM_DIR) and providers, until the test ends."""
    started = []

    def start() -> Running:
        providers = fakes.current

        def open_store():
            from memcli.core.mem import Mem

            return Mem.open(providers=providers)

        started.append(Running(open_store).__enter__())
        return started[-1]

    yield start
    for running in started:
        running.__exit__(None, None, None)


@pytest.fixture
def served(captured, serving):
    return serving()


@pytest.fixture(scope="module")
def browser():
    """One Chromium per test module: Playwright's sync API holds an asyncio loop in this thread while it
    runs, so a browser kept for the whole session broke every later test that runs a loop (an MCP
    client's anyio.run) in whatever order tests ran."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: `make tools` installs Debian's chromium (as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, served):
    """A fresh browser context (no cookie yet) on the page, opened at the address `mem ui` prints."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.goto(served.url)
    yield opened
    context.close()
