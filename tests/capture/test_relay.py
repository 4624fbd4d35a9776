"""While a hook server serves the store, a hook hands it the payload: the same queue, the same answer."""

from __future__ import annotations

import json
from contextlib import contextmanager

from helpers import ok
from payloads import claude, claude_bash
from test_hook import hook
from work_helpers import waiting_events

from memcli.capture.projects import project_of
from memcli.capture.serve import HookServer
from memcli.capture.spool import Spool


@contextmanager
def served(project, providers=None):
    """A hook server serving the project's store while the block runs, stopped after it."""
    server = HookServer(project / ".mem", providers)
    assert server.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_served_store_queues_relayed_events_once_and_answers_session_start(project):
    spool = Spool(project / ".mem")
    spool.save_context(project_of(str(project)), "Quoted from earlier coding sessions:\n- one")
    with served(project) as server:
        before = server.last_event
        assert hook(claude_bash(project, "ls", "a")).stdout == ""
        assert hook(claude_bash(project, "ls", "a")).stdout == ""
        answer = json.loads(hook(claude("SessionStart", project, source="startup")).stdout)
        assert answer["hookSpecificOutput"]["additionalContext"].endswith("- one")
        assert server.last_event > before
    assert len(waiting_events(project / ".mem")) == 2  # the tool event once, the SessionStart
    assert not (project / ".mem/.capture/hook.sock").exists()


def test_a_dead_servers_socket_makes_the_hook_do_the_work_itself(project):
    server = HookServer(project / ".mem")
    assert server.start()
    server._stop.set()
    server._thread.join(5)
    server._sock.close()  # the socket file stays, nobody listens: a server killed with -9
    result = hook(claude_bash(project, "ls", "b"))
    assert (result.returncode, result.stdout) == (0, "")
    assert len(waiting_events(project / ".mem")) == 1


def test_a_server_stops_after_its_linger_and_a_second_one_gives_way(project):
    from memcli.capture.serve import serve

    spool = Spool(project / ".mem")
    with spool.serve_lock() as held:
        assert held and spool.serving()
        assert "hook server running" in ok("status").stdout
        assert serve(project / ".mem", 0.1) is False
    assert serve(project / ".mem", 0.3) is True
    assert not spool.serving() and not (project / ".mem/.capture/hook.sock").exists()


def test_the_server_starts_a_runner_once_it_has_answered(project, monkeypatch):
    import memcli.capture.serve as serving

    started = []
    monkeypatch.delenv("MEM_CAPTURE_DRAIN")
    monkeypatch.setattr(serving, "start_background", lambda root, served: started.append(served))
    with served(project) as server:
        assert hook(claude_bash(project, "ls", "d")).stdout == ""
        for _ in range(100):
            if started:
                break
            server._stop.wait(0.05)
    assert started == [True]


def agree_to_prompt_context(project, tmp_path) -> None:
    """What the user adds to their own config to let a project's mem.yaml turn prompt_context on."""
    config = tmp_path / "config" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"trusted_prompt_context: [{(project / '.mem').resolve()}]\n")
    config.chmod(0o600)


def test_prompt_context_when_turned_on_answers_a_prompt_with_the_memories_found(project, tmp_path):
    import fakes

    ok("add", "The staging database runs on port 5433 behind pgbouncer")
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("capture:\n  prompt_context: true\n  prompt_tokens: 80\n")
    agree_to_prompt_context(project, tmp_path)
    with served(project, fakes.current):
        answer = json.loads(hook(claude("UserPromptSubmit", project, prompt="which port does the staging database use")).stdout)
        assert hook(claude("UserPromptSubmit", project, prompt="zebra xylophone quartz")).stdout == ""
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit" and "port 5433" in out["additionalContext"]


def test_prompt_context_turned_on_by_a_committed_mem_yaml_waits_for_the_users_word(project, tmp_path):
    import fakes

    (project / ".git").mkdir()  # the store is committed with a repository: its mem.yaml is anyone's
    ok("add", "The staging database runs on port 5433 behind pgbouncer")
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("capture:\n  prompt_context: true\n")
    prompt = claude("UserPromptSubmit", project, prompt="which port does the staging database use")
    with served(project, fakes.current):
        assert hook(prompt).stdout == ""
        assert "trusted_prompt_context" in ok("status").stdout
        agree_to_prompt_context(project, tmp_path)
        answered = hook(prompt).stdout
    assert "port 5433" in json.loads(answered)["hookSpecificOutput"]["additionalContext"]


def test_prompt_context_is_off_by_default(project):
    import fakes

    ok("add", "The staging database runs on port 5433 behind pgbouncer")
    with served(project, fakes.current):
        assert hook(claude("UserPromptSubmit", project, prompt="staging database port")).stdout == ""


def test_a_project_store_without_git_still_asks_before_prompt_context(project):
    import fakes

    ok("add", "The staging database runs on port 5433 behind pgbouncer")  # no .git: an unpacked archive
    with open(project / ".mem" / "mem.yaml", "a") as settings:
        settings.write("capture:\n  prompt_context: true\n")
    with served(project, fakes.current):
        assert hook(claude("UserPromptSubmit", project, prompt="which port does the staging database use")).stdout == ""
    assert "trusted_prompt_context" in ok("status").stdout


def test_the_user_store_uses_its_own_prompt_context_without_asking(tmp_path, monkeypatch):
    from memcli.providers.consent import untrusted_prompt_context
    from memcli.util.paths import user_store_dir

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (user_store_dir() / ".git").mkdir(parents=True)  # even inside a repository (dotfiles)
    assert untrusted_prompt_context(user_store_dir()) is None
    assert untrusted_prompt_context(tmp_path / "proj" / ".mem") is not None
