"""`mem export` then `mem import` as the README's backup line does it: nothing stored is lost on the way,
threads (messages and their summaries) and memories stored twice on purpose included."""

from __future__ import annotations

import json

from helpers import add, jsonl, ok, run
from thread_helpers import chat, new_thread, replay


def thread_state(*args) -> list:
    """Every thread with every message on disk and what `thread show` prints (summaries first). The time
    of a thread's last activity is left out: it is its last message file's, which a copy writes anew."""
    state = []
    for info in json.loads(ok(*args, "thread", "ls", "--json").stdout):
        every = jsonl(ok(*args, "thread", "show", info["id"], "--all", "--jsonl").stdout)
        shown = jsonl(ok(*args, "thread", "show", info["id"], "--jsonl").stdout)
        state.append(({k: v for k, v in info.items() if k != "updated_at"}, every, shown))
    return sorted(state, key=lambda item: item[0]["id"])


def test_a_restored_thread_was_last_active_when_its_last_message_was_written(tmp_path):
    thread_id = new_thread()
    replay(thread_id, [{"role": "user", "content": "Book the Sintra hotel", "created_at": "2025-03-01T10:00:00Z"}])
    newer = new_thread()
    ok("thread", "append", newer, "Porto on Friday")
    backup = tmp_path / "backup.jsonl"
    backup.write_text(ok("export").stdout)
    copy = tmp_path / "copy"
    ok("--dir", copy, "import", backup)
    listed = json.loads(ok("--dir", copy, "thread", "ls", "--json").stdout)
    assert [info["id"] for info in listed] == [newer, thread_id]  # most recently active first
    assert listed[1]["updated_at"] == "2025-03-01T10:00:00Z"


def test_a_backup_made_as_the_readme_says_keeps_every_thread_with_its_messages_and_summaries(tmp_path):
    folded = new_thread("--title", "Lisbon trip")
    replay(folded, chat(11))  # the oldest six fold into a summary memory
    fresh = new_thread()
    ok("thread", "append", fresh, "--role", "user", "--name", "Rui", "Porto on Friday, the 14:05 train")
    add("A memory beside the threads", "-t", "misc")
    before = thread_state()
    assert before[0][2][0].get("summary") or before[1][2][0].get("summary"), "a thread has a summary to carry"

    backup = tmp_path / "backup.jsonl"
    backup.write_text(ok("export").stdout)
    copy = tmp_path / "copy"
    result = ok("--dir", copy, "import", backup)
    assert "2 threads" in result.stderr and "12 messages" in result.stderr

    assert thread_state("--dir", copy) == before
    assert ok("--dir", copy, "export").stdout == backup.read_text()
    again = ok("--dir", copy, "import", backup, "--json")
    assert json.loads(again.stdout)["imported"] == 0 and thread_state("--dir", copy) == before


def test_a_message_holding_a_secret_is_redacted_on_import_like_any_write(tmp_path):
    thread_id = new_thread()
    ok("thread", "append", thread_id, "The deploy went fine today")
    lines = jsonl(ok("export").stdout)
    message = next(line for line in lines if line.get("type") == "message")
    message["content"] = "the key is AKIAIOSFODNN7EXAMPLE"
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    copy = tmp_path / "copy"
    result = ok("--dir", copy, "import", source)
    shown = jsonl(ok("--dir", copy, "thread", "show", thread_id, "--jsonl").stdout)
    assert "AKIA" not in json.dumps(shown) and "[REDACTED:" in shown[0]["content"]
    assert "redacted" in result.stderr


def test_memories_stored_again_with_allow_duplicate_all_come_back(tmp_path):
    first = add("Standup moved to 9:30 on Mondays", "-t", "team")
    second = ok("add", "Standup moved to 9:30 on Mondays", "--allow-duplicate", "-t", "team").stdout.strip()
    assert first != second
    backup = tmp_path / "backup.jsonl"
    backup.write_text(ok("export").stdout)
    copy = tmp_path / "copy"
    result = ok("--dir", copy, "import", backup, "--json")
    assert json.loads(result.stdout)["imported"] == 2
    assert [r["id"] for r in jsonl(ok("--dir", copy, "export").stdout)] == [r["id"] for r in jsonl(backup.read_text())]


def test_a_text_already_in_the_store_under_another_id_is_still_skipped(tmp_path):
    add("Standup moved to 9:30 on Mondays")
    backup = tmp_path / "backup.jsonl"
    backup.write_text(ok("export").stdout)
    copy = tmp_path / "copy"
    ok("--dir", copy, "add", "standup moved to 9:30   on mondays")
    result = ok("--dir", copy, "import", backup, "--json")
    assert json.loads(result.stdout)["duplicates"] == 1
    assert len(jsonl(ok("--dir", copy, "export").stdout)) == 1


def test_an_export_with_a_filter_writes_only_the_memories_it_chose():
    thread_id = new_thread()
    ok("thread", "append", thread_id, "a message")
    add("tagged one", "-t", "keep")
    lines = jsonl(ok("export", "-t", "keep").stdout)
    assert [line.get("raw") for line in lines] == ["tagged one"]


def test_a_message_line_of_an_unknown_shape_is_reported_with_its_line_number(tmp_path):
    thread_id = new_thread()
    ok("thread", "append", thread_id, "hello")
    lines = ok("export").stdout.splitlines()
    bad = json.loads(lines[-1])
    bad["role"] = "narrator"
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines[:-1] + [json.dumps(bad)]) + "\n")
    result = run("--dir", tmp_path / "copy", "import", source)
    assert result.exit_code == 3 and f"line {len(lines)}" in result.stderr and "narrator" in result.stderr


def test_thread_lines_that_would_write_outside_their_folder_are_refused_by_line(tmp_path):
    thread_id = new_thread()
    ok("thread", "append", thread_id, "hello")
    good = jsonl(ok("export").stdout)
    message = next(line for line in good if line.get("type") == "message")
    hostile = [{**message, "seq": 10 ** 30}, {**message, "seq": True}, {**message, "id": "../../../escape"},
               {**message, "thread": "../../x"}, {"type": "thread", "id": "../x", "created_at": "2026-01-01"}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in good + hostile))
    copy = tmp_path / "copy"
    result = run("--dir", copy, "import", source)
    assert result.exit_code == 3
    for number in range(len(good) + 1, len(good) + len(hostile) + 1):
        assert f"line {number}:" in result.stderr
    assert sorted(p.name for p in (copy / "threads").iterdir()) == [thread_id]
    assert not list(tmp_path.glob("**/escape*")) and not (tmp_path / "x").exists()
