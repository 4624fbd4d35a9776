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
    (".pypirc", "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc\n", "pypi-AgEIcHlwaS5vcmc"),
    (".env.at", "SECRET_KEY=kX9#mP2q@Lq7z\n", "kX9#mP2q@Lq7z"),  # an @ does not make it an address
    (".env.mongo", "MONGO_URL=mongodb://app:Pw9xZq81Lm@m1:27017,m2:27017/db?replicaSet=rs0\n", "Pw9xZq81Lm"),
    ("secrets.yml", "environment:\n  - POSTGRES_PASSWORD=Zq81kx9Lm2pwT\n", "Zq81kx9Lm2pwT"),
    ("config/credentials.json", '{"keys": [\n  "tok_9xZq81Lm2pwT",\n  "tok_Ab3Cd4Ef5Gh6"\n]}\n', "tok_9xZq81Lm2pwT"),
    (".npmrc", "//registry.npmjs.org/:_authToken=npm_Zq81kx9Lm2pwTab\n", "npm_Zq81kx9Lm2pwTab"),
    (".env.bom", "\ufeffAPI_KEY=Zq81kx9Lm2pwT77\n", "Zq81kx9Lm2pwT77"),
    (".env.bearer", "AUTH_HEADER=Bearer sk_live_Zq81kx9Lm2pwT\n", "sk_live_Zq81kx9Lm2pwT"),
    ("config/credentials.json", '{"tokens": ["tok_9Xk2mPq7LwZt3R"]}\n', "tok_9Xk2mPq7LwZt3R"),
    ("secrets.yml", 'conn = { user = "app", token = "Hn3Jk7Lm1Pq5" }\n', "Hn3Jk7Lm1Pq5"),
])
def test_a_value_is_taken_out_whatever_the_form_of_the_ignored_file_that_holds_it(project, name, content, secret):
    (project / ".memignore").write_text("secrets.yml\nconfig/credentials.json\n")
    (project / "config").mkdir()
    (project / name).write_text(content)
    done = bash(project, "./run-tests.sh", f"failed: expected 'ok', got '{secret}' from the service")
    text = stored()
    assert secret not in text and "from the service" in text and done[COUNTED] == 1


def test_an_ignored_file_with_a_byte_that_is_not_utf8_still_gives_its_values(project):
    (project / ".env").write_bytes(b"# caf\xe9 settings\n" + f"DB_PASSWORD={VALUE}\n".encode())
    bash(project, "./run-tests.sh", f"login {VALUE} refused")
    assert VALUE not in stored()


def test_an_ide_workspace_file_and_a_command_in_settings_do_not_blank_ordinary_output(project):
    (project / ".gitignore").write_text(".idea/workspace.xml\ndocker-compose.override.yml\n.vscode/\n")
    (project / ".git").mkdir()
    (project / ".idea").mkdir()
    (project / ".idea" / "workspace.xml").write_text("<project>\n  <component>\n</component>\n</configuration>\n"
                                                     "<created>1712345678901</created>\n</project>\n")
    (project / "docker-compose.override.yml").write_text("services:\n  web:\n    command: python manage.py runserver "
                                                         "0.0.0.0:8000\n    volumes:\n      - ./app/:/usr/src/app/\n")
    out = "</configuration>\n</project>\nmounted ./app/:/usr/src/app/ at 1712345678901\nWatching for file changes"
    bash(project, "python manage.py runserver 0.0.0.0:8000", out)
    text = stored()
    assert REDACTED not in text and "runserver 0.0.0.0:8000" in text and "</configuration>" in text
    assert "./app/:/usr/src/app/ at 1712345678901" in text


def test_a_dotenv_rewritten_in_place_by_sed_gives_its_new_value_to_a_lingering_runner(project, monkeypatch):
    from memcli.capture import ignored_content
    from memcli.capture.event_jobs import KINDS
    from memcli.features.work import Work

    monkeypatch.setattr(ignored_content, "CHEAP_WALK_S", 0.0)  # a costly walk: kept between events
    (project / ".env").write_text(ENV)
    work = Work(open_mem(), KINDS)
    hook(json.dumps(claude("PostToolUse", project, tool_name="Bash", tool_use_id="b0", tool_input={"command": "ls"},
                           tool_response={"stdout": "README.md", "stderr": ""})))
    work.run()
    rewritten = project / ".env.tmp"  # what `sed -i` does: a new file renamed over the old one
    rewritten.write_text("DB_PASSWORD=rotated-Xy77-pass\n")
    os.replace(rewritten, project / ".env")
    hook(json.dumps(claude("PostToolUse", project, tool_name="Bash", tool_use_id="b1", tool_input={"command": "env"},
                           tool_response={"stdout": "login with rotated-Xy77-pass", "stderr": ""})))
    work.run()
    assert "rotated-Xy77-pass" not in stored()


