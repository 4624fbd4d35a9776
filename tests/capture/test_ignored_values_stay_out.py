"""A value an ignored file of the session's folder holds never reaches a memory, whatever way it took into
an event: a command that names no ignored file (a listing in `$(...)`, a name built at run time,
`printenv`, a script), a link with an innocent name, a prompt or an answer. Each occurrence becomes
`[REDACTED:ignored-file]`; short and common values (`true`, `localhost`, `5432`) stay as they are."""

from __future__ import annotations

import json
import os

import pytest

from helpers import ok, open_mem
from payloads import claude
from test_ignored_files_stay_out import VALUE, send_and_drain, stored

from memcli.capture.hook import run as hook

REDACTED = "[REDACTED:ignored-file]"
COUNTED = "redacted: values of ignored files"
ENV = f"APP_ENV=development\nDEBUG=true\nDB_HOST=localhost\nDB_PORT=5432\nDB_USER=postgres\nDB_PASSWORD={VALUE}\n"


def bash(project, command: str, stdout: str, call: str = "b1") -> dict:
    return send_and_drain(claude("PostToolUse", project, tool_name="Bash", tool_use_id=call,
                                 tool_input={"command": command}, tool_response={"stdout": stdout, "stderr": ""}))


@pytest.mark.parametrize("command", [
    "cat $(grep -rl DB_PASSWORD .)",
    "cat \"$(printf '\\x2eenv')\"",
    "cat $'\\x2e'env",
    "printenv",
    "env | sort",
    "docker compose config",
    "python -c \"print(open(chr(46)+'env').read())\"",
    "python3 scripts/show_settings.py",
])
def test_a_value_of_an_ignored_file_never_reaches_a_memory_whatever_the_command(project, command):
    (project / ".env").write_text(ENV)
    done = bash(project, command, f"DB_HOST=localhost\nAPP_NOTE={VALUE}\nservices:\n  db:\n    command: login {VALUE}\n")
    text = stored()
    assert VALUE not in text and REDACTED in text and done[COUNTED] == 2


def test_a_link_with_an_innocent_name_to_an_ignored_file_outside_the_folder_gives_its_values_too(project, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / ".env").write_text(ENV)
    (project / "settings.txt").symlink_to(shared / ".env")  # a worktree's link to the main checkout's .env
    bash(project, "docker compose up -d && docker compose logs db", f"db  | connecting with {VALUE}")
    assert VALUE not in stored()


def test_a_link_with_an_innocent_name_inside_the_folder_gives_the_values_of_what_it_leads_to(project):
    (project / "config").mkdir()
    (project / "config" / "prod.secret").write_text(f"token: {VALUE}\n")
    (project / ".memignore").write_text("*.secret\n")
    (project / "notes.txt").symlink_to(project / "config" / "prod.secret")
    bash(project, "make run", f"started with {VALUE}")
    assert VALUE not in stored()


def test_a_prompt_or_an_answer_holding_a_value_of_an_ignored_file_keeps_it_out(project):
    (project / ".env").write_text(ENV)
    hook(json.dumps(claude("UserPromptSubmit", project, prompt=f"why does login fail with {VALUE}?")))
    hook(json.dumps(claude("Stop", project, last_assistant_message=f"The password {VALUE} is wrong for postgres.")))
    hook(json.dumps(claude("UserPromptSubmit", project, prompt="thanks")))
    hook(json.dumps(claude("Stop", project, last_assistant_message="done")))
    done = send_and_drain(claude("Stop", project, last_assistant_message="all done"))
    listed = ok("ls", "--jsonl", "--raw", "-n", "1000").stdout
    (thread,) = json.loads(ok("thread", "ls", "--json").stdout)
    shown = ok("thread", "show", thread["id"], "--jsonl").stdout
    assert VALUE not in listed + shown + stored() and "is wrong for postgres" in listed + shown
    assert done[COUNTED] == 2


