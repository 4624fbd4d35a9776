"""The vector cache (vectors/): a copy of a store with it is searchable without embedding what it holds."""

from __future__ import annotations

import json
import shutil
import zlib

import pytest
from fakes import FakeEmbedder
from helpers import add, jsonl, ok, run, store_root

from memcli.index import lexical, search, vector_cache

NOTES = ["The staging cluster is called kestrel",
         "Grafana dashboards live on the ops-2 host",
         "Billing deploys need a migration check first",
         "We rotate through twelve residential proxies"]
QUERY = "where do grafana dashboards live"
# What a search embeds of it: the query, and the query without the word a match must not hang on.
QUERIES = {QUERY} | {search.without(QUERY, word) for word in lexical.words(QUERY)}


class OtherEmbedder(FakeEmbedder):
    model_id = "another-embedder-256"


def cloned(tmp_path, name="clone"):
    """What `git clone` gives of the current store: everything but .index/ (git-ignored)."""
    target = tmp_path / name
    shutil.copytree(store_root(), target, ignore=shutil.ignore_patterns(".index"))
    return target


def cache_files(root):
    return sorted((root / vector_cache.FOLDER).rglob(f"*{vector_cache.SUFFIX}"))


def embedded(embedder: FakeEmbedder) -> list[str]:
    """What the embedder was asked for, apart from queries."""
    return [text for text in embedder.seen if text not in QUERIES]


@pytest.fixture
def stored(tmp_path):
    return [add(text) for text in NOTES]


def test_a_clone_with_the_cache_embeds_none_of_the_memories_it_holds(tmp_path, stored, use_providers):
    clone = cloned(tmp_path)
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    hits = jsonl(ok("--dir", clone, "search", QUERY, "--jsonl").stdout)
    assert hits[0]["id"] == stored[1]
    assert counting.seen[0] == QUERY and set(counting.seen) <= QUERIES
    ok("--dir", clone, "reindex")
    assert embedded(counting) == []


def test_a_changed_text_is_embedded_again_and_only_it(tmp_path, stored, use_providers):
    clone = cloned(tmp_path)
    path = next(clone.glob(f"memories/*/*/{stored[0]}.yaml"))
    path.write_text(path.read_text().replace("kestrel", "falcon"))
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    assert jsonl(ok("--dir", clone, "search", "staging falcon", "--jsonl").stdout)[0]["id"] == stored[0]
    assert [text for text in counting.seen if text != "staging falcon"] == [NOTES[0].replace("kestrel", "falcon")]


def test_another_models_cache_is_ignored(tmp_path, stored, use_providers):
    clone = cloned(tmp_path)
    other = OtherEmbedder()
    use_providers(embedder=lambda ref: other)
    ok("--dir", clone, "search", QUERY)
    assert sorted(embedded(other)) == sorted(NOTES)
    assert len({path.parent.name for path in cache_files(clone)}) == 2  # each model's vectors in its own folder


def test_deleting_the_cache_only_costs_embedding_time(tmp_path, stored, use_providers):
    before = jsonl(ok("search", QUERY, "--jsonl").stdout)
    clone = cloned(tmp_path)
    shutil.rmtree(clone / vector_cache.FOLDER)
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    after = jsonl(ok("--dir", clone, "search", QUERY, "--jsonl").stdout)
    assert [hit["id"] for hit in after] == [hit["id"] for hit in before]
    assert sorted(embedded(counting)) == sorted(NOTES)
    again = cloned(tmp_path, "clone-of-the-clone")  # the search put them back into the cache
    shutil.copytree(clone / vector_cache.FOLDER, again / vector_cache.FOLDER, dirs_exist_ok=True)
    counting.seen.clear()
    ok("--dir", again, "search", QUERY)
    assert embedded(counting) == []


