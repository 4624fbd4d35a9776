"""`mem import --from CLIENT`: the sessions a client kept on disk become what its hooks would have made
of them (the same observations, threads and summaries), once, whatever is run again; a bad line costs
that line only."""

from __future__ import annotations

import json
import time
import types
from pathlib import Path

import pytest
from calc_session import CLIENT_HOMES
from captured import stored_memories
from fake_secrets import github_token
from helpers import jsonl, ok, open_mem, run
from work_helpers import drain

from memcli.capture import hook

TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"
# Each client's fixture: the folder its session ran in (replaced by the test's project) and where the
# client keeps such a file, from its home folder (the environment variable that moves that home).
CLAUDE = ("claude-code", "claude_code_session.jsonl", "/home/USER/projects/spotter-worktrees/spotter-dov")
GEMINI = ("gemini", "gemini_session.json", None)
# Sessions recorded from the real clients with their hooks' payloads (record_session.py).
CLAUDE_RECORDED = ("claude-code", "claude_code_recorded.jsonl", "/home/dev/calc")
CODEX = ("codex", "codex_recorded.jsonl", "/home/dev/calc")
GEMINI_RECORDED = ("gemini", "gemini_recorded.jsonl", "/home/dev/calc")


def new_project(tmp_path, monkeypatch, where: str) -> Path:
    """A git project `calc` with its own store, as the current folder (two of them have the same name,
    so their sessions' summaries read the same)."""
    root = tmp_path / where / "calc"
    (root / ".git").mkdir(parents=True)
    monkeypatch.delenv("MEM_DIR", raising=False)
    monkeypatch.chdir(root)
    ok("init", ".mem")
    return root


def place(tmp_path, monkeypatch, fixture, project: Path, text: str | None = None) -> Path:
    """The fixture where its client keeps transcripts of `project`, its folder made the project's."""
    client, name, folder = fixture
    home = tmp_path / "homes" / client
    monkeypatch.setenv(CLIENT_HOMES[client][0], str(home))
    text = (TRANSCRIPTS / name).read_text(encoding="utf-8") if text is None else text
    if client == "claude-code":
        path = home / "projects" / "".join(c if c.isalnum() else "-" for c in str(project)) / name
    elif client == "codex":
        path = home / "sessions" / "2026" / "12" / "06" / f"rollout-2026-12-06T06-54-35-{name}"
    elif name.endswith(".jsonl"):  # Gemini CLI 0.61: a folder named for the project, its root in .project_root
        (home / ".gemini" / "tmp" / project.name).mkdir(parents=True)
        (home / ".gemini" / "tmp" / project.name / ".project_root").write_text(str(project))
        path = home / ".gemini" / "tmp" / project.name / "chats" / f"session-{name}"
    else:  # earlier versions: a folder named by the SHA-256 of the project's root
        import hashlib

        path = home / ".gemini" / "tmp" / hashlib.sha256(str(project).encode()).hexdigest() / "chats" / f"session-{name}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(folder, str(project)) if folder else text, encoding="utf-8")
    return path


def replay_hooks(monkeypatch, fixture, project: Path, transcript: Path | None = None, stored: bool = True) -> None:
    """The hook events the fixture stands for, through `mem hook`'s own code, each at its time; `stored`:
    and the queue run, as the runner the hooks start would."""
    client, name, _ = fixture
    lines = (TRANSCRIPTS / (name.split(".")[0] + ".hooks.jsonl")).read_text()
    for line in lines.splitlines():
        event = json.loads(line.replace("{cwd}", str(project)).replace("{transcript}", str(transcript or project / "t.jsonl")))
        monkeypatch.setattr(hook, "time", types.SimpleNamespace(time=lambda at=event["at"]: at))
        hook.run(json.dumps(event["payload"]), client=client)
    monkeypatch.setattr(hook, "time", time)
    if stored:
        drain(open_mem())


def digest(project: Path) -> str:
    answer = hook.run(json.dumps({"hook_event_name": "SessionStart", "session_id": "next", "cwd": str(project),
                                  "source": "startup"}))
    return json.loads(answer)["hookSpecificOutput"]["additionalContext"] if answer else ""


@pytest.mark.parametrize("fixture", [CLAUDE_RECORDED, CODEX, GEMINI_RECORDED, CLAUDE, GEMINI], ids=lambda f: f[1].split(".")[0])
def test_an_imported_session_is_stored_as_its_hooks_would_have_stored_it(tmp_path, monkeypatch, fixture):
    hooked = new_project(tmp_path, monkeypatch, "hooked")
    replay_hooks(monkeypatch, fixture, hooked)
    from_hooks = stored_memories(hooked)

    imported = new_project(tmp_path, monkeypatch, "imported")
    place(tmp_path, monkeypatch, fixture, imported)
    result = ok("import", "--from", fixture[0])
    from_import = stored_memories(imported)

    assert from_import == from_hooks
    kinds = {tags[0] for tags, _, _ in from_import}
    assert {"observation", "session"} <= kinds
    assert "1 session: queued" in result.stderr


