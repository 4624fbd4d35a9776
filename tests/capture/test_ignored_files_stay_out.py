"""What a file the denylist excludes holds never reaches a memory through a captured event: not through a
shell command that reads or writes it (however wrapped, quoted or globbed), a search whose matches come from
it (whatever the layout of its output), a patch that moves a file onto it, or a web fetch of it as a local
URL (in any case or encoding). Such an event is kept as a note saying which ignored file it named."""

from __future__ import annotations

import json

import pytest

from helpers import ok, open_mem
from payloads import claude, codex, gemini
from work_helpers import drain

from memcli.capture.hook import run as hook

VALUE = "db-password-Zq81"  # a value only the ignored file holds (not a secret shape: redaction would not catch it)


def stored() -> str:
    return ok("export").stdout


def send_and_drain(payload: dict) -> dict:
    hook(json.dumps(payload))
    return drain(open_mem())


WITHHELD = "withheld: names an ignored file"


def test_a_shell_command_that_reads_an_ignored_file_is_stored_as_a_note_of_why_without_its_output(project):
    for command in ("cat .env", "grep DB .env | head -3", "source .env && echo ok", "docker run --env-file=.env app",
                    "python app.py < .env"):
        done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id=command,
                                     tool_input={"command": command},
                                     tool_response={"stdout": f"NOTE={VALUE}", "stderr": ""}))
        assert done[WITHHELD] == 1, command
    text = stored()
    assert VALUE not in text and "named .env, which the denylist ignores" in text


# Issue 53, items 23-27: the commands a hostile round used to get an ignored file's content past the list
# of "reads of ignored files".
HIDDEN_READS = [
    "sudo cat .env", "bash -c 'cat .env'", "sh -c \"cat .env\"", "python -c \"print(open('.env').read())\"",
    "cat .e*", "cat *.env", "echo $(cat .env)", "echo `cat .env`", "ls -a | xargs cat",
    "find . -name .env -exec cat {} \\;", "env -i timeout 5 nice -n 5 cat .env", "X=$(cat .env) make",
    "cat .{env,txt}", "node -e 'require(\"child_process\").execSync(\"cat .env\")'",
    "grep -rh DB_PASS .", "cat .ENV", "cat ./.Env",
    # a second round on the class: redirections beside a number, variables, joined literals, archives, listings
    "exec 3<.env; cat <&3", "f=.e; cat ${f}nv", "python3 -c \"print(open('.e' + 'nv').read())\"",
    "tar cz . | base64", "cat $(ls -a)",
]


@pytest.mark.parametrize("command", HIDDEN_READS)
def test_a_command_that_reaches_an_ignored_file_however_it_is_written_keeps_none_of_its_output(project, command):
    (project / ".memignore").write_text("*.env\n")
    (project / "prod.env").write_text(f"NOTE={VALUE}\n")
    (project / ".env").write_text(f"NOTE={VALUE}\n")
    (project / "README.md").write_text("hello\n")
    done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id="t1",
                                 tool_input={"command": command},
                                 tool_response={"stdout": f"NOTE={VALUE}", "stderr": ""}))
    assert VALUE not in stored() and done[WITHHELD] == 1


@pytest.mark.parametrize("tool_input", [
    {"command": ["bash", "-lc", "cat .env"]},
    {"cmd": "cat .env"},
    {"cmd": ["sh", "-c", "sudo cat .env"], "workdir": "."},
])
def test_a_codex_exec_whose_command_is_a_list_or_cmd_keeps_none_of_an_ignored_files_output(project, tool_input):
    done = send_and_drain(codex("PostToolUse", project, tool_name="exec_command", tool_use_id="e1",
                                tool_input=tool_input, tool_response=f"NOTE={VALUE}"))
    assert VALUE not in stored() and done[WITHHELD] == 1


def test_an_mcp_shell_tool_that_reads_an_ignored_file_keeps_none_of_its_output(project):
    done = send_and_drain(claude("PostToolUse", project, tool_name="mcp__terminal__run", tool_use_id="m1",
                                 tool_input={"command": "sudo cat .env", "timeout": 30},
                                 tool_response={"content": [{"type": "text", "text": f"NOTE={VALUE}"}]}))
    assert VALUE not in stored() and done[WITHHELD] == 1


