"""Search through the CLI with the fake embedder: what a user sees after adds, edits, git and damage."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import add, jsonl, memory_files, ok, open_mem, run, store_root

from memcli.core import reading
from memcli.errors import ModelError
from memcli.index import vectors
from memcli.store import ids

NOTES = {
    "proxy": "Amazon blocks IPs after about 30 requests per second, so the scraper rotates proxies",
    "billing": "We moved the billing service from Heroku to Fly.io in March",
    "linting": "I prefer uv for dependency management and ruff for linting",
    "cat": "My cat Whiskers likes tuna and sleeps on the keyboard",
}


def add_notes():
    return {key: add(text, "-t", key) for key, text in NOTES.items()}


def ids_of(stdout: str) -> list[str]:
    return [row["id"] for row in jsonl(stdout)]


@pytest.mark.parametrize("mode", ["hybrid", "vector", "text"])
def test_add_then_search_finds_it(mode):
    added = add_notes()
    result = ok("search", "billing service Heroku", "--mode", mode, "--jsonl")
    rows = jsonl(result.stdout)
    assert rows[0]["id"] == added["billing"]
    assert rows[0]["content"] == "We moved billing service from Heroku to Fly.io in March"  # the fake's compressed form
    assert set(rows[0]) == {"id", "content", "optimized", "tags", "created_at", "score"}
    raw = jsonl(ok("search", "billing service Heroku", "--mode", mode, "--jsonl", "--raw").stdout)
    assert raw[0]["content"] == NOTES["billing"]
    assert all(rows[i]["score"] >= rows[i + 1]["score"] for i in range(len(rows) - 1))


def test_search_exit_codes_and_human_output():
    add_notes()
    found = ok("search", "whiskers tuna")
    assert "score" in found.stdout and "Whiskers" in found.stdout
    nothing = run("search", "zebra xylophone quantum", "--mode", "text")
    assert nothing.exit_code == 1 and nothing.stdout == ""
    assert run("search", "   ").exit_code == 2
    assert run("search", "x", "--mode", "fuzzy").exit_code == 2
    assert run("search", "anything", "--mode", "text").exit_code == 1


def test_search_on_a_store_that_does_not_exist_finds_nothing():
    result = run("search", "anything")
    assert result.exit_code == 1
    assert not store_root().exists()


def test_raw_and_limit_and_min_score():
    added = add_notes()
    rows = jsonl(ok("search", "scraper proxies", "-k", "1", "--raw", "--jsonl").stdout)
    assert len(rows) == 1 and rows[0]["id"] == added["proxy"] and "content_raw" not in rows[0]
    high = jsonl(ok("search", "scraper proxies", "--min-score", "0.5", "--jsonl").stdout)
    assert [r["id"] for r in high] == [added["proxy"]]
    assert run("search", "scraper proxies", "--mode", "vector", "--min-score", "1.5").exit_code == 1


def test_filters_narrow_the_results():
    added = add_notes()
    assert ids_of(ok("search", "the", "--mode", "vector", "-t", "cat", "--jsonl").stdout) == [added["cat"]]
    old = {"id": ids.new_id(), "created_at": "2024-05-01T10:00:00Z", "raw": "an old billing note about invoices",
           "source": "archive/2024.md"}
    ok("import", input=json.dumps(old))
    assert ids_of(ok("search", "billing", "--until", "2024-12-31", "--jsonl").stdout) == [old["id"]]
    assert old["id"] not in ids_of(ok("search", "billing", "--since", "2025-01-01", "--jsonl").stdout)
    assert ids_of(ok("search", "billing", "--source", "archive/*", "--jsonl").stdout) == [old["id"]]


def test_batch_queries_from_stdin_write_jsonl_with_the_query():
    added = add_notes()
    result = ok("search", "-", "-k", "1", input="cat tuna\n\nbilling Heroku\n")
    rows = jsonl(result.stdout)
    assert [(r["query"], r["id"]) for r in rows] == [("cat tuna", added["cat"]), ("billing Heroku", added["billing"])]
    assert run("search", "-", "--mode", "text", input="zebra xylophone\n").exit_code == 1


def test_changes_behind_mems_back_reach_the_index():
    added = add_notes()
    files = {p.stem: p for p in memory_files()}
    edited = files[added["linting"]]
    edited.write_text(edited.read_text().replace("ruff for linting", "black for formatting"))
    files[added["cat"]].unlink()
    new_id = ids.new_id()
    copied = store_root() / "memories" / "2026" / "01" / f"{new_id}.yaml"
    copied.parent.mkdir(parents=True, exist_ok=True)
    copied.write_text(f"id: {new_id}\ncreated_at: '2026-01-02T03:04:05Z'\nraw: Kubernetes cluster upgrade to 1.31\n")
    for mode in ("text", "vector"):
        assert ids_of(ok("search", "black formatting", "--mode", mode, "--jsonl").stdout)[0] == added["linting"]
        assert added["cat"] not in ids_of(run("search", "whiskers tuna", "--mode", mode, "--jsonl").stdout)
        assert ids_of(ok("search", "kubernetes upgrade", "--mode", mode, "--jsonl").stdout)[0] == new_id
    assert added["linting"] not in ids_of(run("search", "ruff", "--mode", "text", "--jsonl").stdout)


def test_a_deleted_or_damaged_index_is_rebuilt():
    added = add_notes()
    shutil.rmtree(store_root() / ".index")
    assert ids_of(ok("search", "billing Heroku", "--jsonl").stdout)[0] == added["billing"]
    (store_root() / ".index" / "catalog.sqlite").write_bytes(b"\x00garbage" * 512)
    assert ids_of(ok("search", "billing Heroku", "--jsonl").stdout)[0] == added["billing"]


def test_two_stores_merged_by_copying_files(tmp_path):
    mine = add_notes()
    other = tmp_path / "other"
    theirs = ok("--dir", other, "add", "Postgres 16 upgrade is scheduled for Friday").stdout.strip()
    ok("--dir", other, "search", "postgres")
    for path in (other / "memories").rglob("*.yaml"):
        target = store_root() / path.relative_to(other)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    assert ids_of(ok("search", "postgres upgrade friday", "--jsonl").stdout)[0] == theirs
    assert ids_of(ok("search", "billing Heroku", "--jsonl").stdout)[0] == mine["billing"]
    assert len(jsonl(ok("ls", "--jsonl").stdout)) == 5


def test_a_broken_file_does_not_stop_search():
    added = add_notes()
    (store_root() / "memories" / "2026" / "11").mkdir(parents=True, exist_ok=True)
    broken = store_root() / "memories" / "2026" / "11" / "01KZZZZZZZZZZZZZZZZZZZZZZZ.yaml"
    broken.write_text("{{{ not yaml")
    result = ok("search", "billing Heroku", "--jsonl")
    assert ids_of(result.stdout)[0] == added["billing"]
    assert broken.name in result.stderr


def test_deleting_with_rm_removes_from_results():
    added = add_notes()
    ok("rm", "-y", added["cat"])
    assert added["cat"] not in ok("search", "whiskers tuna keyboard", "--jsonl", "--mode", "vector").stdout


def test_the_graph_fold_keeps_results_right(monkeypatch):
    monkeypatch.setattr(vectors, "FOLD_AT", 3)
    added = add_notes()
    ok("search", "anything at all", "--min-score", "0")
    assert (store_root() / ".index" / "vectors.hnsw").is_file()
    ok("rm", "-y", added["billing"])
    more = [add(f"extra note number {n} about gardening tomatoes") for n in range(4)]
    rows = ids_of(ok("search", "billing service Heroku", "--mode", "vector", "-k", "10", "--jsonl").stdout)
    assert added["billing"] not in rows
    assert set(more) <= set(ids_of(ok("search", "gardening tomatoes", "--mode", "vector", "--jsonl").stdout))
    (store_root() / ".index" / "vectors.hnsw").write_bytes(b"broken graph")
    assert ids_of(ok("search", "whiskers tuna", "--mode", "vector", "--jsonl").stdout)[0] == added["cat"]


def test_a_different_embedding_model_means_a_full_rebuild(use_providers, fakes):
    _, embedder = fakes
    added = add_notes()
    ok("search", "billing")

    class Other(type(embedder)):
        model_id = "another-model"
        dim = 256

    use_providers(embedder=lambda ref: Other())
    result = ok("search", "billing Heroku", "--mode", "vector", "--jsonl")
    assert "embedding changed" in result.stderr
    assert ids_of(result.stdout)[0] == added["billing"]


def test_reindex_rebuilds_from_files():
    add_notes()
    result = ok("reindex")
    assert "indexed 4 memories" in result.stderr
    assert (store_root() / ".index" / "vectors.hnsw").is_file()
    assert len(jsonl(ok("search", "billing", "--jsonl").stdout)) >= 1


def test_without_an_embedding_model_hybrid_falls_back_to_words(use_providers):
    def missing(ref):
        raise ModelError("model all-minilm-l6-v2 is not installed; run `mem models pull all-minilm-l6-v2`")

    use_providers(embedder=missing)
    added = add("Fly.io deploys need flyctl 0.2 or newer")
    result = ok("search", "flyctl deploys", "--jsonl")
    assert ids_of(result.stdout) == [added]
    assert "word matches only" in result.stderr
    vector = run("search", "flyctl", "--mode", "vector")
    assert vector.exit_code == 6 and "mem models pull" in vector.stderr
    imported = ok("import", input="\n".join(json.dumps({"raw": f"note {n}"}) for n in range(3)))
    assert imported.stderr.count("not indexed for meaning search yet") == 1


def test_embedding_a_backlog_does_not_hold_the_store_lock(monkeypatch, fakes):
    """After a big `git pull`, the first search embeds every new memory; writers in other processes must
    not wait for all of it, so the lock is taken per stored batch, never around the model."""
    _, embedder = fakes
    for n in range(5):
        copied = store_root() / "memories" / "2026" / "02" / f"{ids.new_id()}.yaml"
        copied.parent.mkdir(parents=True, exist_ok=True)
        copied.write_text(f"raw: pulled note number {n} about tomatoes\nid: {copied.stem}\n")
    ok("init")
    mem = open_mem()
    held = []
    original = type(embedder).embed
    monkeypatch.setattr(type(embedder), "embed", lambda self, texts: held.append(mem.store._lock_depth)
                        or original(self, texts))
    hits = reading.search(mem, "tomatoes", mode="vector", k=10)
    assert len(hits) == 5
    assert held and set(held) == {0}


def test_a_query_with_no_real_match_finds_nothing_unless_the_cut_off_is_off():
    # Not "banana": the fake embedder hashes words into 256 buckets, and it shares one with a word of the
    # Amazon note, which to the fake is a shared word (in a store of four, one that stands out).
    add_notes()
    assert run("search", "zebra", "quantum", "mango").exit_code == 1
    assert run("context", "zebra quantum mango").stdout == ""
    closest = jsonl(ok("search", "zebra quantum mango", "--min-score", "0", "--jsonl").stdout)
    assert len(closest) == len(NOTES)
    assert jsonl(ok("search", "billing service Heroku", "--jsonl").stdout)
    assert len(jsonl(ok("search", "billing service Heroku", "--jsonl", "--min-score", "0").stdout)) == len(NOTES)


def test_near_identical_memories_are_shown_once():
    first = add("The staging cluster is called kestrel and runs on three nodes")
    add("the staging cluster is called Kestrel, and runs on three nodes!", "--allow-duplicate")
    add("The staging cluster is called kestrel and runs on four nodes", "--allow-duplicate")
    other = add("The production cluster is called osprey")
    found = ids_of(ok("search", "staging cluster kestrel", "--jsonl", "--min-score", "0").stdout)
    assert found[0] == first and len(found) == 3 and other in found


def test_word_search_scores_a_bounded_number_of_memories_rare_words_first(monkeypatch):
    """However many memories hold a common query word, BM25 evaluates at most SCORED of them: those of
    the rarest words first, else the newest holders of the one word."""
    from memcli.index import lexical

    monkeypatch.setattr(lexical, "SCORED", 3)
    common = [add(f"common filler note number {n}") for n in range(6)]
    rare = add("common zebra sighting")
    assert ids_of(ok("search", "common zebra", "--mode", "text", "--jsonl").stdout) == [rare]
    assert set(ids_of(ok("search", "common", "--mode", "text", "--jsonl").stdout)) == {rare, *common[-2:]}
    assert ids_of(ok("search", "common zebra", "--jsonl", "--min-score", "0").stdout)[0] == rare


def test_words_held_by_the_same_few_memories_are_all_scored(monkeypatch):
    """The cap counts memories, not word counts: two words whose counts add up past SCORED but that the
    same memories hold are both scored, so a memory holding only one of them is still found."""
    from memcli.index import lexical

    monkeypatch.setattr(lexical, "SCORED", 3)
    both = add("kestrel osprey osprey osprey")
    add("kestrel osprey note")
    only_kestrel = add("kestrel heron")
    found = ids_of(ok("search", "kestrel osprey", "--mode", "text", "--jsonl").stdout)
    assert found[0] == both and only_kestrel in found and len(found) == 3


def test_word_scores_are_the_bm25_of_the_whole_query_as_fts5_computes_it():
    """Each word is scored on its own and the parts added up: the scores and order a user sees are
    FTS5's BM25 of the words OR-ed in one query, tags and date words weighted as before."""
    import sqlite3

    add_notes()
    add("billing moved again: the billing service runs on Fly.io now", "-t", "billing")
    add("Heroku invoices for the proxy service", "-t", "proxy")
    query = "billing service Heroku proxy"
    shown = [(row["id"], row["score"]) for row in jsonl(ok("search", query, "--mode", "text", "--jsonl").stdout)]
    db = sqlite3.connect(store_root() / ".index" / "catalog.sqlite")
    expected = db.execute(
        "SELECT m.id, -bm25(fts, 1.0, 0.5, 1.0) AS score FROM fts f JOIN memories m ON m.label = f.rowid"
        " WHERE fts MATCH ? ORDER BY score DESC, f.rowid DESC",
        ('"billing" OR "service" OR "heroku" OR "proxy"',)).fetchall()
    db.close()
    assert [memory_id for memory_id, _ in shown] == [memory_id for memory_id, _ in expected]
    assert [score for _, score in shown] == pytest.approx([score for _, score in expected], abs=1e-4)


