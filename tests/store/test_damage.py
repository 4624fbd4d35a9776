"""Hand-made files, damaged caches and hostile input: no file or cache may take mem down or hide a memory.

Each test reproduces one way a file or cache was found to break mem; the tests after it try
neighbours of the same kind.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from helpers import add, jsonl, memory_files, ok, open_mem, run, store_root
from locations import FAKE_MEM, ROOT

from memcli.core import reading, writing
from memcli.index import db as db_file
from memcli.index import stamps


def ids_listed() -> set[str]:
    return {row["id"] for row in jsonl(ok("ls", "--jsonl").stdout)}


def catalog() -> sqlite3.Connection:
    return sqlite3.connect(store_root() / ".index" / db_file.FILE)


def hand_made() -> Path:
    """Where a test puts a memory file made by hand (its folder made, whatever month it is today)."""
    path = store_root() / "memories" / "2026" / "11" / f"{VALID_ID}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def age_last_full_look() -> None:
    """As if the periodic look at every file were due (it is, a few seconds later in a real store)."""
    with catalog() as db:
        db.execute("UPDATE meta SET value = '[0, 0]' WHERE key = 'full_look'")


# -- data that goes missing ------------------------------------------------------------------------

def copied_elsewhere() -> Path:
    """The one memory file, copied into another month's folder (as a move that kept the old file
    would leave it); returns the original."""
    original = memory_files()[0]
    copy = store_root() / "memories" / "1999" / "01" / original.name
    copy.parent.mkdir(parents=True)
    shutil.copy2(original, copy)
    return original


def test_a_moved_copy_is_the_memory_once_the_original_is_deleted():
    memory_id = add("The billing service moved to Fly.io in March")
    original = copied_elsewhere()
    assert ids_listed() == {memory_id}
    original.unlink()

    assert "Fly.io" in ok("show", memory_id, "--raw").stdout
    assert ok("search", "billing Fly.io", "--jsonl").stdout.count(memory_id) == 1
    doctor = json.loads(run("doctor", "--json").stdout)
    assert not any("duplicate" in finding["message"] for finding in doctor["findings"])


def test_rm_deletes_every_copy_so_none_comes_back():
    memory_id = add("The billing service moved to Fly.io in March")
    copied_elsewhere()
    ok("ls")
    ok("rm", "-y", memory_id)
    assert ids_listed() == set()
    assert memory_files() == []


def test_a_copy_takes_over_when_the_first_file_is_given_another_id():
    first = add("The billing service moved to Fly.io in March")
    original = copied_elsewhere()
    ok("ls")
    other = "01" + "A" * 24
    original.write_text(original.read_text().replace(first, other))
    ok("doctor")  # a full look, as every command makes now and then
    assert ids_listed() == {first, other}


def rewrite_keeping_mtime(path: Path, text: str) -> None:
    """Change a file in place and put its old times back, as some editors and sync tools do."""
    before = path.stat()
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_an_edit_in_place_with_the_old_mtime_restored_is_seen():
    memory_id = add("the deploy key rotates every 90 days")
    path = memory_files()[0]
    size = path.stat().st_size
    rewrite_keeping_mtime(path, path.read_text().replace("every 90 days", "every 30 days"))
    assert path.stat().st_size == size

    age_last_full_look()
    assert "every 30 days" in ok("show", memory_id, "--raw").stdout


class Later:
    """Stands in for the `time` module of memcli.index.stamps: `ahead` seconds from now (a racy window passed)."""

    def __init__(self):
        self.ahead = 0

    def time(self) -> float:
        return time.time() + self.ahead

    def time_ns(self) -> int:
        return time.time_ns() + self.ahead * 1_000_000_000

    def sleep(self, seconds: float) -> None:
        self.ahead += seconds


def test_files_written_in_bulk_are_recorded_clean_once_their_racy_window_passed(monkeypatch):
    """What keeps the first search after an import from reading every imported file again."""
    clock = Later()
    monkeypatch.setattr(stamps, "time", clock)
    mem = open_mem()
    writing.write_each(mem, [(f"note {n} about the billing queue", None) for n in range(5)])
    with catalog() as db:
        assert {ctime for (ctime,) in db.execute("SELECT ctime_ns FROM memories")} == {stamps.RACY}

    clock.ahead = 3
    mem.settle()
    with catalog() as db:
        recorded = {path: tuple(stamp)
                    for path, *stamp in db.execute("SELECT path, mtime_ns, size, ctime_ns FROM memories")}
    on_disk = {str(p.relative_to(store_root())): (p.stat().st_mtime_ns, p.stat().st_size, p.stat().st_ctime_ns)
               for p in memory_files()}
    assert recorded == on_disk


def test_a_file_changed_right_after_mem_wrote_it_is_not_recorded_clean(monkeypatch):
    """A change in the same clock tick as the write keeps the stat; the settling reads the file again."""
    clock = Later()
    monkeypatch.setattr(stamps, "time", clock)
    mem = open_mem()
    [written] = writing.write_each(mem, [("the deploy key rotates every 90 days", None)])
    path = memory_files()[0]
    rewrite_keeping_mtime(path, path.read_text().replace("every 90 days", "every 30 days"))

    clock.ahead = 3
    mem.settle()
    age_last_full_look()
    assert "every 30 days" in ok("show", written.memory.id, "--raw").stdout


def test_the_first_search_after_a_large_import_reads_no_file(monkeypatch):
    """The import waits out the racy window of its last files and looks at every file itself, so the
    search after it finds nothing to look at (at 100k memories that look cost 1.4 s); an edit in place
    made after the import is still found by the next look at every file. A small import does not wait."""
    from memcli.index import catalog as catalog_module
    from memcli.index import changes
    from memcli.index.catalog import SETTLE_WAIT_FILES, Catalog
    from memcli.store.folder import Store

    clock = Later()  # its sleep only moves it: the racy window passes at once
    monkeypatch.setattr(stamps, "time", clock)
    monkeypatch.setattr(catalog_module, "time", clock)
    monkeypatch.setattr(changes, "time", clock)
    monkeypatch.setattr(changes, "FULL_LOOK_MIN_S", 60)  # as in a large store, where a full look costs seconds
    ok("import", "--no-compress", "-", input="".join(json.dumps({"raw": f"small note {n}"}) + "\n" for n in range(3)))
    assert clock.ahead == 0, "a small import does not wait"
    lines = "".join(json.dumps({"raw": f"note {n} about the billing queue"}) + "\n" for n in range(SETTLE_WAIT_FILES))
    ok("import", "--no-compress", "-", input=lines)
    assert clock.ahead <= 2, "it waits at most the racy window"

    looked_at, read = [], []
    scan, take_in = Store.scan, Catalog._take_in
    monkeypatch.setattr(Store, "scan", lambda self, *a, **k: [looked_at.append(f[0]) or f for f in scan(self, *a, **k)])
    monkeypatch.setattr(Catalog, "_take_in", lambda self, path, *a: read.append(path) or take_in(self, path, *a))
    assert "note 7 about the billing queue" in ok("search", "billing queue note 7", "--mode", "text").stdout
    assert (looked_at, read) == ([], [])

    path = next(p for p in memory_files() if "note 7 about" in p.read_text())
    rewrite_keeping_mtime(path, path.read_text().replace("note 7 about", "note 8 about"))
    age_last_full_look()
    assert ok("search", "billing queue note 7", "--mode", "text", "--jsonl").stdout.count("note 7 about") == 0
    assert read == [str(path.relative_to(store_root()))]


def test_doctor_looks_at_every_file_and_catches_up():
    memory_id = add("the deploy key rotates every 90 days")
    path = memory_files()[0]
    rewrite_keeping_mtime(path, path.read_text().replace("every 90 days", "every 30 days"))

    assert run("doctor").exit_code == 0
    assert "every 30 days" in ok("show", memory_id, "--raw").stdout


def test_files_deleted_while_a_look_walks_their_folder_are_left_out_not_a_crash():
    ids = [add(f"note {n} on the deploy key") for n in range(3)]
    walk = open_mem().store.stats()
    _, first, _ = next(walk)  # the folder is listed: its other files go before their stat
    for path in memory_files():
        if path.name != first:
            path.unlink()
    assert list(walk) == []
    assert ids_listed() == {first.removesuffix(".yaml")} <= set(ids)


def test_a_broken_file_repaired_in_place_is_seen():
    add("the deploy key rotates every 90 days")
    path = memory_files()[0]
    good = path.read_text()
    rewrite_keeping_mtime(path, good.replace("raw:", "raw;"))
    age_last_full_look()
    assert ids_listed() == set()
    rewrite_keeping_mtime(path, good)
    age_last_full_look()
    assert len(ids_listed()) == 1


# -- one file takes everything down ----------------------------------------------------------------

VALID_ID = "01JDQ4R8ZK3M5N7P9Q1S3T5V7X"
UNEXPECTED = {
    "unknown key holding a date": "due: 2026-12-01\n",
    "unknown key holding a time": "seen: 2026-12-01 10:00:00\n",
    "status as a list": "compression: {status: [1]}\n",
    "status mem does not know": "compression: {status: finished}\n",
    "tokens as text": "compression: {status: done, tokens: many}\n",
    "compression as a list": "compression: [done]\n",
    "created_at on a day that does not exist": "created_at: 2020-02-30\n",
    "binary value": "blob: !!binary aGVsbG8=\n",
    "set value": "things: !!set {a, b}\n",
    "binary raw": None,
    "tags as a mapping": "tags: {a: 1}\n",
    "a tag that is a mapping": "tags: [ok, {a: 1}]\n",
    "a tag that is null": "tags: [~]\n",
    "source as a list": "source: [a, b]\n",
    "written_by as a mapping": "written_by: {who: me}\n",
    "compressed as a number": "compressed: 12\n",
    "a key that is not text": "1: one\n",
    "a key that is a boolean": "on: monday\n",
    "NaN": "score: .nan\n",
    "infinity": "score: .inf\n",
    "a lone surrogate": 'note: "a \\ud800"\n',
    "a number too long to build": "big: " + "9" * 5000 + "\n",
    "a timestamp out of range": "created_at: 9999-12-31T23:59:59-12:00\n",
    "nesting too deep": "deep: " + "[" * 200 + "]" * 200 + "\n",
    "nesting deeper than the stack": "deep: " + "[" * 5000 + "]" * 5000 + "\n",
    "updated_at as a boolean": "updated_at: yes\n",
    "id as a number": None,
}


def memory_text(extra: str | None, name: str) -> str:
    raw = "raw: !!binary aGVsbG8=\n" if name == "binary raw" else "raw: a hand-made memory\n"
    head = "id: 12345\n" if name == "id as a number" else f"id: {VALID_ID}\n"
    return head + raw + (extra or "")


@pytest.mark.parametrize("name", list(UNEXPECTED))
def test_unexpected_value_is_named_and_skipped_and_others_still_work(name):
    good = add("the staging database is called pg-staging-2")
    bad = hand_made()
    bad.write_text(memory_text(UNEXPECTED[name], name))

    listed = run("ls", "--jsonl")
    assert listed.exit_code == 0
    readable = {row["id"] for row in jsonl(listed.stdout)}
    assert good in readable
    if VALID_ID not in readable:
        assert bad.name in listed.stderr  # named in a warning
    assert ok("search", "staging database", "--jsonl").stdout.count(good) == 1
    assert ok("export").stdout.count(good) == 1
    add("another memory after the bad file")
    assert run("doctor").exit_code == (0 if VALID_ID in readable else 1)  # a file it cannot read is a finding
    ok("reindex")
    assert good in ids_listed()


def test_a_date_in_an_unknown_key_is_kept_as_text():
    ok("init")
    hand_made().write_text(
        f"id: {VALID_ID}\nraw: renew the TLS certificate\ndue: 2026-12-01\n")
    exported = jsonl(ok("export").stdout)
    assert exported[0]["due"] == "2026-12-01"


def test_created_at_in_year_one_is_accepted():
    ok("init")
    folder = store_root() / "memories" / "0001" / "01"
    folder.mkdir(parents=True)
    (folder / f"{VALID_ID}.yaml").write_text(f"id: {VALID_ID}\nraw: the oldest note\ncreated_at: 0001-01-01\n")
    listed = jsonl(ok("ls", "--jsonl").stdout)
    assert listed[0]["created_at"] == "0001-01-01T00:00:00Z"


BOMB = """\
id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7X
raw: lol
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""

