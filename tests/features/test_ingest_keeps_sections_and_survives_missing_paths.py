"""`mem ingest` with a typo in one path (the others still ingested, nothing pruned), chunks that name the
section they come from, and a command kept with the sentence that explains it."""

from __future__ import annotations

import json
import re

import pytest
from helpers import jsonl, memory_files, ok, run, store_root, write_tree

from memcli.features.ingest.chunk import sections, split

FENCE = re.compile(r"^ {0,3}```", re.MULTILINE)


def stored_chunks() -> dict[str, str]:
    """The raw text of every ingested chunk by its source."""
    return {m["source"]: m["raw"] for m in jsonl(ok("export").stdout)}


def small_chunks(size: int) -> None:
    ok("init")
    settings = store_root() / "mem.yaml"
    settings.write_text(settings.read_text().replace("ingest_chunk_chars: 1500", f"ingest_chunk_chars: {size}"))


def prose(topic: str, n: int) -> str:
    return " ".join(f"The {topic} step {i} takes about {i + 2} minutes on a laptop." for i in range(n))


# -- one missing path -------------------------------------------------------------------------------

def test_a_missing_path_is_reported_and_the_others_are_still_ingested(project):
    write_tree(project, {"docs/setup.md": "Install with pip.\n", "README.md": "The project readme.\n"})
    result = run("ingest", "docs/", "READMEE.md", "README.md", "--json")
    assert result.exit_code == 3
    assert "mem: no such file or folder: READMEE.md" in result.stderr
    assert set(stored_chunks()) == {"docs/setup.md#1", "README.md#1"}
    assert json.loads(result.stdout)["missing"] == ["READMEE.md"]


def test_when_every_path_is_missing_it_is_a_usage_error_and_nothing_is_stored(project):
    result = run("ingest", "nowhere", "nor/here.md")
    assert result.exit_code == 2
    assert "no such file or folder: nowhere" in result.stderr and "nor/here.md" in result.stderr
    assert memory_files() == []


def test_a_missing_path_never_prunes_the_chunks_stored_for_it(project):
    write_tree(project, {"docs/setup.md": "Install with pip.\n"})
    ok("ingest", "docs")
    (project / "docs/setup.md").unlink()
    (project / "docs").rmdir()
    write_tree(project, {"other.md": "Another note.\n"})
    assert run("ingest", "docs", "other.md", "--prune").exit_code == 3
    assert set(stored_chunks()) == {"docs/setup.md#1", "other.md#1"}


# -- the section a chunk comes from -----------------------------------------------------------------

GUIDE = ("# Install\n\n" + prose("download", 3) + "\n\n## Linux\n\n" + prose("apt", 30) + "\n\n## macOS\n\n"
         + prose("brew", 4) + "\n\n# Usage\n\n" + prose("usage", 25) + "\n")


def test_every_chunk_of_a_markdown_file_names_the_section_it_comes_from(project):
    write_tree(project, {"docs/guide.md": GUIDE})
    small_chunks(400)
    ok("ingest", "docs")
    chunks = stored_chunks()
    assert len(chunks) > 5
    for source, text in chunks.items():
        if "apt step" in text and "## Linux" not in text:
            assert text.startswith("Install > Linux\n"), (source, text[:60])
        if "usage step" in text and "# Usage" not in text:
            assert text.startswith("Usage\n"), (source, text[:60])
    assert chunks["docs/guide.md#1"].startswith("# Install\n")  # a chunk that opens its own section
    found = jsonl(ok("search", "Linux", "apt", "step", "29", "--jsonl", "--raw").stdout)
    assert found and found[0]["content"].startswith("Install > Linux\n")


def test_the_heading_path_follows_nesting_and_skips_headings_inside_code():
    doc = ("# A\n\n## B\n\n### C\n\n" + prose("deep", 20) + "\n\n```sh\n# not a heading\necho hi\n```\n\n"
           + prose("after", 20) + "\n\n## D\n\n" + prose("d", 20))
    found = sections(doc, 300)
    assert [chunk for _, chunk in found] == split(doc, 300)
    paths = {path for path, chunk in found if not chunk.startswith("#")}
    assert paths <= {("A", "B", "C"), ("A", "D")} and ("A", "B", "C") in paths and ("A", "D") in paths
    assert all(path == () for path, chunk in found if chunk.startswith("#"))  # it says where it is itself


def test_files_that_are_not_markdown_get_no_heading_path(project):
    script = "# set up the box\n" + "\n".join(f"echo step {i} of the set-up for the build machine" for i in range(40))
    write_tree(project, {"setup.sh": script + "\n"})
    small_chunks(300)
    ok("ingest", "setup.sh")
    assert all(not text.startswith("set up the box") for text in stored_chunks().values())


# -- a code block and the sentence that introduces it --------------------------------------------------

CODE = "```sh\n" + "\n".join(f"sudo apt-get install -y package-{i}" for i in range(8)) + "\n```"


@pytest.mark.parametrize("limit", range(300, 1200, 37))
def test_a_code_block_stays_with_the_sentence_that_introduces_it(limit):
    intro = "To install the build tools on Debian, run this as root:"
    doc = (prose("first", 6) + "\n\n" + prose("second", 4) + " " + intro + "\n\n" + CODE + "\n\n" + prose("third", 8))
    chunks = split(doc, limit)
    holding = [chunk for chunk in chunks if FENCE.search(chunk)]
    assert holding, chunks
    first = holding[0]
    assert intro in first and first.index(intro) < FENCE.search(first).start(), (limit, first[:120])
    assert "".join("".join(chunks).split()) == "".join(doc.split())


def test_a_code_block_longer_than_a_chunk_still_opens_with_its_introduction():
    intro = "Then paste the whole list into the terminal:"
    lines = (f"sudo apt-get install -y a-rather-long-package-name-{i}" for i in range(40))
    long_code = "```sh\n" + "\n".join(lines) + "\n```"
    doc = prose("before", 10) + " " + intro + "\n\n" + long_code + "\n\n" + prose("after", 5)
    chunks = split(doc, 600)
    assert all(len(chunk) <= 600 for chunk in chunks)
    opening = next(chunk for chunk in chunks if "```sh" in chunk)
    assert intro in opening and opening.index(intro) < opening.index("```sh")