def test_a_long_lived_process_scores_words_again_after_the_store_changes():
    """`mem search -` and the MCP server keep each word's scores; a memory added meanwhile by another
    process is found, and the word's rarer now, so the scores move."""
    first = add("the kestrel nests on the north tower")
    mem = open_mem()
    before = reading.search(mem, "kestrel tower", mode="text")
    assert [hit.memory.id for hit in before] == [first]
    second = add("a kestrel was seen near the old tower again, and another kestrel by the tower")
    after = reading.search(mem, "kestrel tower", mode="text")
    assert [hit.memory.id for hit in after] == [second, first]
    assert after[1].score != before[0].score
    mem.catalog.close()


def test_replaced_versions_among_the_newest_holders_of_a_word_do_not_use_up_its_scored_memories(monkeypatch):
    """BM25 scores the newest SCORED current memories holding a word: when the newest holders are
    versions an update replaced, older current ones are scored in their place."""
    from memcli.index import lexical

    monkeypatch.setattr(lexical, "SCORED", 3)
    notes = [add(f"common filler note number {n}") for n in range(6)]
    for old in notes[-3:]:
        ok("update", old, "rewritten without the word")
    found = ids_of(ok("search", "common", "--mode", "text", "--jsonl").stdout)
    assert found == notes[:3][::-1]
    everything = ids_of(ok("search", "common", "--mode", "text", "--jsonl", "--all-versions").stdout)
    assert everything == notes[-3:][::-1]