def test_the_output_of_a_withheld_command_sent_to_the_background_is_withheld_when_fetched(project):
    started = "Command running in background with ID: b7k2x9q. Output is being written to: /tmp/claude/tasks/b7k2x9q.output"
    hook(json.dumps(claude("PostToolUse", project, tool_name="Bash", tool_use_id="bg1",
                           tool_input={"command": "cat .env", "run_in_background": True},
                           tool_response={"stdout": started, "stderr": ""})))
    done = send_and_drain(claude("PostToolUse", project, tool_name="TaskOutput", tool_use_id="bg2",
                                 tool_input={"task_id": "b7k2x9q", "block": True},
                                 tool_response={"output": f"NOTE={VALUE}", "status": "completed"}))
    assert VALUE not in stored() and done[WITHHELD] == 2
    kept = send_and_drain(claude("PostToolUse", project, tool_name="TaskOutput", tool_use_id="bg3",
                                 tool_input={"task_id": "other1"}, tool_response={"output": "kept-output-Zq81"}))
    assert kept[WITHHELD] == 0 and "kept-output-Zq81" in stored()


@pytest.mark.parametrize("command", ["echo NOTE={v} >> .env", "printf 'NOTE={v}' | tee -a .env",
                                     "cat > .env <<EOF\nNOTE={v}\nEOF"])
def test_a_command_that_writes_an_ignored_file_keeps_neither_what_it_wrote_nor_its_output(project, command):
    done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id="w1",
                                 tool_input={"command": command.format(v=VALUE)},
                                 tool_response={"stdout": f"NOTE={VALUE}", "stderr": ""}))
    assert VALUE not in stored() and done[WITHHELD] == 1


def test_a_command_that_reads_only_kept_files_is_stored_with_its_output(project):
    (project / ".env").write_text(f"NOTE={VALUE}\n")
    (project / "README.md").write_text("read me first\n")
    for n, command in enumerate(("cat README.md", "bash -lc 'cat README.md'", "cat *.md")):
        done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id=f"r{n}",
                                     tool_input={"command": command},
                                     tool_response={"stdout": "read me first", "stderr": ""}))
        assert done["stored"] + done["merged"] == 1 and not done[WITHHELD], command
    assert "read me first" in stored()


def test_a_search_keeps_its_matches_in_kept_files_and_drops_those_in_ignored_ones(project):
    out = f"src/db.py:3:PASSWORD = os.environ['DB_PASS']\n.env:1:NOTE={VALUE}\n"
    done = send_and_drain(claude("PostToolUse", project, tool_name="Grep", tool_use_id="g1",
                                 tool_input={"pattern": "DB_PASS", "output_mode": "content"},
                                 tool_response={"mode": "content", "content": out, "numLines": 2}))
    assert done["removed: lines of ignored files"] == 1 and done["stored"] == 1
    text = stored()
    assert VALUE not in text and "src/db.py:3" in text


def test_a_name_alone_on_a_line_of_a_command_that_is_no_search_drops_nothing_below_it(project):
    out = "Untracked files:\n\t.env\n\tnotes-kept-Zq81.md\n\nnothing added to commit"
    send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id="gs",
                          tool_input={"command": "git status"}, tool_response={"stdout": out, "stderr": ""}))
    assert "notes-kept-Zq81.md" in stored()


def test_a_gemini_shell_grep_drops_the_lines_of_ignored_files(project):
    send_and_drain(gemini("AfterTool", project, tool_name="run_shell_command",
                          tool_input={"command": "grep -rn DB_PASS ."},
                          tool_response={"llmContent": f"./.env:1:NOTE={VALUE}\n./src/db.py:3:x = 1\n"}))
    assert VALUE not in stored()


@pytest.mark.parametrize("output", [
    "./.env:NOTE={v}\n./src/db.py:x = 1\n",  # grep -r without -n
    ".env\n1:NOTE={v}\n2:MORE={v}\n\nsrc/db.py\n3:x = 1\n",  # rg --heading
    ".env\nNOTE={v}\nsrc/db.py\nx = 1\n",  # git grep --heading, no -n, no break
    "HEAD:.env:NOTE={v}\nHEAD:src/db.py:x = 1\n",  # git grep on a revision
    "./.env-1-DB_HOST=db\n./.env:2:NOTE={v}\n./src/db.py:3:x = 1\n",  # context lines
    "==> .env <==\nNOTE={v}\n\n==> src/db.py <==\nx = 1\n",  # tail -n +1 of several files
    '{{"type":"match","data":{{"path":{{"text":"./.env"}},"lines":{{"text":"NOTE={v}\\n"}}}}}}\n'
    '{{"type":"match","data":{{"path":{{"text":"./src/db.py"}},"lines":{{"text":"x = 1\\n"}}}}}}\n',  # rg --json
])
def test_a_search_drops_the_lines_of_ignored_files_whatever_its_layout(project, output):
    (project / "src").mkdir()
    (project / "src" / "db.py").write_text("x = 1\n")
    send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id="s1",
                          tool_input={"command": "rg --heading DB ."},
                          tool_response={"stdout": output.format(v=VALUE), "stderr": ""}))
    text = stored()
    assert VALUE not in text and "x = 1" in text