@pytest.mark.parametrize("name, content, secret", [
    (".env", f'export STRIPE_KEY="{VALUE}"  # live\n', VALUE),
    ("config/credentials.json", '{"client_id": "x", "client_secret": "' + VALUE + '"}', VALUE),
    ("secrets.yml", f"production:\n  api_token: '{VALUE}'\n", VALUE),
    (".pgpass", f"db.internal:5432:app:app:{VALUE}\n", VALUE),
    (".netrc", f"machine api.example.com login me password {VALUE}\n", VALUE),
    (".env.local", f"DATABASE_URL=postgres://app:{VALUE}@db:5432/app\n", VALUE),
    ("server.key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
                   "-----END PRIVATE KEY-----\n", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"),
    (".env.regex", "PATTERN=(a+)*[x]$^.{2}\\1|?\n", "(a+)*[x]$^.{2}\\1|?"),
    (".env.aws", "AWS_SECRET_ACCESS_KEY=/n90D5uZoLY0e0z1+1PTSyQpGGeywmc\n", "/n90D5uZoLY0e0z1+1PTSyQpGGeywmc"),
    (".env.mail", "MAIL_PASS=qwhzkrtplmvbsnyx\n", "qwhzkrtplmvbsnyx"),  # an app password: 16 letters
])
def test_a_value_is_taken_out_whatever_the_form_of_the_ignored_file_that_holds_it(project, name, content, secret):
    (project / ".memignore").write_text("secrets.yml\nconfig/credentials.json\n")
    (project / "config").mkdir()
    (project / name).write_text(content)
    done = bash(project, "./run-tests.sh", f"failed: expected 'ok', got '{secret}' from the service")
    text = stored()
    assert secret not in text and "from the service" in text and done[COUNTED] == 1


def test_short_and_common_values_of_an_ignored_file_stay_in_ordinary_output(project):
    (project / ".env").write_text(ENV + "REDIS_URL=redis://localhost:6379/0\nREGION_NAME=postgres_main\n"
                                  "AWS_REGION=us-east-1\nLOG_DIR=/var/log/my-app\nVERSION=1.24.3\n")
    out = (f"connecting to localhost:5432 as postgres (development, debug=true) via redis://localhost:6379/0\n"
           f"region us-east-1, logs in /var/log/my-app, v1.24.3, db postgres_main\npassword {VALUE} rejected")
    bash(project, "npm run dev", out)
    text = stored()
    for kept in ("localhost:5432", "postgres", "development", "debug=true", "redis://localhost:6379/0", "us-east-1",
                 "/var/log/my-app", "1.24.3", "postgres_main"):
        assert kept in text, kept
    assert VALUE not in text


def test_an_unreadable_binary_huge_or_fifo_ignored_file_never_stops_a_capture(project):
    (project / ".env").write_text(ENV)
    os.mkfifo(project / ".env.pipe")  # reading it would block for ever
    (project / ".env.bin").write_bytes(b"KEY=\x00\x01binary-Zq81-value\n")
    (project / ".env.huge").write_text("BIG=" + "Aa1-" * 100_000 + "\n")
    (project / ".env.locked").write_text("LOCKED=locked-Zq81-value\n")
    (project / ".env.locked").chmod(0)
    done = bash(project, "printenv", f"APP_NOTE={VALUE}\nok")
    assert VALUE not in stored() and done[COUNTED] == 1


def test_a_folder_with_no_ignored_file_is_walked_once_a_run_and_nothing_in_it_read(project, monkeypatch):
    from memcli.capture import ignored_content
    from memcli.privacy.ignore import IgnoreRules

    walks, reads, real_walk = [], [], IgnoreRules.walk
    monkeypatch.setattr(IgnoreRules, "walk", lambda self: walks.append(1) or real_walk(self))
    monkeypatch.setattr(ignored_content, "read_pinned", lambda *a: reads.append(1) or b"")
    other = project / "service"
    other.mkdir()
    (other / ".env").write_text(ENV)
    app = project / "app"
    app.mkdir()
    (app / "README.md").write_text(f"the value {VALUE} is only a word here\n")
    for n in range(3):
        hook(json.dumps(claude("PostToolUse", app, tool_name="Bash", tool_use_id=f"p{n}",
                               tool_input={"command": "cat README.md"},
                               tool_response={"stdout": f"the value {VALUE} is only a word here", "stderr": ""})))
    done = send_and_drain(claude("PostToolUse", other, session="c2", tool_name="Bash", tool_use_id="o1",
                                 tool_input={"command": "printenv"}, tool_response={"stdout": VALUE, "stderr": ""}))
    assert len(walks) == 2 and len(reads) == 1  # one walk a folder, one read: the other folder's .env
    assert f"the value {VALUE} is only a word here" in stored() and COUNTED not in done
