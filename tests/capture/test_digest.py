"""What a new session of a project is handed: the rulings, the open items, the commands that work and each
session's outcome, from every earlier session of the same project and no other; quoted, never speaking."""

from __future__ import annotations

import json

from helpers import ok, open_mem
from payloads import claude, claude_bash, claude_edit
from work_helpers import drain

from memcli.capture.hook import run


def session(cwd, sid: str, prompts=(), runs=(), edits=(), answer: str | None = None) -> None:
    """One session's events through the hook: its prompts, shell runs ((command, output, failed)), edits
    ((path, old, new)) and the assistant's last answer."""
    events = [claude("SessionStart", cwd, sid, source="startup")]
    events += [claude("UserPromptSubmit", cwd, sid, prompt=prompt) for prompt in prompts]
    for n, (command, output, failed) in enumerate(runs):
        if failed:
            events.append(claude("PostToolUseFailure", cwd, sid, tool_name="Bash", tool_use_id=f"{sid}-b{n}",
                                 tool_input={"command": command}, error=f"Exit code 1\n{output}"))
        else:
            events.append(claude_bash(cwd, command, output, f"{sid}-b{n}", sid))
    events += [claude_edit(cwd, path, old, new, f"{sid}-e{n}", sid) for n, (path, old, new) in enumerate(edits)]
    if answer is not None:
        events.append(claude("Stop", cwd, sid, last_assistant_message=answer))
    for event in events:
        run(json.dumps(event))


def digest(cwd) -> str:
    drain(open_mem())
    answer = run(json.dumps(claude("SessionStart", cwd, "next", source="startup")))
    return json.loads(answer)["hookSpecificOutput"]["additionalContext"] if answer else ""


def summaries() -> list[dict]:
    return [json.loads(line) for line in ok("ls", "--tag", "session", "--jsonl", "--with-raw").stdout.splitlines()]


def test_sessions_with_no_work_never_take_room(project):
    session(project, "listing")  # `claude mcp list`: started, nothing else
    session(project, "aborted", prompts=["say hi"])  # `claude -p` that stopped at "Not logged in"
    session(project, "real", prompts=["Make the parser accept empty input."], runs=[("pytest -q", "3 passed", False)],
            answer="The parser accepts empty input now.")
    context = digest(project)
    assert "Make the parser accept empty input." in context
    assert context.count("- Session") == 1 and "say hi" not in context


def test_another_projects_sessions_never_reach_its_digest(tmp_path, monkeypatch):
    monkeypatch.setenv("MEM_DIR", str(tmp_path / "user-store"))  # `--user` hooks: one store for every folder
    ok("init")
    shop, blog, elsewhere = (tmp_path / name for name in ("shop", "blog", "elsewhere"))
    for folder in (shop, blog, elsewhere):
        (folder / "src").mkdir(parents=True)
    (shop / ".git").mkdir()
    (blog / ".git").mkdir()
    session(shop / "src", "s1", prompts=["Add a checkout page to the shop."], runs=[("make test", "ok", False)],
            answer="The checkout page is added.")
    session(blog, "b1", prompts=["Fix the RSS feed of the blog."], runs=[("make html", "ok", False)],
            answer="The RSS feed is fixed.")
    assert "checkout page" in digest(shop) and "RSS" not in digest(shop)  # from the work tree's root too
    assert "RSS feed" in digest(blog) and "checkout" not in digest(blog)
    assert digest(elsewhere) == ""  # a folder with no session of its own gets nothing


def test_a_ruling_of_the_first_session_is_still_there_after_ten_later_sessions(project):
    session(project, "s0", prompts=["Fix the date parser. Don't touch the public API."],
            runs=[("pytest -q", "1 passed", False)], answer="Fixed.")
    for n in range(1, 11):
        session(project, f"s{n}", prompts=[f"Rename helper number {n} for clarity."],
                runs=[(f"pytest -q tests/test_{n}.py", "1 passed", False)],
                edits=[(f"src/mod_{n}.py", f"def helper_{n}():\n", f"def clear_helper_{n}():\n")],
                answer=f"Renamed helper_{n} in src/mod_{n}.py.")
    context = digest(project)
    assert "- Ruling: “Don't touch the public API.”" in context


def test_a_ruling_replaced_later_is_shown_in_its_new_form_only(project):
    session(project, "s1", prompts=["Format the code. We format with black, not yapf."], answer="Formatted.")
    session(project, "s2", prompts=["From now on we format with ruff format, not black."], answer="Switched.")
    context = digest(project)
    assert "- Ruling: “From now on we format with ruff format, not black.”" in context
    assert "We format with black, not yapf." not in context


def test_not_done_survives_into_the_summary_and_the_digest(project):
    answer = ("I decided not to make the prefix optional, since callers rely on it.\n"
              "Not done: mention fortnight in the README's --since list.\nShould I add it?")
    session(project, "s1", prompts=["Add fortnight to --since."], edits=[("src/since.py", "UNITS = 1\n", "UNITS = 2\n")],
            answer=answer)
    context = digest(project)
    [summary] = summaries()
    assert "Not done: mention fortnight in the README's --since list." in summary["content"]
    assert "I decided not to make the prefix optional, since callers rely on it." in summary["content"]
    assert "content_raw" not in summary and "optimized" not in summary, "a summary is stored as written, never pruned"
    assert "- Left open: “Not done: mention fortnight in the README's --since list.”" in context
    assert "- Left open: “Should I add it?”" in context


def test_a_command_that_failed_then_passed_reads_as_passing_last_with_what_fixed_it(project):
    session(project, "s1", prompts=["Run the tests."],
            runs=[("python -m pytest -q tests", "E   ModuleNotFoundError: No module named 'shop'\n1 error", True),
                  ("pip install -e .", "Successfully installed shop-0.1", False),
                  ("python -m pytest -q tests", "12 passed", False),
                  ("ruff check src", "/bin/sh: 1: ruff: not found", True)],
            answer="The tests pass now.")
    context = digest(project)
    assert "- Last run passed: “python -m pytest -q tests”" in context
    assert ("- Setup that fixed the environment: “pip install -e .” (after “ModuleNotFoundError: No module named 'shop'”)"
            in context)
    assert "- Not installed: “ruff: not found”." in context
    assert ("“python -m pytest -q tests” failed: “ModuleNotFoundError: No module named 'shop'”, then passed after "
            "“pip install -e .”") in context


def test_each_session_tells_what_was_asked_changed_and_renamed(project):
    session(project, "s1", prompts=["Rename the parser entry point. Keep it short."],
            edits=[("src/parse.py", "def parse_all(text):\n    return text\n", "def parse(text):\n    return text\n")],
            answer="parse_all is now parse; the callers use the new name.")
    context = digest(project)
    line = next(line for line in context.splitlines() if line.startswith("- Session"))
    assert "asked “Rename the parser entry point.”" in line
    assert "changed “src/parse.py”" in line and "renamed “parse_all” to “parse”" in line