def test_the_library_takes_filters_built_with_lists():
    from memcli.index.filters import Filters

    tagged = add("the kestrel nests on the north tower", "-t", "birds")
    add("a kestrel again", "-t", "other")
    mem = open_mem()
    for mode in ("text", "hybrid"):
        hits = reading.search(mem, "kestrel", mode=mode, filters=Filters(tags=["birds"], source=None))
        assert [hit.memory.id for hit in hits] == [tagged]
    mem.catalog.close()


def dated_notes() -> dict[str, str]:
    """Five notes on one subject, a month apart: only their dates tell them apart."""
    records = [{"raw": f"Melanie showed Caroline a new painting ({n})", "created_at": f"2023-{month:02d}-13T10:00:00Z",
                "source": str(month)} for n, month in enumerate((6, 7, 8, 9, 10))]
    ok("import", "--no-compress", "-", input="\n".join(json.dumps(r) for r in records))
    return {row["source"]: row["id"] for row in jsonl(ok("ls", "--jsonl").stdout)}


@pytest.mark.parametrize("mode", ["hybrid", "text"])
def test_a_query_naming_a_date_finds_the_memory_of_that_date(mode):
    """A memory's text rarely says when it was written; its date is searched as words beside the text."""
    ids = dated_notes()
    for month, name in (("8", "August"), ("10", "October 13, 2023")):
        found = ids_of(ok("search", f"painting Melanie showed {name}", "--mode", mode, "--jsonl").stdout)
        assert found[0] == ids[month], name