MERGE_BOMB = "id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7X\nraw: lol\nk0: &k0 {a0: 1, b0: 2}\n" + "".join(
    f"k{i}: &k{i} {{<<: [*k{i - 1}], x{i}: 1, y{i}: {{<<: *k{i - 1}}}}}\n" for i in range(1, 40))


@pytest.mark.parametrize("text", [BOMB, MERGE_BOMB], ids=["nested aliases", "merge keys"])
def test_a_billion_laughs_file_is_refused_at_once(text):
    good = add("the staging database is called pg-staging-2")
    path = hand_made()
    path.write_text(text)
    listed = run("ls", "--jsonl")
    assert {row["id"] for row in jsonl(listed.stdout)} == {good}
    assert "aliases" in listed.stderr


def test_an_anchor_without_alias_and_a_star_in_the_text_are_fine():
    ok("init")
    hand_made().write_text(f"id: {VALID_ID}\nraw: '**bold** and 2 * 3'\nnote: &n kept\n")
    assert ids_listed() == {VALID_ID}


def test_a_huge_memory_file_is_skipped_without_reading_it():
    good = add("the staging database is called pg-staging-2")
    ok("init")
    settings = store_root() / "mem.yaml"
    settings.write_text(settings.read_text().replace("max_input_bytes: 1048576", "max_input_bytes: 1000"))
    path = hand_made()
    path.write_text(f"id: {VALID_ID}\nraw: '" + "x" * 20_000 + "'\n")
    listed = run("ls", "--jsonl")
    assert {row["id"] for row in jsonl(listed.stdout)} == {good}
    assert "larger than 16000 bytes" in listed.stderr


