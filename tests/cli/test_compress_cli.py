"""Compression as the store uses it: on add, deferred, failing open, retried, and counted by `mem stats`."""

from __future__ import annotations

import json

from fakes import FakeCompression
from helpers import add, load_file, memory_files, ok, run

LONG = ("The billing service moved from Heroku to Fly.io in March 2026 because the dyno bill had reached "
        "$1,200 a month. We kept Postgres 16 on Crunchy Bridge and did not move the database. The cut-over "
        "took 40 minutes on a Sunday night and nobody noticed. Next we want to move the cron jobs off the "
        "old box and onto Fly machines that start on a schedule, which should save another $90 a month. The "
        "runbook lives in docs/billing.md.")


def status_of(memory_id: str) -> dict:
    [path] = [p for p in memory_files() if p.stem == memory_id]
    return load_file(path)


def test_defer_then_compress_pending(fakes):
    compressor, _ = fakes
    memory_id = add(LONG, "--defer")
    assert compressor.seen == []
    data = status_of(memory_id)
    assert data["compressed"] is None and data["compression"] == {"status": "pending"}
    result = ok("compress", "--pending")
    assert "compressed 1 memories: 1 done" in result.stderr
    data = status_of(memory_id)
    assert data["compression"]["status"] == "done" and len(data["compressed"]) < len(LONG)
    assert json.loads(ok("show", memory_id, "--json").stdout)["optimized"] is True
    assert "nothing to do" in ok("compress", "--pending").stderr


def test_a_raising_compressor_never_loses_the_write(use_providers, fakes):
    def broken(raw, **kwargs):
        raise RuntimeError("model exploded")

    compressor, _ = fakes
    use_providers(compressor=broken)
    result = ok("add", LONG)
    memory_id = result.stdout.strip()
    assert result.stderr.count("compression failed") == 1 and "mem compress --failed" in result.stderr
    data = status_of(memory_id)
    assert data["raw"] == LONG and data["compressed"] is None
    assert data["compression"]["status"] == "failed" and "model exploded" in data["compression"]["reason"]
    still_broken = run("compress", "--failed")
    assert still_broken.exit_code == 3 and "1 failed" in still_broken.stderr
    use_providers(compressor=compressor)
    assert "1 done" in ok("compress", "--failed").stderr
    assert status_of(memory_id)["compression"]["status"] == "done"


def test_a_compression_the_guard_rejects_the_same_way_every_time_is_stored_raw_on_purpose_and_said_once(
        use_providers):
    def rejected(raw, **kwargs):
        return FakeCompression(None, {"method": "prune", "status": "failed", "reason": "lost 'never'"})

    use_providers(compressor=rejected)
    memory_id = add(LONG)
    assert status_of(memory_id)["compression"]["status"] == "failed"
    assert "1 memories failed to compress" in run("doctor").stdout
    assert "1 skipped" in ok("compress", "--failed").stderr  # the same rejection again
    assert status_of(memory_id)["compression"] == {"method": "prune", "status": "skipped",
                                                   "reason": "stored raw on purpose: lost 'never'"}
    first = ok("doctor")
    assert "failed to compress" not in first.stdout
    assert "1 memory stored raw on purpose: compressing failed the same way on every try" in first.stdout
    assert "stored raw on purpose" not in ok("doctor").stdout  # said once
    assert "nothing to do" in ok("compress", "--failed").stderr


def test_compress_needs_a_selection_and_takes_ids(fakes):
    assert run("compress").exit_code == 2
    memory_id = add(LONG, "--no-compress")
    assert status_of(memory_id)["compression"]["status"] == "skipped"
    assert "1 done" in ok("compress", memory_id[:20], "--ratio", "0.5").stderr
    compressor, _ = fakes
    assert compressor.seen == [LONG]
    ok("compress", "--all")
    assert len(compressor.seen) == 2


def test_compressing_keeps_the_memory_findable():
    memory_id = add(LONG, "--defer")
    ok("compress", "--pending")
    rows = [json.loads(line) for line in ok("search", "Crunchy Bridge Postgres", "--jsonl").stdout.splitlines()]
    assert rows[0]["id"] == memory_id and rows[0]["optimized"] is True


def test_stats_counts_the_tokens_saved():
    add(LONG)
    add("a short note of six words", "-t", "x")
    add(LONG + " And one more sentence.", "--defer")
    figures = json.loads(ok("stats", "--json").stdout)
    long_words = len(LONG.split())
    kept = len([w for w in LONG.split() if w != "the"])  # what the fake compressor keeps
    assert figures["memories"] == 3 and figures["optimized"] == 1
    assert figures["raw_tokens"] == long_words + 6 + long_words + 4
    assert figures["read_tokens"] == kept + 6 + long_words + 4
    assert figures["saved_tokens"] == long_words - kept
    assert figures["by_method"]["prune"]["memories"] == 1
    assert figures["by_status"] == {"done": 1, "skipped": 1, "pending": 1}
    human = ok("stats").stdout
    assert "tokens to read" in human and f"saves {long_words - kept} tokens" in human


def test_a_missing_model_is_reported_once_and_the_memory_lands(use_providers):
    from memcli.compress.pipeline import compress

    use_providers(compressor=compress)  # the real one; no model in MEM_MODELS_DIR
    result = ok("add", LONG)
    assert result.stderr.count("compression failed") == 1
    assert "mem models pull smollm2-135m-instruct-q4_1" in result.stderr
    data = status_of(result.stdout.strip())
    assert data["raw"] == LONG and data["compression"]["status"] == "failed"


def test_an_import_stores_what_each_memory_costs_so_stats_need_no_model(use_providers):
    notes = ["the deploy key rotates monthly", "lunch is at noon on Fridays", LONG]
    ok("import", input="\n".join(json.dumps({"raw": note}) for note in notes))
    counts = sorted(load_file(path)["compression"]["raw_tokens"] for path in memory_files())
    assert counts == sorted(len(note.split()) for note in notes)

    def gone(ref):
        raise RuntimeError("the compression model is not installed")

    use_providers(token_counter=gone)
    figures = json.loads(ok("stats", "--json").stdout)
    assert figures["memories"] == 3 and figures["raw_tokens"] == sum(counts)


def test_show_and_stats_say_the_kind_and_compress_all_redoes_an_old_store(use_providers):
    import dev_samples
    from compress_fakes import FakeModel

    from memcli.compress.pipeline import compress

    use_providers(compressor=lambda raw, **kw: compress(raw, lm=FakeModel(), **kw))
    diff_id = add(dev_samples.DIFF * 2)
    log_id = add(dev_samples.LOG)
    assert status_of(diff_id)["compression"]["kind"] == "diff"
    assert "kind:" in ok("show", diff_id).stdout and "diff" in ok("show", diff_id).stdout
    [path] = [p for p in memory_files() if p.stem == log_id]
    path.write_text(path.read_text().replace("kind: log, ", ""))  # as a store written before kinds
    figures = json.loads(ok("stats", "--json").stdout)
    assert set(figures["by_kind"]) == {"diff", "unknown"}
    assert "by kind:" in ok("stats").stdout
    ok("compress", "--all")
    figures = json.loads(ok("stats", "--json").stdout)
    assert set(figures["by_kind"]) == {"diff", "log"}
    assert figures["by_kind"]["log"]["saved_percent"] > 50