def test_an_edited_date_is_searched_by_its_new_words():
    ids = dated_notes()
    path = next(p for p in memory_files() if ids["6"] in p.name)
    path.write_text(path.read_text(encoding="utf-8").replace("2023-06-13", "2023-03-02"), encoding="utf-8")
    assert ids_of(ok("search", "painting March", "--mode", "text", "--jsonl").stdout)[0] == ids["6"]
    assert ids["6"] not in ids_of(run("search", "painting June", "--mode", "text", "--jsonl").stdout)[:1]


def test_a_catalog_of_the_schema_before_dates_keeps_its_vectors_and_gains_them():
    """Upgrading mem rewrites only the word index: a rebuild would embed every memory again."""
    import sqlite3

    ids = dated_notes()
    ok("search", "painting")  # embeds all five
    path = store_root() / ".index" / "catalog.sqlite"
    db = sqlite3.connect(path)
    db.executescript("DROP TABLE fts; CREATE VIRTUAL TABLE fts USING fts5 (raw, tags, tokenize = 'porter unicode61');"
                     "INSERT INTO fts (rowid, raw, tags) SELECT label, json_extract(record, '$.raw'), '' FROM memories;"
                     "ALTER TABLE memories DROP COLUMN served_raw; UPDATE meta SET value = '6' WHERE key = 'schema';")
    vectors_before = db.execute("SELECT label, vec FROM vectors ORDER BY label").fetchall()
    db.close()
    upgraded = ok("search", "painting September", "--mode", "text", "--jsonl")
    assert ids_of(upgraded.stdout)[0] == ids["9"]
    assert "the word index is taking in each memory's date (once): 5 memories" in upgraded.stderr
    assert "checking every compressed form against its raw text (once): 5 memories" in upgraded.stderr
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == "9"
    assert db.execute("SELECT label, vec FROM vectors ORDER BY label").fetchall() == vectors_before
    db.close()