# -- a damaged cache -------------------------------------------------------------------------------

def fill(count: int = 60) -> list[str]:
    """`count` memories, each with its own words, and every cache built (`mem reindex` writes the graph)."""
    lines = "\n".join(json.dumps({"raw": f"note {i} about the w{i}x project and topic{i % 7}"}) for i in range(count))
    ok("import", "--no-compress", input=lines)
    ok("reindex")
    listed = sorted(row["id"] for row in jsonl(ok("export").stdout))
    gc.collect()  # close what the commands left open in this process, as their own processes would have
    return listed


def every_command_works(expected: set[str]) -> None:
    """What a user runs after the damage: nothing crashes, nothing is missing. A command that meets the
    damage past its first look at the index rebuilds it and says so with exit 5; run again, it answers."""
    for args in (["ls", "-n", "3"], ["search", "w5x project"], ["show", sorted(expected)[0]], ["doctor"],
                 ["export"], ["add", "a note written after the damage"]):
        result = run(*args)
        if result.exit_code == 5:
            assert "has been rebuilt from the memory files; run the command again" in result.stderr
            result = run(*args)
        assert result.exit_code == 0, (args, result.exit_code, result.stderr)
    listed = ids_listed()
    assert expected <= listed and len(listed) == len(expected) + 1
    assert ok("search", "w5x project", "--jsonl", "--mode", "text").stdout.count('"score"') >= 1