@pytest.mark.parametrize("where", ["/", "home"])
def test_a_session_at_the_root_or_the_home_folder_is_captured_without_walking_it(project, monkeypatch, where):
    from memcli.capture import ignored_content

    home = project / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEM_DIR", str(project / ".mem"))  # the store a session outside any project writes to
    walked = []
    monkeypatch.setattr(ignored_content.IgnoredFiles, "_walk_into", lambda self, walk: walked.append(self.top))
    cwd = "/" if where == "/" else str(home)
    done = send_and_drain(claude("PostToolUse", cwd, tool_name="Bash", tool_use_id="b1", tool_input={"command": "uptime"},
                                 tool_response={"stdout": "up 3 days, load average 0.5", "stderr": ""}))
    assert walked == [] and "load average" in stored(), done


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


def test_a_project_with_no_ignored_file_is_walked_once_a_run_and_nothing_in_it_read(project, monkeypatch):
    import subprocess

    from memcli.capture import ignored_content
    from memcli.privacy.ignore import IgnoreRules

    walks, reads, real_walk = [], [], IgnoreRules.walk
    monkeypatch.setattr(IgnoreRules, "walk", lambda self: walks.append(1) or real_walk(self))
    monkeypatch.setattr(ignored_content, "read_pinned", lambda *a: reads.append(1) or b"")
    other, app = project / "service", project / "app"
    for repo in (other, app):  # two projects (work trees) under one store
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (other / ".env").write_text(ENV)
    (app / "README.md").write_text(f"the value {VALUE} is only a word here\n")
    (app / "src").mkdir()
    for n in range(3):  # the first two queued before the run: one walk for them; one in a subfolder of app
        hook(json.dumps(claude("PostToolUse", app / "src" if n else app, tool_name="Bash", tool_use_id=f"p{n}",
                               tool_input={"command": "cat README.md"},
                               tool_response={"stdout": f"the value {VALUE} is only a word here", "stderr": ""})))
    done = send_and_drain(claude("PostToolUse", other, session="c2", tool_name="Bash", tool_use_id="o1",
                                 tool_input={"command": "printenv"}, tool_response={"stdout": VALUE, "stderr": ""}))
    assert len(walks) == 2 and len(reads) == 1  # one walk a project, one read: the other project's .env
    assert f"the value {VALUE} is only a word here" in stored() and COUNTED not in done


# -- which ignored files give values: not those that hold ordinary text ---------------------------------

def test_a_committed_env_example_does_not_blank_the_commands_its_settings_name(project):
    # committed for others to copy, yet ignored by the built-in `.env*` rule
    (project / ".env.example").write_text("APP_MODULE=main:app\nFLASK_APP=app:create_app\nSECRET_KEY=replace-Zq81-me\n"
                                          "PYTHON_IMAGE=python:3.12-slim\n")
    bash(project, "uvicorn main:app --reload", "started with replace-Zq81-me", call="b1")
    bash(project, "docker pull python:3.12-slim", "pulled", call="b2")
    text = stored()
    assert "ran `uvicorn main:app --reload`" in text and "replace-Zq81-me" in text
    assert "ran `docker pull python:3.12-slim`" in text and REDACTED not in text


@pytest.mark.parametrize("name, content, command, output", [
    ("server.log", "TypeError: unsupported operand type(s) for +: 'int' and 'str'\n", "python app.py",
     "TypeError: unsupported operand type(s) for +: 'int' and 'str'"),
    ("CLAUDE.local.md", "# my notes\nTests: pytest-x-tests/unit-Zq81\n", "make check", "pytest-x-tests/unit-Zq81 passed"),
    ("docker-compose.override.yml", "services:\n  web:\n    command: npm run dev -- --port 3001\n",
     "npm run dev -- --port 3001", "listening on 3001"),
])
def test_a_gitignored_log_note_or_local_config_does_not_blank_the_output_that_repeats_it(project, name, content,
                                                                                          command, output):
    import subprocess

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(f"{name}\n")
    (project / name).write_text(content)
    bash(project, command, output)
    text = stored()
    assert f"ran `{command}`" in text and output in text and REDACTED not in text