def test_the_claude_code_session_keeps_its_edit_its_failed_command_and_its_last_answer(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    place(tmp_path, monkeypatch, CLAUDE, project)
    ok("import", "--from", "claude-code")
    stored = stored_memories(project)
    texts = "\n".join(raw for _, _, raw in stored)
    assert "+    new_debug = !socket.assigns.transcript_view_show_debug" in texts  # the Edit, as a diff
    assert "(failed, exit 1)" in texts and "paths are ignored by one of your .gitignore files" in texts
    [summary] = [raw for tags, _, raw in stored if "session" in tags]
    assert "Asked: continue" in summary and "Changed: lib/spotter_web/live/session_live.ex." in summary
    assert "Last answer: The CSS file is in `priv/static/assets/` which is gitignored." in summary


def test_importing_again_stores_nothing_new(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    place(tmp_path, monkeypatch, CODEX, project)
    ok("import", "--from", "codex")
    before = stored_memories(project)
    again = ok("import", "--from", "codex")
    assert stored_memories(project) == before
    assert "queued 0 events, 1 already stored" in again.stderr


def test_a_session_the_hooks_captured_is_not_imported_again(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    replay_hooks(monkeypatch, CODEX, project)
    before = stored_memories(project)
    place(tmp_path, monkeypatch, CODEX, project)
    result = ok("import", "--from", "codex", "--dry-run")
    assert "captured by hooks; skipped" in result.stderr
    result = ok("import", "--from", "codex")
    assert stored_memories(project) == before
    assert "queued 0 events, 1 captured by hooks" in result.stderr


def test_a_session_the_hooks_queued_but_did_not_yet_store_is_not_imported_twice(tmp_path, monkeypatch):
    hooked = new_project(tmp_path, monkeypatch, "hooked")
    replay_hooks(monkeypatch, CODEX, hooked)
    from_hooks = stored_memories(hooked)
    project = new_project(tmp_path, monkeypatch, "p")
    transcript = place(tmp_path, monkeypatch, CODEX, project)
    replay_hooks(monkeypatch, CODEX, project, transcript, stored=False)
    result = ok("import", "--from", "codex")
    assert "queued 0 events, 1 already stored" in result.stderr
    drain(open_mem())  # the runner the hooks started stores what they queued
    assert stored_memories(project) == from_hooks


def test_a_session_that_grew_since_the_last_import_adds_only_its_new_events(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    lines = (TRANSCRIPTS / CODEX[1]).read_text().splitlines(keepends=True)
    first_turn = next(i for i, line in enumerate(lines) if '"task_complete"' in line) + 1
    place(tmp_path, monkeypatch, CODEX, project, "".join(lines[:first_turn]))
    ok("import", "--from", "codex")
    place(tmp_path, monkeypatch, CODEX, project)
    result = ok("import", "--from", "codex", "--json")
    [session] = json.loads(result.stdout)["sessions"]
    assert session["state"] == "more"
    assert session["new"] == {"prompt": 1, "tool": 1, "stop": 1}
    assert session["already_stored"] == 6


def test_after_an_import_the_next_session_is_handed_what_the_imported_ones_learned(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    place(tmp_path, monkeypatch, CODEX, project)
    ok("import", "--from", "codex")
    context = digest(project)
    assert "Ruling: “From now on run the tests with python -m pytest -q.”" in context
    assert "“python -m pytest -q”" in context  # the check that passed
    assert "src/calc.py" in context


def test_a_malformed_or_half_written_line_is_counted_and_the_rest_imported(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    lines = (TRANSCRIPTS / CLAUDE[1]).read_text().splitlines(keepends=True)
    broken = lines[:3] + ["this is not json\n", "[1, 2]\n"] + lines[3:] + ['{"type": "user", "message": {"role": "us']
    place(tmp_path, monkeypatch, CLAUDE, project, "".join(broken))
    result = ok("import", "--from", "claude-code")
    assert "3 malformed lines skipped" in result.stderr
    assert len([1 for tags, _, _ in stored_memories(project) if "observation" in tags]) == 6


def test_a_dry_run_says_what_each_session_would_add_and_stores_nothing(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    place(tmp_path, monkeypatch, CODEX, project)
    result = ok("import", "--from", "codex", "--dry-run")
    assert "codex session 01a24a22-0da (2026-12-06 06:54, " in result.stderr
    assert "2 prompts, 4 tool events, 2 answers" in result.stderr
    assert "dry run, nothing stored: 1 file, 1 session: would queue 9 events" in result.stderr
    assert stored_memories(project) == []
    assert not list((project / ".mem").glob(".queue/jobs/*.json"))


def test_only_the_current_projects_sessions_are_imported_unless_a_path_is_given(tmp_path, monkeypatch):
    other = new_project(tmp_path, monkeypatch, "other")
    transcript = place(tmp_path, monkeypatch, CODEX, other)
    project = new_project(tmp_path, monkeypatch, "p")
    result = ok("import", "--from", "codex")
    assert stored_memories(project) == [] and "0 sessions" in result.stderr
    ok("import", "--from", "codex", transcript)
    assert any("session" in tags for tags, _, _ in stored_memories(project))


def test_since_leaves_out_what_happened_before(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    place(tmp_path, monkeypatch, CODEX, project)
    result = ok("import", "--from", "codex", "--since", "2026-12-06T06:54:39+00:00", "--json")
    [session] = json.loads(result.stdout)["sessions"]
    assert session["new"] == {"prompt": 1, "tool": 1, "stop": 1} and session["before_since"] == 6


def test_secrets_and_private_spans_in_a_transcript_never_reach_the_disk(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    token = github_token()
    text = (TRANSCRIPTS / CODEX[1]).read_text().replace(
        "fix it and run the tests.", f"fix it and run the tests with GITHUB_TOKEN={token} <private>ask Dana first</private>")
    place(tmp_path, monkeypatch, CODEX, project, text)
    ok("import", "--from", "codex")
    on_disk = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in (project / ".mem").rglob("*") if p.is_file())
    assert "fix it and run the tests with GITHUB_TOKEN=" in on_disk
    assert token not in on_disk and "ask Dana first" not in on_disk


def test_with_no_transcripts_it_says_so(tmp_path, monkeypatch):
    new_project(tmp_path, monkeypatch, "p")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "nowhere"))
    result = ok("import", "--from", "gemini")
    assert "no gemini transcripts found for this project; nothing imported" in result.stderr


def test_a_sub_agents_tool_calls_belong_to_its_session_and_its_words_are_not_prompts(tmp_path, monkeypatch):
    project = new_project(tmp_path, monkeypatch, "p")
    main = place(tmp_path, monkeypatch, CLAUDE, project)
    session = json.loads(main.read_text().splitlines()[0])["sessionId"]
    agent = main.parent / main.stem / "subagents" / "agent-a1.jsonl"
    agent.parent.mkdir(parents=True)
    said = {"sessionId": session, "cwd": str(project), "isSidechain": True, "agentId": "a1"}
    agent.write_text("\n".join(json.dumps({**said, **line}) for line in [
        {"type": "user", "timestamp": "2026-02-12T20:40:00.000Z", "message": {"role": "user", "content": "Find where the CSS is built"}},
        {"type": "assistant", "timestamp": "2026-02-12T20:40:01.000Z", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_sub1", "name": "Bash", "input": {"command": "ls assets/css"}}]}},
        {"type": "user", "timestamp": "2026-02-12T20:40:02.000Z", "toolUseResult": {"stdout": "app.css\n", "stderr": ""},
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_sub1", "content": "app.css"}]}},
        {"type": "assistant", "timestamp": "2026-02-12T20:40:03.000Z", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "It is built from assets/css/app.css."}]}},
    ]) + "\n")
    ok("import", "--from", "claude-code")
    stored = stored_memories(project)
    assert any(source.startswith(f"session/{session}#") and "ran `ls assets/css`" in raw for _, source, raw in stored)
    [summary] = [raw for tags, _, raw in stored if "session" in tags]
    assert "Find where the CSS is built" not in summary and "It is built from" not in summary


def test_from_takes_no_compression_flags(tmp_path, monkeypatch):
    new_project(tmp_path, monkeypatch, "p")
    result = run("import", "--from", "codex", "--defer")
    assert result.exit_code == 2 and "--from always queues compression" in result.stderr


def test_progress_is_told_of_the_bytes_read_the_events_folded_and_the_memories_made(tmp_path, monkeypatch):
    from memcli.capture.past import import_sessions, transcripts

    project = new_project(tmp_path, monkeypatch, "p")
    size = place(tmp_path, monkeypatch, CODEX, project).stat().st_size
    heard: dict[str, tuple[int, int]] = {}
    files = transcripts("codex", [], str(project))
    import_sessions(open_mem(), "codex", files, project=str(project), progress=lambda phase, done, total: heard.update({phase: (done, total)}))
    assert heard["reading transcripts"] == (size, size)
    assert heard["folding events"] == (9, 9)
    done, total = heard["storing memories"]
    assert done == total > 0
