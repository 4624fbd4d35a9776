"""The vector cache (vectors/): a copy of a store with it is searchable without embedding what it holds."""

from __future__ import annotations

import json
import shutil
import zlib

import pytest
from fakes import FakeEmbedder
from helpers import add, jsonl, ok, run, store_root

from memcli.index import vector_cache

NOTES = ["The staging cluster is called kestrel",
         "Grafana dashboards live on the ops-2 host",
         "Billing deploys need a migration check first",
         "We rotate through twelve residential proxies"]
QUERY = "where do grafana dashboards live"


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
    return [text for text in embedder.seen if text != QUERY]


@pytest.fixture
def stored(tmp_path):
    return [add(text) for text in NOTES]


def test_a_clone_with_the_cache_embeds_none_of_the_memories_it_holds(tmp_path, stored, use_providers):
    clone = cloned(tmp_path)
    counting = FakeEmbedder()
    use_providers(embedder=lambda ref: counting)
    hits = jsonl(ok("--dir", clone, "search", QUERY, "--jsonl").stdout)
    assert hits[0]["id"] == stored[1]
    assert counting.seen == [QUERY]
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
    assert sorted(embedded(counting)) == sorted([NOTES[0], NOTES[-1]])  # the two damaged records, embedded afresh
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
    failed = [f for f in report["findings"] if f["check"] == "cache" and not f["ok"]]
    assert len(failed) == 1 and "1 differ" in failed[0]["message"] and not report["healthy"]


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
