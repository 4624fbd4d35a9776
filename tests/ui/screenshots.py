"""The screenshots of `mem ui` in docs/: a scratch project whose store a scripted coding session filled
through the real capture path, on the real default models, served and photographed in Debian's headless
Chromium.

    .venv/bin/python tests/ui/screenshots.py [OUT_DIR]     (default: docs/)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))

PAGES = {"ui-memories.png": "/", "ui-memory.png": None, "ui-sessions.png": "/sessions", "ui-store.png": "/store"}
NOTES = [
    ("We moved billing from Heroku to Fly.io in March because the dynos kept sleeping and the bill doubled.", "infra"),
    ("Staging Postgres listens on port 5433, not 5432: the old container still holds 5432.", "infra"),
    ("Priya rejected the proposal to shard the users table and asked for a read replica instead.", "decision"),
]


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else HERE.parent.parent / "docs").resolve()
    project = Path(tempfile.mkdtemp(prefix="mem-ui-shots-")) / "dateparse"
    project.mkdir()
    os.environ.update(MEM_DIR=str(project / ".mem"), MEM_CAPTURE_DRAIN="0")
    os.chdir(project)

    from ui_session import CHROMIUM, CHROMIUM_FLAGS, Running, capture, scripted_session

    from memcli.core.mem import Mem
    from memcli.core.writing import Text, write

    mem = Mem.open()
    mem.ensure_store()
    for text, tag in NOTES:
        write(mem, Text(text, [tag]))
    capture(scripted_session(project), mem)
    mem.catalog.close()
    from playwright.sync_api import sync_playwright

    with Running(Mem.open) as served, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1000, "height": 720})
        page.goto(served.url)
        for name, path in PAGES.items():
            if path is None:  # the session's summary: pruned prose, its dropped words marked
                page.goto(served.base + "/?tag=session")
                path = page.locator("li.memory a.id").first.get_attribute("href")
            page.goto(served.base + path)
            page.screenshot(path=str(out / name), clip={"x": 0, "y": 0, "width": 1000, "height": 720})
            print(out / name)
        browser.close()


if __name__ == "__main__":
    main()