def test_a_patch_that_moves_a_file_onto_an_ignored_path_is_skipped(project):
    patch = f"*** Begin Patch\n*** Update File: config.txt\n*** Move to: .env\n@@\n-x\n+NOTE={VALUE}\n*** End Patch"
    done = send_and_drain(codex("PostToolUse", project, tool_name="apply_patch", tool_use_id="p1",
                                tool_input={"command": patch}, tool_response="Success."))
    assert done["skipped: ignored path"] == 1 and VALUE not in stored()


@pytest.mark.parametrize("url", ["file://{p}/.env", "FILE://{p}/.env", "File://localhost{p}/%2Eenv",
                                 "file://{p}/%252Eenv", "https://example.com/fetch?u=file%3A%2F%2F{p}%2F.env",
                                 "view-source:file://{p}/.env"])
def test_a_web_fetch_of_an_ignored_local_file_keeps_none_of_it(project, url):
    done = send_and_drain(claude("PostToolUse", project, tool_name="WebFetch", tool_use_id="w1",
                                 tool_input={"url": url.format(p=project), "prompt": "what is in it"},
                                 tool_response={"result": f"NOTE={VALUE}"}))
    assert VALUE not in stored() and done[WITHHELD] == 1


@pytest.mark.parametrize("command", [".venv/bin/python -m pytest -q", "bash -lc '.venv/bin/python -m pytest -q'",
                                     "sudo .venv/bin/pytest"])
def test_a_command_that_only_runs_a_program_from_an_ignored_folder_is_kept(project, command):
    (project / ".gitignore").write_text(".venv/\n")
    (project / ".git").mkdir()
    done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id="t1",
                                 tool_input={"command": command},
                                 tool_response={"stdout": "3 passed", "stderr": ""}))
    assert done["stored"] == 1



@pytest.mark.parametrize("command", ["source .venv/bin/activate && pytest -q", ". .venv/bin/activate; python -m pytest",
                                     ".venv/bin/python -m pytest -q"])
def test_a_test_run_inside_an_ignored_virtualenv_is_kept(project, command):
    (project / ".gitignore").write_text(".venv/\n")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "activate").write_text("export VIRTUAL_ENV=.venv\n")
    done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id=command,
                                 tool_input={"command": command},
                                 tool_response={"stdout": "FAILED tests/test_cart.py::test_total\n1 failed, 9 passed",
                                                "stderr": ""}))
    assert WITHHELD not in done
    assert "test_total" in stored()


@pytest.mark.parametrize("command", ["git commit -m 'read settings from .env'", 'git commit -am "drop .env from CI"',
                                     "git stash push -m 'wip: .env loading'", "git commit --message='.env docs'"])
def test_a_commit_message_naming_an_ignored_file_keeps_the_commit(project, command):
    (project / ".env").write_text(f"NOTE={VALUE}\n")
    done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id=command,
                                 tool_input={"command": command},
                                 tool_response={"stdout": "[main 1a2b3c4] settings\n 1 file changed", "stderr": ""}))
    assert WITHHELD not in done and "1 file changed" in stored()


@pytest.mark.parametrize("command", ['git commit -m "$(cat .env)"', "git commit -am \"note `cat .env`\"",
                                     "git commit -F .env", "git commit -m x .env", "git commit -F.env",
                                     "git commit -m {x,--pathspec-from-file=.env}", "git notes add -m {x,-F,.env}",
                                     "git tag -a v9 -F.env", "git commit -m -F .env"])
def test_a_commit_whose_message_or_files_read_an_ignored_file_is_withheld(project, command):
    (project / ".env").write_text(f"NOTE={VALUE}\n")
    done = send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id=command,
                                 tool_input={"command": command},
                                 tool_response={"stdout": f"[main 1a2b3c4] NOTE={VALUE}", "stderr": ""}))
    assert done[WITHHELD] == 1 and VALUE not in stored()


def test_a_name_in_ordinary_output_is_not_taken_for_a_search_match(project):
    (project / ".memignore").write_text("build\ncoverage\n*.log\n")
    (project / "build").mkdir()
    (project / "app.log").write_text("started\n")
    send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id="make",
                          tool_input={"command": "make"},
                          tool_response={"stdout": "build: compiled 3 files\ncoverage: 85%\nErrors go to app.log: see there",
                                         "stderr": ""}))
    text = stored()
    assert "compiled 3 files" in text and "85%" in text and "see there" in text