def test_a_catalog_from_before_the_guard_checked_every_form_checks_each_once_when_opened():
    """A store whose catalog predates the check (schema 8) gets each form's verdict once, from its own rows:
    a form that a merge reversed before the upgrade is not served after it."""
    import sqlite3

    raw = "We chose SQLite over DuckDB for the catalog because it ships with Python."
    memory_id = add(raw)
    ok("search", "catalog")
    path = store_root() / ".index" / "catalog.sqlite"
    db = sqlite3.connect(path)
    db.executescript("ALTER TABLE memories DROP COLUMN served_raw; UPDATE meta SET value = '8' WHERE key = 'schema';"
                     "UPDATE memories SET record = json_set(record, '$.compressed',"
                     " 'We chose DuckDB over SQLite for catalog because it ships with Python.');")
    db.close()
    upgraded = ok("show", memory_id, "--json")
    assert "checking every compressed form against its raw text (once): 1 memories" in upgraded.stderr
    assert json.loads(upgraded.stdout)["content"] == raw
    assert "checking" not in ok("show", memory_id, "--json").stderr


def test_a_date_alone_does_not_make_a_match():
    """Date words never carry a query over the cut-off: a year is in half a store, a month in a twelfth,
    and "13" must find the 13 in a text before every memory of a 13th. Words alone (text mode, no cut)
    still list what the date matches."""
    ids = dated_notes()
    assert run("search", "quantum chromodynamics 2023", "--jsonl").stdout == ""
    assert run("search", "May I ask about quantum chromodynamics", "--jsonl").stdout == ""
    assert run("search", "quantum chromodynamics in June", "--jsonl").stdout == ""  # a date reorders, no more
    assert ids_of(ok("search", "quantum chromodynamics in June", "--mode", "text", "--jsonl").stdout) == [ids["6"]]
    thirteen = add("The backup keeps 13 snapshots")
    assert ids_of(ok("search", "13", "--mode", "text", "--jsonl").stdout) == [thirteen]
    assert ids_of(ok("search", "painting June 13", "--mode", "text", "--jsonl").stdout)[0] == ids["6"]