NOTE_5 = "note 5 about the w5x project and topic5"  # the fake embedder puts exactly one memory nearest


def page_size() -> int:
    with catalog() as db:
        return db.execute("PRAGMA page_size").fetchone()[0]


def table_page(name: str) -> int:
    with catalog() as db:
        return db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]


@pytest.mark.parametrize("table", ["memories", "fts_data", "vectors", "meta", "broken", "folders"])
def test_noise_in_a_page_of_the_catalog_rebuilds_it(table):
    expected = set(fill())
    offset = page_size() * (table_page(table) - 1)
    with open(store_root() / ".index" / db_file.FILE, "r+b") as handle:
        handle.seek(offset)
        handle.write(os.urandom(4096))
    every_command_works(expected)


@pytest.mark.parametrize("where", ["header", "middle", "end", "truncated", "empty", "a folder", "text"])
def test_neighbours_a_catalog_file_that_is_not_a_database(where):
    expected = set(fill())
    path = store_root() / ".index" / db_file.FILE
    size = path.stat().st_size
    if where == "a folder":
        path.unlink()
        path.mkdir()
        (path / "x").write_text("x")
    elif where == "text":
        path.write_text("not a database\n")
    elif where in ("truncated", "empty"):
        os.truncate(path, size // 2 if where == "truncated" else 0)
    else:
        with open(path, "r+b") as handle:
            handle.seek({"header": 0, "middle": size // 2, "end": size - 4096}[where])
            handle.write(os.urandom(4096))
    every_command_works(expected)


@pytest.mark.parametrize("name", ["-wal", "-shm"])
def test_neighbours_noise_in_the_wal_and_shm_files(name):
    expected = set(fill())
    path = store_root() / ".index" / (db_file.FILE + name)
    path.write_bytes(os.urandom(64 * 1024))
    every_command_works(expected)


@pytest.mark.parametrize("key, value", [
    ("full_look", "not json"), ("full_look", "[1, 2, 3]"), ("embed_dim", "many"), ("embed_dim", "7"),
    ("hnsw_deleted", "x"), ("hnsw_file", "{}"), ("hnsw_file", "nonsense"), ("schema", "99"),
    ("embed_model", "another-model"),
])
def test_neighbours_a_meta_row_that_makes_no_sense(key, value):
    expected = set(fill())
    with catalog() as db:
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
    every_command_works(expected)


@pytest.mark.parametrize("damage", ["a record that is not JSON", "a record of the wrong shape", "a dropped table",
                                    "a dropped meta table"])
def test_neighbours_rows_that_make_no_sense(damage):
    expected = set(fill())
    with catalog() as db:
        if damage == "a record that is not JSON":
            db.execute("UPDATE memories SET record = '{not json' WHERE label = 5")
        elif damage == "a record of the wrong shape":
            db.execute("UPDATE memories SET record = '[1, 2]' WHERE label = 6")
        elif damage == "a dropped table":
            db.execute("DROP TABLE vectors")
        else:
            db.execute("DROP TABLE meta")
    every_command_works(expected)


@pytest.mark.parametrize("what", [".index as a file", "lock as a folder", "graph file as a folder"])
def test_neighbours_something_else_where_a_cache_should_be(what):
    expected = set(fill())
    index = store_root() / ".index"
    if what == ".index as a file":
        shutil.rmtree(index)
        index.write_text("x")
    elif what == "lock as a folder":
        (index / "lock").unlink()
        (index / "lock").mkdir()
    else:
        (index / db_file.HNSW_FILE).unlink()
        (index / db_file.HNSW_FILE).mkdir()
    every_command_works(expected)


def test_a_restored_older_graph_file_is_not_used():
    old = fill(50)
    saved = store_root() / "old.hnsw"
    shutil.copy2(store_root() / ".index" / db_file.HNSW_FILE, saved)
    ok("rm", "-y", *old)
    ok("import", "--no-compress", input="\n".join(
        json.dumps({"raw": f"fresh {word} entry"}) for word in ("kiwi", "mango", "papaya", "quince")))
    ok("reindex")
    shutil.copy2(saved, store_root() / ".index" / db_file.HNSW_FILE)

    result = ok("search", "papaya", "--mode", "vector", "--jsonl")
    assert "papaya" in jsonl(result.stdout)[0]["content"]
    assert "vector index" in result.stderr
    assert "vector index" not in ok("search", "papaya", "--mode", "vector").stderr


def test_a_damaged_graph_file_never_reaches_hnswlib():
    fill(200)
    path = store_root() / ".index" / db_file.HNSW_FILE
    assert path.stat().st_size > 60_000
    with open(path, "r+b") as handle:
        handle.seek(50_000)
        handle.write(b"\xff" * 512)
    result = ok("search", NOTE_5, "--mode", "vector", "--jsonl")
    assert "w5x" in jsonl(result.stdout)[0]["content"]
    assert "damaged" in result.stderr


def test_a_truncated_graph_file_is_rebuilt_once_not_warned_about_forever():
    fill(200)
    path = store_root() / ".index" / db_file.HNSW_FILE
    os.truncate(path, 1000)
    first = ok("search", "w5x project", "--mode", "vector")
    assert "rebuilding" in first.stderr
    second = ok("search", "w5x project", "--mode", "vector")
    assert second.stderr == ""
    assert ok("doctor").exit_code == 0


def test_damage_that_keeps_the_stat_is_found_by_doctor():
    fill(200)
    path = store_root() / ".index" / db_file.HNSW_FILE
    before = path.stat()
    with open(path, "r+b") as handle:
        handle.seek(50_000)
        handle.write(b"\xff" * 512)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with catalog() as db:  # as if its ctime had not moved either (a bit flipped on disk)
        record = json.loads(db.execute("SELECT value FROM meta WHERE key = 'hnsw_file'").fetchone()[0])
        record["ctime_ns"] = path.stat().st_ctime_ns
        db.execute("UPDATE meta SET value = ? WHERE key = 'hnsw_file'", (json.dumps(record),))
    doctor = ok("doctor")
    assert "vector index was damaged" in doctor.stdout
    assert "w5x" in jsonl(ok("search", NOTE_5, "--mode", "vector", "--jsonl").stdout)[0]["content"]


# -- small -----------------------------------------------------------------------------------------

def test_stale_temp_files_are_reported_and_removed_by_doctor_fix():
    add("the deploy key rotates every 90 days")
    folder = memory_files()[0].parent
    dead = [folder / f".{VALID_ID}.yaml.4194304.0badf00d.tmp", store_root() / ".index" / ".vectors.hnsw.4194305.tmp"]
    live = folder / f".{VALID_ID}.yaml.{os.getpid()}.0badf00d.tmp"
    for path in [*dead, live]:
        path.write_text("half a write")
    doctor = run("doctor")
    assert doctor.exit_code == 1
    assert "2 temp files left by interrupted writes" in doctor.stdout and "mem doctor --fix" in doctor.stdout
    ok("doctor", "--fix")
    assert not any(path.exists() for path in dead)
    assert live.exists()
    assert ok("doctor").exit_code == 0


# -- one bad input aborts a command ----------------------------------------------------------------

BAD_LINES = {
    "a time that has no UTC form": b'{"raw": "x1", "created_at": "9999-12-31T23:59:59-12:00"}',
    "a lone surrogate": b'{"raw": "a \\ud800"}',
    "invalid UTF-8": b'{"raw": "caf\xe9"}',
    "a lone surrogate in a tag": b'{"raw": "x2", "tags": ["\\udcff"]}',
    "a number too long": b'{"raw": "x3", "n": ' + b"9" * 5000 + b"}",
    "nesting deeper than the stack": b'{"raw": "x4", "n": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "a set of year one moments": b'{"raw": "x5", "created_at": "0001-01-01T00:00:00+01:00"}',
    "NaN": b'{"raw": "x6", "score2": NaN}',
    "raw as a list": b'{"raw": ["x7"]}',
}


def test_one_bad_import_line_is_reported_and_the_rest_imported():
    good = [json.dumps({"raw": f"good line {n}"}).encode() for n in range(3)]
    lines = [good[0], *BAD_LINES.values(), good[1], b"\xff\xfe\x00garbage", good[2]]
    result = run("import", "-", input=b"\n".join(lines) + b"\n")
    assert result.exit_code == 3  # some lines were invalid
    for number in range(2, len(BAD_LINES) + 2):
        assert f"line {number}:" in result.stderr
    assert "imported 3" in result.stderr
    assert {row["raw"] for row in jsonl(ok("export").stdout)} == {"good line 0", "good line 1", "good line 2"}


def test_an_import_line_over_the_limit_is_skipped_unread():
    ok("init")
    settings = store_root() / "mem.yaml"
    settings.write_text(settings.read_text().replace("max_input_bytes: 1048576", "max_input_bytes: 100"))
    lines = [json.dumps({"raw": "before"}), json.dumps({"raw": "x" * 5000}), json.dumps({"raw": "after"})]
    result = run("import", "-", input="\n".join(lines))
    assert "line 2: longer than 1600 bytes" in result.stderr
    assert {row["raw"] for row in jsonl(ok("export").stdout)} == {"before", "after"}


@pytest.mark.parametrize("args", [
    ["add", "caf\udce9"], ["add", "text", "-t", "tag\udcff"], ["add", "text", "--source", "notes/\udcff.md"],
    ["search", "caf\udce9"], ["ls", "--source", "\udcff*"],
])
def test_text_arguments_that_are_not_utf8_are_refused_clearly(args):
    add("something already stored")
    result = run(*args)
    assert result.exit_code == 2
    assert "not valid Unicode" in result.stderr


def test_a_file_name_that_is_not_utf8_is_refused_clearly(tmp_path):
    name = os.fsencode(tmp_path) + b"/caf\xe9.md"
    with open(name, "w") as handle:
        handle.write("a note in a file with a Latin-1 name")
    result = run("add", "--file", os.fsdecode(name))
    assert result.exit_code == 2 and "not valid Unicode" in result.stderr
    assert ok("add", "--file", os.fsdecode(name), "--source", "notes/cafe.md").stdout.strip()


@pytest.mark.parametrize("args", [
    ["search", "note", "-k", "99999999999999999999"], ["ls", "-n", "99999999999999999999"],
    ["context", "note", "-k", "99999999999999999999"],
])
def test_huge_limits_mean_everything(args):
    first, second = add("a note about kiwis"), add("a note about mangos")
    result = run(*args, "--jsonl") if args[0] != "context" else run(*args)
    assert result.exit_code == 0, result.stderr
    if args[0] != "context":
        assert {row["id"] for row in jsonl(result.stdout)} == {first, second}


@pytest.mark.parametrize("when", ["99999999d", "99999999999999999999y", "0001-01-01T00:00+05:00"])
def test_times_out_of_range_are_usage_errors(when):
    add("a note")
    result = run("ls", "--since", when)
    assert result.exit_code == 2
    assert "0001-9999" in result.stderr


# -- small -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", ["/dev/null", "fifo"])
def test_import_reads_dev_null_and_fifos(source, tmp_path):
    if source == "fifo":
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        writer = os.fork()
        if writer == 0:
            with open(fifo, "w") as handle:
                handle.write(json.dumps({"raw": "through a fifo"}) + "\n")
            os._exit(0)
        source = str(fifo)
    result = run("import", source)
    if source != "/dev/null":
        os.waitpid(writer, 0)
    assert result.exit_code == 0, result.stderr
    assert ("imported 1" if source != "/dev/null" else "imported 0") in result.stderr


def test_import_of_a_folder_or_a_missing_file_says_so(tmp_path):
    assert "is a directory" in run("import", tmp_path).stderr
    assert "no such file" in run("import", tmp_path / "missing.jsonl").stderr


def test_created_at_in_year_one_is_imported_as_given():
    ok("import", "-", input=json.dumps({"raw": "an old note", "created_at": "0001-01-01"}))
    assert jsonl(ok("export").stdout)[0]["created_at"] == "0001-01-01T00:00:00Z"


def test_a_terminal_never_gets_stored_escape_sequences(tmp_path):
    import pty
    import subprocess
    import sys

    memory_id = add("before \x1b]0;owned\x07 \x1b[2J after \u202e", "-t", "t\x1b[31mred")
    primary, secondary = pty.openpty()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for args in (["show", memory_id], ["ls"]):
        done = subprocess.run([sys.executable, "-m", "memcli", *args], stdout=secondary, stderr=subprocess.PIPE,
                              env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        shown = os.read(primary, 65536).decode()
        assert "\x1b]0;" not in shown and "\x1b[2J" not in shown and "\x1b[31mred" not in shown
        assert "\u202e" not in shown
        assert "\\x1b]0;owned\\x07" in shown
    os.close(primary)
    os.close(secondary)
    piped = ok("show", memory_id, "--raw").stdout
    assert "\x1b]0;owned\x07" in piped  # exact when piped, as a script expects


# -- MCP -------------------------------------------------------------------------------------------

def test_malformed_mcp_requests_get_json_rpc_errors_and_the_server_goes_on():
    import select
    import subprocess
    import sys
    import time

    env = {key: os.environ[key] for key in ("MEM_DIR", "MEM_MODELS_DIR", "MEM_CONFIG_DIR")}
    server = subprocess.Popen([sys.executable, str(FAKE_MEM), "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env | {"PYTHONPATH": str(ROOT)})
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        b"{bad json",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": "memory_list"},
        b"[1, 2]",
        b"\xff\xfe not UTF-8",
        {"jsonrpc": "2.0", "id": "four", "method": "tools/call", "params": {"name": 5}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    for line in lines:
        server.stdin.write(line if isinstance(line, bytes) else json.dumps(line).encode())
        server.stdin.write(b"\n")
    server.stdin.flush()
    replies, buffer, deadline = [], b"", time.monotonic() + 60
    try:
        while time.monotonic() < deadline and not any(reply.get("id") == 3 for reply in replies):
            ready, _, _ = select.select([server.stdout], [], [], 1)
            if ready:
                chunk = os.read(server.stdout.fileno(), 65536)
                if not chunk:
                    break
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                replies += [json.loads(line) for line in complete if line.strip()]
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    errors = [(reply["id"], reply["error"]["code"]) for reply in replies if "error" in reply]
    assert errors.count((None, -32700)) == 2  # the line that is not JSON, the line that is not UTF-8
    assert (2, -32600) in errors and (None, -32600) in errors
    assert any(reply.get("id") == "four" for reply in replies)  # answered, one way or another
    assert any(reply.get("id") == 3 and "tools" in reply.get("result", {}) for reply in replies)


# -- neighbours: the other files a store shares ----------------------------------------------------

@pytest.mark.parametrize("settings, message", [
    ("a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n", "aliases"),
    ("max_input_bytes: .inf\n", "max_input_bytes"),
    ("max_input_bytes: 99999999999999999999999\n", "at most"),
    ("compress_min_chars: 2020-02-30\n", "mem.yaml"),
])
def test_a_hostile_mem_yaml_is_a_clear_error_not_a_crash(settings, message):
    ok("init")
    (store_root() / "mem.yaml").write_text(settings)
    result = run("add", "a note")
    assert result.exit_code == 5
    assert message in result.stderr


@pytest.mark.parametrize("content", ["[" * 100_000 + "]" * 100_000, '{"seq": ' + "9" * 5000 + "}"])
def test_a_thread_message_file_that_cannot_be_read_does_not_crash_the_thread(content):
    thread_id = ok("thread", "new").stdout.strip()
    ok("thread", "append", thread_id, "--role", "user", "hello")
    folder = store_root() / "threads" / thread_id
    (folder / f"2-{VALID_ID}.json").write_text(content)
    result = run("thread", "show", thread_id, "--jsonl")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_a_batch_search_names_a_query_line_that_is_not_utf8_and_runs_the_others():
    memory_id = add("the kiwi harvest starts in May")
    result = run("search", "-", input=b"kiwi\n\xff\xfe bad\nharvest\n")
    assert result.exit_code == 0
    assert "query line 2: not valid UTF-8" in result.stderr
    assert [row["query"] for row in jsonl(result.stdout) if row["id"] == memory_id] == ["kiwi", "harvest"]


def test_files_that_change_between_the_look_and_the_lock_are_taken_as_they_are_then(monkeypatch):
    """A look finds changes without the store's lock, then takes them in under it; whatever another
    process did in between (here: removed one new file and rewrote the other) is what gets recorded."""
    import contextlib

    kept = add("the first note")
    mem = open_mem()
    mem.refresh()
    vanishing, rewritten = hand_made(), hand_made().with_name("01JDQ4R8ZK3M5N7P9Q1S3T5V7Y.yaml")
    vanishing.write_text(f"id: {VALID_ID}\ncreated_at: '2026-11-02T03:04:05Z'\nraw: pulled then deleted\n")
    rewritten.write_text("id: 01JDQ4R8ZK3M5N7P9Q1S3T5V7Y\ncreated_at: '2026-11-02T03:04:05Z'\nraw: first words\n")
    real_lock = mem.store.lock

    @contextlib.contextmanager
    def after_another_process():
        vanishing.unlink()
        rewritten.write_text(rewritten.read_text().replace("first words", "second words, longer"))
        with real_lock():
            yield

    monkeypatch.setattr(mem.store, "lock", after_another_process)
    mem.refresh()
    monkeypatch.undo()
    assert {m.id: m.raw for m in reading.listing(mem)} == {kept: "the first note",
                                                  "01JDQ4R8ZK3M5N7P9Q1S3T5V7Y": "second words, longer"}
    assert "unreadable" not in run("ls").stderr


def test_a_catalog_made_before_the_stamp_index_gets_it_in_place_and_keeps_its_memories():
    """The index a look at every file reads is added to an older catalog when it is opened; nothing is
    rebuilt (a rebuild would embed every memory again)."""
    memory_id = add("the deploy key rotates every 90 days")
    with catalog() as db:
        db.execute("DROP INDEX memories_stamp")
        labels = db.execute("SELECT label FROM vectors").fetchall()
    result = ok("search", "deploy key", "--jsonl")
    assert memory_id in result.stdout and "rebuilding" not in result.stderr
    with catalog() as db:
        plan = db.execute("EXPLAIN QUERY PLAN SELECT path, mtime_ns, size, ctime_ns FROM memories").fetchall()
        assert "COVERING INDEX memories_stamp" in str(plan)
        assert db.execute("SELECT label FROM vectors").fetchall() == labels != []


@pytest.mark.parametrize("name", ["lock", "catalog.sqlite", "vectors-appending"])
def test_a_link_a_commit_put_in_the_index_folder_is_taken_out_not_written_through(tmp_path, name):
    ok("init")
    bashrc = tmp_path / ".bashrc"
    bashrc.write_text("alias ll='ls -l'\n")
    index = store_root() / ".index"
    index.mkdir(exist_ok=True)
    (index / name).symlink_to(bashrc)
    add("the staging database listens on port 5433")
    assert bashrc.read_text() == "alias ll='ls -l'\n"
    assert not (index / name).is_symlink()
    assert "5433" in ok("search", "staging database port", "--raw").stdout