def test_a_gitignored_settings_file_still_gives_its_values(project):
    import subprocess

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("config/local.yml\nsecrets.txt\n")
    (project / "config").mkdir()
    (project / "config" / "local.yml").write_text(f"api:\n  token: {VALUE}\n")
    (project / "secrets.txt").write_text("db-token-Xy77-kept\n")
    bash(project, "make run", f"auth with {VALUE} and db-token-Xy77-kept")
    text = stored()
    assert VALUE not in text and "db-token-Xy77-kept" not in text


def test_settings_that_are_ordinary_text_stay_but_a_generated_pair_a_passphrase_and_a_login_go(project):
    (project / ".env").write_text('APP_NAME="Acme Payments"\nTZ=America/New_York\nLANG=en_US.UTF-8\n'
                                  "CORS=*.example.com\nNODE_IMAGE=node:20-alpine\nMAIL_FROM=Acme Support <help@acme.io>\n"
                                  "ADMIN_LOGIN=admin:S3cr3tPa55\nVAULT_PASSPHRASE=horse purple dishwasher staple\n"
                                  "DATABASE_URL=postgres://app:lowercasewords@db/app\n")
    out = ("Acme Payments API on node:20-alpine, TZ America/New_York, LANG en_US.UTF-8, CORS *.example.com,"
           " from Acme Support <help@acme.io>\nlogin admin:S3cr3tPa55, unlock horse purple dishwasher staple,"
           " db postgres://app:lowercasewords@db/app")
    bash(project, "npm start", out)
    text = stored()
    for kept in ("Acme Payments", "node:20-alpine", "America/New_York", "en_US.UTF-8", "*.example.com",
                 "Acme Support <help@acme.io>"):
        assert kept in text, kept
    assert "S3cr3tPa55" not in text and "dishwasher" not in text and "lowercasewords" not in text


# -- a runner that lives long, a session in a subfolder ------------------------------------------------

def test_a_dotenv_made_or_changed_while_a_lingering_runner_lives_gives_its_values(project):
    from memcli.capture.event_jobs import KINDS
    from memcli.features.work import Work

    work = Work(open_mem(), KINDS)  # what `mem queue run --linger` (the hook's runner) and `mem mcp` hold
    event = lambda call, out: claude("PostToolUse", project, tool_name="Bash", tool_use_id=call,  # noqa: E731
                                     tool_input={"command": "npm run dev"}, tool_response={"stdout": out, "stderr": ""})
    hook(json.dumps(event("b0", "README.md")))
    work.run()
    (project / ".env").write_text(ENV)  # `cp .env.example .env` and filled in, after the runner's first walk
    hook(json.dumps(event("b1", f"b1 login as app with {VALUE}")))
    work.run()
    (project / ".env").write_text("DB_PASSWORD=rotated-Xy77-pass\n")
    hook(json.dumps(event("b2", "b2 login as app with rotated-Xy77-pass")))
    work.run()
    text = stored()
    assert VALUE not in text and "rotated-Xy77-pass" not in text and text.count(REDACTED) == 2


def test_a_costly_walk_is_done_again_once_a_few_seconds_old(project, monkeypatch):
    from memcli.capture import ignored_content
    from memcli.capture.event_jobs import KINDS
    from memcli.features.work import Work

    now = [1000.0]
    monkeypatch.setattr(ignored_content, "time", type("Clock", (), {"time": staticmethod(lambda: now[0])}))
    monkeypatch.setattr(ignored_content, "CHEAP_WALK_S", 0.0)  # every walk counts as costly
    work = Work(open_mem(), KINDS)
    hook(json.dumps(claude("PostToolUse", project, tool_name="Bash", tool_use_id="b0",
                           tool_input={"command": "ls"}, tool_response={"stdout": "README.md", "stderr": ""})))
    work.run()
    (project / ".env").write_text(ENV)
    for call, later in (("b1", 1.0), ("b2", ignored_content.WALK_TTL_S + 1)):
        now[0] += later
        hook(json.dumps(claude("PostToolUse", project, tool_name="Bash", tool_use_id=call, tool_input={"command": "env"},
                               tool_response={"stdout": f"{call} login with {VALUE}", "stderr": ""})))
        work.run()
    text = stored()
    assert f"b1 login with {VALUE}" in text  # within WALK_TTL_S of a costly walk: not walked again
    assert f"b2 login with {REDACTED}" in text