def test_a_truncated_or_corrupted_cache_file_is_ignored_and_reported(tmp_path, stored, use_providers):
    (first,) = cache_files(store_root())
    data = first.read_bytes()
    size = vector_cache.record_size(FakeEmbedder.dim)
    damaged = bytearray(data[:-10])  # the last record cut: a truncated file
    damaged[vector_cache.HEADER_SIZE + 40] ^= 0xFF  # noise in the first record's vector: its CRC fails
    first.write_bytes(bytes(damaged))
    clone = cloned(tmp_path)
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    result = run("--dir", clone, "doctor", "--json")
    # The two damaged records, embedded afresh by the catch-up; then doctor's check of two vectors of each
    # file (the damaged one, and the clone's own that took the two).
    assert sorted(embedded(counting)[:2]) == sorted([NOTES[0], NOTES[-1]])
    assert len(embedded(counting)) == 2 + 2 * len(cache_files(clone)) == 6
    assert result.exit_code == 1
    ignored = [f["message"] for f in json.loads(result.stdout)["findings"] if f["check"] == "cache" and not f["ok"]]
    assert len(ignored) == 1 and "1 of 3 records damaged" in ignored[0] and f"truncated ({size - 10} bytes" in ignored[0]
    assert "ignored part of the vector cache" in result.stderr


def test_a_file_of_another_dimension_in_the_models_folder_is_never_used(tmp_path, stored, use_providers):
    (first,) = cache_files(store_root())
    header = vector_cache.HEADER.pack(vector_cache.MAGIC, first.read_bytes()[8:24], 128)
    record = vector_cache.text_key(NOTES[1]) + bytes(256)
    (first.parent / "2020-01-01-forged.vec").write_bytes(
        header + zlib.crc32(header).to_bytes(4, "little") + record + zlib.crc32(record).to_bytes(4, "little"))
    clone = cloned(tmp_path)
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    assert jsonl(ok("--dir", clone, "search", QUERY, "--jsonl").stdout)[0]["id"] == stored[1]
    assert embedded(counting) == []
    assert "made by another model or of another dimension" in run("--dir", clone, "doctor").stdout


def forged_copy(path) -> bytes:
    """The file with each record given the next record's vector: valid CRCs, unit vectors, wrong texts."""
    data = path.read_bytes()
    size, dim = vector_cache.record_size(FakeEmbedder.dim), FakeEmbedder.dim
    records = [data[n:n + size] for n in range(vector_cache.HEADER_SIZE, len(data), size)]
    vectors = [record[vector_cache.KEY_BYTES:vector_cache.KEY_BYTES + 2 * dim] for record in records]
    out = bytearray(data[:vector_cache.HEADER_SIZE])
    for n, record in enumerate(records):
        body = record[:vector_cache.KEY_BYTES] + vectors[(n + 1) % len(records)]
        out += body + zlib.crc32(body).to_bytes(4, "little")
    return bytes(out)


def test_a_forged_file_that_sorts_last_cannot_redirect_meaning_search_and_doctor_names_it(
        tmp_path, stored, use_providers):
    (real,) = cache_files(store_root())
    clone = cloned(tmp_path)
    forged = clone / real.relative_to(store_root()).parent / "9999-12-31-zzzz.vec"
    forged.write_bytes(forged_copy(real))
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    hits = jsonl(ok("--dir", clone, "search", QUERY, "--mode", "vector", "--jsonl").stdout)
    assert hits[0]["id"] == stored[1]
    assert sorted(embedded(counting)) == sorted(NOTES)  # taken from neither file: embedded afresh
    report = json.loads(run("--dir", clone, "doctor", "--json").stdout)
    failed = [f["message"] for f in report["findings"] if f["check"] == "cache" and not f["ok"]]
    assert any(f"{len(NOTES)} vectors differ from" in m and "9999-12-31-zzzz.vec" in m for m in failed)
    assert any(m.startswith(str(forged.relative_to(clone))) and "differ from fresh embeddings" in m for m in failed)
    assert not report["healthy"]


def test_a_cache_file_that_is_a_link_or_a_fifo_is_named_never_read(tmp_path, stored, use_providers):
    import os

    (real,) = cache_files(store_root())
    clone = cloned(tmp_path)
    folder = clone / real.relative_to(store_root()).parent
    (folder / "9999-01-01-zero.vec").symlink_to("/dev/zero")
    (folder / "9999-01-02-stdin.vec").symlink_to("/dev/stdin")
    os.mkfifo(folder / "9999-01-03-fifo.vec")
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    assert jsonl(ok("--dir", clone, "search", QUERY, "--jsonl").stdout)[0]["id"] == stored[1]
    assert embedded(counting) == []  # the real file still serves
    report = json.loads(run("--dir", clone, "doctor", "--json").stdout)
    failed = [f["message"] for f in report["findings"] if f["check"] == "cache" and not f["ok"]]
    assert len(failed) == 3 and all("not a regular file" in message for message in failed)