def test_a_date_is_searched_by_the_day_mem_shows(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:  # in UTC both are December 2; there the first is on December 1
        records = [{"raw": "Picked up the new glasses", "created_at": "2026-12-02T00:21:00Z", "source": "first"},
                   {"raw": "Picked up the glasses case", "created_at": "2026-12-02T20:00:00Z", "source": "second"}]
        ok("import", "--no-compress", "-", input="\n".join(json.dumps(r) for r in records))
        shown = {row["source"]: row["id"] for row in jsonl(ok("ls", "--jsonl").stdout)}
        assert "2026-12-01" in ok("ls").stdout
        for day, source in (("1", "first"), ("2", "second")):
            found = ids_of(ok("search", f"glasses December {day}", "--mode", "text", "--jsonl").stdout)
            assert found[0] == shown[source], day
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_a_form_still_as_the_guard_stamped_it_is_served_and_a_changed_one_is_checked():
    from memcli.compress.guard import seal
    from memcli.index.db import verdict

    raw = "We chose SQLite over DuckDB for the catalog because it ships with Python."
    form = "We chose SQLite over DuckDB for catalog because it ships with Python."
    reversed_form = form.replace("SQLite over DuckDB", "DuckDB over SQLite")
    stamped = {"method": "prune", "status": "done", "guarded": seal(raw, form, "prune")}
    assert verdict(raw, form, stamped) is None
    assert verdict(raw, reversed_form, stamped).startswith("departs from the raw text at 'duckdb'")
    assert verdict(raw, form, {"method": "prune", "status": "done"}) is None  # no stamp: checked, and it passes
