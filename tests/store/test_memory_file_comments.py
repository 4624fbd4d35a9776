"""Comments a person writes in a memory file (plain YAML, kept in git) survive every rewrite mem makes:
`mem tag`, a new source or version link, compression, `mem edit`."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import yaml
from helpers import add, memory_files, ok, short_id

from memcli.store.comments import comments_of, with_comments
from memcli.store.memory import Memory

LONG = ("The billing service moved from Heroku to a single Hetzner box in March 2026 because the dyno bill "
        "tripled; Dana owns the migration and the rollback plan lives in docs/billing.md.")


def hand_edit(path: Path) -> str:
    """The file as a teammate leaves it: a comment above a key, one after a value, one at the end."""
    text = path.read_text()
    text = "# reviewed by Dana, 2026-12-01\n" + text
    text = text.replace("\ntags: [", "\n# tags the billing team filters on\ntags: [", 1)
    text = text.replace("written_by: cli\n", "written_by: cli  # typed at the standup\n", 1)
    text += "# TODO: link the incident report once it is public\n"
    path.write_text(text)
    return text


COMMENTS = ("# reviewed by Dana, 2026-12-01", "# tags the billing team filters on", "# typed at the standup",
            "# TODO: link the incident report once it is public")


def test_mem_tag_keeps_every_comment_of_a_hand_edited_file():
    memory_id = add("## Billing\n\nWe bill on the 1st. # not a comment, part of the text", "-t", "billing")
    path = memory_files()[0]
    hand_edit(path)
    ok("tag", memory_id, "+finance")
    text = path.read_text()
    for comment in COMMENTS:
        assert text.count(comment) == 1, (comment, text)
    data = yaml.safe_load(text)
    assert data["tags"] == ["billing", "finance"]
    assert data["raw"] == "## Billing\n\nWe bill on the 1st. # not a comment, part of the text"
    assert text.index("# tags the billing team filters on") < text.index("tags: [")
    assert "written_by: cli  # typed at the standup" in text


def test_compression_rewriting_the_file_keeps_its_comments():
    memory_id = add(LONG, "--no-compress")
    path = memory_files()[0]
    hand_edit(path)
    ok("compress", memory_id)
    text = path.read_text()
    assert yaml.safe_load(text)["compressed"]
    assert all(comment in text for comment in COMMENTS)


def test_mem_edit_shows_the_comments_and_saves_the_ones_written_in_the_editor(tmp_path):
    memory_id = add(LONG)
    path = memory_files()[0]
    hand_edit(path)
    seen = tmp_path / "seen.yaml"
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib, shutil\np = pathlib.Path(sys.argv[1])\n"
                      f"shutil.copy(p, {str(seen)!r})\n"
                      "p.write_text(p.read_text().replace('source:', '# where it came from\\nsource:')"
                      ".replace('written_by:', '# asked by Lee\\nwritten_by:'))\n")
    result = ok("edit", memory_id, env={"EDITOR": f"{sys.executable} {editor}"})
    assert all(comment in seen.read_text() for comment in COMMENTS), "the editor shows the comments"
    assert f"saved {short_id(memory_id)}" in result.stderr, "a change of comments alone is a change"
    text = path.read_text()
    assert "# asked by Lee" in text and all(comment in text for comment in COMMENTS)


def test_a_secret_typed_in_a_comment_in_the_editor_is_redacted_like_any_field(tmp_path):
    memory_id = add(LONG)
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                      "p.write_text('# deploy key AKIAIOSFODNN7EXAMPLE\\n' + p.read_text())\n")
    result = ok("edit", memory_id, env={"EDITOR": f"{sys.executable} {editor}"})
    text = memory_files()[0].read_text()
    assert "AKIA" not in text and "# deploy key [REDACTED:" in text and "redacted" in result.stderr


def test_mem_edit_saved_as_shown_changes_nothing_in_a_commented_file(tmp_path):
    memory_id = add(LONG)
    path = memory_files()[0]
    path.write_text(path.read_text().replace("tags: []", "tags:\n  - billing  # moved above tags when shown"))
    before = path.read_bytes()
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\np.write_text(p.read_text())\n")
    result = ok("edit", memory_id, env={"EDITOR": f"{sys.executable} {editor}"})
    assert "no change" in result.stderr and path.read_bytes() == before


def test_a_comment_inside_a_value_mem_rewrites_is_kept_just_above_its_key():
    memory_id = add(LONG, "--no-compress")
    path = memory_files()[0]
    text = path.read_text().replace("tags: []", "tags:\n  # the first tag is the team\n  - billing\n  - ops  # for now")
    path.write_text(text)
    ok("tag", memory_id, "+finance")
    after = path.read_text()
    assert yaml.safe_load(after)["tags"] == ["billing", "ops", "finance"]
    assert "# the first tag is the team" in after and "# for now" in after
    assert after.index("# the first tag is the team") < after.index("tags:")


def test_comments_put_back_never_change_what_the_file_says():
    fresh = ("id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7X\ncreated_at: '2026-11-29T23:40:00Z'\n"
             "compressed: 'a\n\n  b'\nraw: |-\n  text # inside\n  more\n")
    old = ("# top\nid: 01JDQ4R8ZK3M5N7P9Q1S3T5V7X # the id\ncreated_at: '2026-11-29T23:40:00Z'\n"
           "compressed: 'x'  # short form\nraw: |-  # the prose\n  text\n# end\n")
    merged = with_comments(fresh, comments_of(old))
    assert yaml.safe_load(merged) == yaml.safe_load(fresh)
    for comment in ("# top", "# the id", "# short form", "# the prose", "# end"):
        assert comment in merged
    assert comments_of(fresh) == []


def says_the_same(lines: list[str], others: list[str]) -> bool:
    """Whether a comment put in by the test left the file meaning what it did (one inside a block scalar
    is text, not a comment, and one may break the YAML)."""
    try:
        return yaml.safe_load("\n".join(lines)) == yaml.safe_load("\n".join(others))
    except yaml.YAMLError:
        return False


@pytest.mark.parametrize("seed", range(40))
def test_any_comment_anywhere_in_any_file_comes_back_and_the_data_stays(seed):
    """Random memories (texts with `#`, quotes, line breaks) annotated at random line ends and between
    lines, then rewritten with other tags: every comment is in the new file, which says what mem wrote."""
    rng = random.Random(seed)
    pieces = ["# heading", "a # b", "'quoted'", '"double"', "x: y", "- item", "  indented", "tail  ", "#", "ok"]
    raw = "\n".join(" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 6)))
    memory = Memory(id="01JDQ4R8ZK3M5N7P9Q1S3T5V7X", created_at="2026-11-29T23:40:00Z",
                    updated_at="2026-11-29T23:40:00Z", raw=raw.strip() or "text", tags=["a"], source="notes/x.md",
                    compressed=rng.choice([None, "short # form", "two\n\nlines"]),
                    compression={"method": "prune", "status": "done"}, extra={"reviewed": rng.choice([True, [1, 2]])})
    lines = memory.to_yaml().splitlines()
    notes = []
    for n in sorted(rng.sample(range(len(lines) + 1), k=min(4, len(lines) + 1)), reverse=True):
        note = f"# note {n} {rng.choice(pieces)}"
        candidate = lines[:n] + [note] + lines[n:]
        if says_the_same(candidate, lines):
            lines, notes = candidate, notes + [note]
    for n in rng.sample(range(len(lines)), k=min(3, len(lines))):
        candidate = lines[:n] + [lines[n] + f"  # end {n}"] + lines[n + 1:]
        if says_the_same(candidate, lines):
            lines, notes = candidate, notes + [f"# end {n}"]
    annotated = "\n".join(lines) + "\n"
    memory.tags = ["a", "b"]
    fresh = memory.to_yaml()
    merged = with_comments(fresh, comments_of(annotated))
    assert yaml.safe_load(merged) == yaml.safe_load(fresh)
    for note in notes:
        assert note in merged, (note, annotated, merged)