@pytest.mark.parametrize("git", [False, True])
def test_a_session_in_a_subfolder_keeps_the_values_of_the_projects_dotenv_out(project, git):
    import subprocess

    if git:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".env").write_text(ENV)
    (project / "backend" / "api").mkdir(parents=True)
    bash(project / "backend" / "api", "npm run dev", f"db  | login as app with {VALUE}")
    assert VALUE not in stored()


# -- forms and places of a value -----------------------------------------------------------------------

@pytest.mark.parametrize("env, output", [
    ("DB_PASSWORD='Zq81&kx9<Lm2p>wT'\n", '"Args": ["--login", "Zq81\\u0026kx9\\u003cLm2p\\u003ewT"]'),  # Go
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE\n", '{"k":"wJalrXUtnFEMI\\/K7MDENG\\/bPxRfiCYzEXAMPLE"}'),
    ("DB_PASSWORD='Zq81\"kx9-Lm2p'\n", '{"login": "Zq81\\"kx9-Lm2p"}'),
])
def test_a_value_escaped_in_json_output_is_replaced(project, env, output):
    (project / ".env").write_text(env)
    done = bash(project, "docker inspect app", output)
    assert "Zq81" not in stored() and "wJalrXUtnFEMI" not in stored() and done[COUNTED] == 1


def test_a_value_used_as_a_key_of_a_tools_json_output_is_replaced(project):
    (project / ".env").write_text(ENV)
    done = send_and_drain(claude("PostToolUse", project, tool_name="mcp__vault__list", tool_use_id="v1",
                                 tool_input={"path": "secret/app"}, tool_response={VALUE: {"created": "2026-12-01"}}))
    assert VALUE not in stored() and done[COUNTED] == 1


def test_many_values_are_each_replaced_leftmost_and_longest(project):
    lines = [f"K{n}=value-{n:04}-Zq81" for n in range(300)] + ["LONG=value-0001-Zq81-and-more"]
    (project / ".env").write_text("\n".join(lines) + "\n")
    done = bash(project, "printenv", "a value-0001-Zq81-and-more b value-0299-Zq81 c value-0150-Zq81value-0151-Zq81")
    text = stored()
    assert "Zq81" not in text and "-and-more" not in text and done[COUNTED] == 4


def test_caps_on_what_is_read_are_counted_and_a_dotenv_is_read_first(project):
    (project / "a_certs").mkdir()
    for n in range(300):  # a TLS library's test certificates, ignored by the built-in `*.pem`
        (project / "a_certs" / f"c{n:03}.pem").write_text("not really a cert\n")
    (project / "b_service").mkdir()
    (project / "b_service" / ".env").write_text(ENV + "# " + "x" * 70_000 + "\n")  # over 64 KiB: read in part
    done = bash(project, "printenv", f"login as app with {VALUE}")
    assert VALUE not in stored()
    capped = sorted(key for key in done if key.startswith("values: not every ignored file read"))
    assert len(capped) == 2, done
    assert "drained:" in ok("status").stdout and "not every ignored file read" in ok("status").stdout


BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Zq81kx9Lm2pwT"


@pytest.mark.parametrize("env, output, leaked", [
    ("DB_PASSWORD=pa$$word-Zq81x\n", "login as app with pa$word-Zq81x", "pa$word-Zq81x"),  # compose's $$ is one $
    ('DB_PASSWORD="Zq81\\"kx9-Lm2p-77"\n', 'login as app with Zq81"kx9-Lm2p-77', 'Zq81"kx9-Lm2p-77'),  # dotenv's \"
    (f'FIREBASE_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\n{BODY}\\n-----END PRIVATE KEY-----\\n"\n',
     f"Error: invalid key line {BODY}", BODY),  # a key kept on one line, one of its lines in an error
])
def test_a_value_as_its_program_reads_it_is_replaced(project, env, output, leaked):
    (project / ".env").write_text(env)
    bash(project, "npm run dev", output)
    assert leaked not in stored().replace("\\\"", "\"")