def test_a_vectors_folder_that_is_a_link_is_neither_read_nor_written(tmp_path, stored, use_providers):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(store_root() / vector_cache.FOLDER, elsewhere)
    (store_root() / vector_cache.FOLDER).symlink_to(elsewhere)
    before = sorted(elsewhere.rglob("*"))
    sizes = [p.stat().st_size for p in before]
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    ok("reindex")
    assert sorted(embedded(counting)) == sorted(NOTES)  # none taken from the folder the link leads to
    add("One more note about the release train")
    assert sorted(elsewhere.rglob("*")) == before and [p.stat().st_size for p in before] == sizes


def test_doctor_reports_how_much_the_cache_covers_and_checks_a_sample(tmp_path, stored):
    for path in cache_files(store_root()):
        path.unlink()
    add("One more note about the release train")  # the only one in the cache now
    report = json.loads(run("doctor", "--json", "--check-vectors", "5").stdout)
    messages = [f["message"] for f in report["findings"] if f["check"] == "cache"]
    assert messages[0].startswith("the vector cache holds 1 of 5 memories' vectors (20%")
    assert messages[1] == "1 cached vectors checked against fresh embeddings: all match"
    (path,) = cache_files(store_root())
    data = bytearray(path.read_bytes())
    start = vector_cache.HEADER_SIZE + vector_cache.KEY_BYTES
    vector = data[start:start + 2 * FakeEmbedder.dim]
    data[start:start + 2 * FakeEmbedder.dim] = vector[2:] + vector[:2]  # a unit vector, but not this text's
    end = vector_cache.HEADER_SIZE + vector_cache.record_size(FakeEmbedder.dim) - 4
    data[end:end + 4] = zlib.crc32(bytes(data[vector_cache.HEADER_SIZE:end])).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    report = json.loads(run("doctor", "--json", "--check-vectors", "5").stdout)
    failed = [f["message"] for f in report["findings"] if f["check"] == "cache" and not f["ok"]]
    assert failed[0].startswith(f"{path.relative_to(store_root())}: 1 of 1 vectors checked differ")
    assert "1 differ" in failed[1] and len(failed) == 2 and not report["healthy"]


def test_init_of_a_store_in_a_repository_says_to_commit_the_vector_cache(tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert "memories/ and vectors/" in ok("init", repo / ".mem").stderr
    result = ok("init", tmp_path / "shared", "--git")
    assert ".gitattributes, memories/ and vectors/" in result.stderr
    assert "vectors/**/*.vec binary" in (tmp_path / "shared" / ".gitattributes").read_text().splitlines()
    assert "vectors/" not in ok("init", tmp_path / "private").stderr  # not shared: nothing to commit


@pytest.mark.models
def test_with_the_real_model_a_clone_finds_the_same_memories_from_the_cache_and_doctor_finds_them_agreeing(
        tmp_path, real_models):
    for text in NOTES:
        ok("add", "--no-compress", text)
    before = jsonl(ok("search", QUERY, "--jsonl").stdout)
    clone = cloned(tmp_path)
    result = ok("--dir", clone, "doctor", "--json", "--check-vectors", "4")
    messages = [f["message"] for f in json.loads(result.stdout)["findings"] if f["check"] in ("index", "cache")]
    assert "took 4 vectors from the vector cache" in messages[0] and "embedded" not in messages[0]
    assert messages[1].startswith("the vector cache holds 4 of 4 memories' vectors (100%")
    assert messages[2] == "4 cached vectors checked against fresh embeddings: all match"
    after = jsonl(ok("--dir", clone, "search", QUERY, "--jsonl").stdout)
    assert [hit["id"] for hit in after] == [hit["id"] for hit in before]
    assert all(abs(a["score"] - b["score"]) < 0.01 for a, b in zip(after, before))  # float16 moves a cosine by ~1e-3
