"""The scripts in examples/ run as a user would run them, with tests/support/fake_mem.py as the `mem` command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import jsonl, ok
from locations import FAKE_MEM as FAKE_MEM_SCRIPT
from locations import ROOT

EXAMPLES = ROOT / "examples"
FAKE_MEM = f"env PYTHONPATH={ROOT} {sys.executable} {FAKE_MEM_SCRIPT}"
DAY = re.compile(r"^\d{1,2} [A-Z][a-z]{2} \d{4}$")


def run_example(*command, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    done = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=os.environ | {"MEM": FAKE_MEM})
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_pipelines_turn_git_history_into_memories_and_json_into_text(tmp_path):
    repo = tmp_path / "project"
    subjects = ["Rotate proxies when Amazon returns 503", "Move billing from Heroku to Fly.io",
                "Add retry with exponential backoff to the scraper", "Document the release checklist"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    for subject in subjects:
        (repo / "log.txt").open("a").write(subject + "\n")
        subprocess.run(["git", "-C", str(repo), "add", "log.txt"], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=dev", "-c", "user.email=dev@example.com",
                        "commit", "-q", "-m", subject], check=True)

    done = run_example("bash", EXAMPLES / "pipelines.sh", repo)
    out = done.stdout.splitlines()
    assert "imported 3, skipped 1 already stored, 0 invalid" in done.stderr  # the last commit was added first
    assert out[out.index("$ mem ls --tag git --jsonl | jq -s length") + 1] == "4"
    search = next(i for i, line in enumerate(out) if line.startswith("$ mem search \""))
    first = out[search + 1].split("\t")
    assert first[0] == "100" and first[2] == subjects[-1]
    assert [line for line in out if "  ->  " in line and not line.startswith("$")] == [
        "Document the release...  ->  Document the release checklist",
        "Add retry with...  ->  Add retry with exponential backoff to the scraper",
        "Move billing from...  ->  Move billing from Heroku to Fly.io"]
    block = out[next(i for i, line in enumerate(out) if line.startswith("$ mem context")) + 1:]
    # Only what matches the query is packed: the other commits score below the default min_score.
    assert len(block) == 2 and DAY.match(block[0]) and block[1] == "Document the release checklist"
    assert not list(tmp_path.glob("**/pipelines-store"))
    assert ok("ls", "--jsonl").stdout == ""  # the user's own store was not touched


def test_team_store_shares_memories_through_a_bare_repository():
    out = run_example("bash", EXAMPLES / "team-store.sh").stdout
    sections = {part.split("\n", 1)[0]: part.split("\n", 1)[1] for part in out.split("\n== ")[1:]}

    def section(title: str) -> str:
        return next(body for head, body in sections.items() if head.startswith(title))

    assert [line for line in section("a bare repository").splitlines() if line.startswith(".mem/")] == [
        ".mem/.gitattributes", ".mem/.gitignore", ".mem/mem.yaml"]
    assert "Amazon blocks IPs" in section("bob finds alice's memory")  # its compressed form
    assert "Billing moved from Heroku" in section("alice pulls and finds bob's")
    assert section("alice deletes hers").strip() == "(nothing found)"
    doctor = section("bob checks his store")
    assert "ok    git          in a git repository; .index/ is ignored and not committed" in doctor
    assert "FAIL" not in doctor


def test_the_desktop_assistant_configuration_starts_a_working_server():
    config = json.loads((EXAMPLES / "mcp" / "claude_desktop_config.json").read_text())
    assert config == {"mcpServers": {"mem": {"command": "mem", "args": ["mcp"]}}}
    out = run_example(sys.executable, EXAMPLES / "mcp" / "try_client.py").stdout.splitlines()
    assert out[0] == f"server: {FAKE_MEM} mcp"
    assert out[1] == ("tools: memory_write, memory_search, memory_list, memory_get, memory_delete, "
                      "memory_context, memory_update, thread_append, thread_context, thread_list")
    memory_id = re.match(r"memory_write -> (\w+) written_by=mcp:try-client duplicate=False$", out[2]).group(1)
    assert re.match(rf"memory_search -> {memory_id} score=[01]\.\d{{3}}: The design review", out[3])
    assert re.match(r"memory_context -> \d+ of 40 tokens:$", out[4]) and DAY.match(out[5])
    assert out[6].startswith("The design review")
    assert out[7].startswith("memory_get of an unknown id -> error: ") and "no memory" in out[7]
    stored = jsonl(ok("export").stdout)
    assert [(m["id"], m["written_by"]) for m in stored] == [(memory_id, "mcp:try-client")]


@pytest.mark.models
def test_make_demo_runs_on_the_real_models_and_each_search_finds_its_note(real_models):
    """What `make demo` runs: a search that comes back empty stops the script (set -e) on a new user's screen."""
    done = subprocess.run(["bash", EXAMPLES / "demo.sh"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=os.environ | {"MEM": f"{sys.executable} -m memcli"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    hosting = done.stdout.split('mem search "database hosting"')[1].splitlines()[1]
    assert json.loads(hosting)["tags"] == ["infra"]
    blocked = done.stdout.split('mem search "how do we avoid getting blocked"')[1].splitlines()[1]
    assert "#scraper" in blocked
