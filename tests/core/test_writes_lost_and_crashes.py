"""Issue 42, "writes lost, truths forked, crashes": a kill in the middle of `mem rm`, a full disk, a provider
that does not answer, a model still running when its compression timed out, a read-only store."""

from __future__ import annotations

import pytest
from helpers import add, jsonl, load_file, memory_files, ok, run, store_root

from memcli.store.files import Store


class Killed(BaseException):
    """What a SIGKILL at that point would leave: nothing after it runs (not even `finally` cleanup
    that writes)."""


@pytest.mark.parametrize("kill_after", [1, 2, 3])
def test_rm_of_a_chain_killed_after_any_unlink_never_makes_a_replaced_version_current(monkeypatch, kill_after):
    first = add("the deploy window is Monday 09:00")
    ok("update", first, "the deploy window is Tuesday 09:00")
    newest = ok("update", first, "the deploy window is Wednesday 09:00").stdout.strip()
    unlinks = []
    real_delete = Store.delete

    def delete(self, relpath):
        real_delete(self, relpath)
        unlinks.append(relpath)
        if len(unlinks) == kill_after:
            raise Killed

    monkeypatch.setattr(Store, "delete", delete)
    with pytest.raises(Killed):
        ok("rm", "-y", newest)
    monkeypatch.setattr(Store, "delete", real_delete)
    current = [m["content"] for m in jsonl(ok("ls", "--jsonl").stdout)]
    assert current == ([] if kill_after == 3 else ["the deploy window is Wednesday 09:00"])
    found = [m["content"] for m in jsonl(run("search", "deploy window", "--jsonl").stdout)]
    assert found == current


def _mem_process(*args, input=None, timeout=300):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "memcli", *args], input=input, capture_output=True,
                          env=dict(os.environ), timeout=timeout)


def _set(setting: str, value: str) -> None:
    """A line of mem.yaml replaced (or added), as a user edits it."""
    path = store_root() / "mem.yaml"
    lines = [line for line in path.read_text().splitlines() if not line.startswith(f"{setting}:")]
    path.write_text("\n".join([*lines, f"{setting}: {value}"]) + "\n")


def _long_note(words: int, seed: int) -> bytes:
    import random

    vocabulary = ("the service retries requests with exponential backoff when the upstream gateway returns "
                  "errors during the nightly deploy of Kestrel on Tuesday").split()
    rng = random.Random(seed)
    return " ".join(rng.choice(vocabulary) for _ in range(words)).encode()


@pytest.mark.models
def test_add_whose_local_compression_times_out_while_llama_runs_exits_cleanly(real_models):
    assert _mem_process("init").returncode == 0
    _set("compress_timeout_s", "0.5")
    for run_number in range(5):  # it died by SIGSEGV in 8 runs of 10 before
        done = _mem_process("add", "-", input=_long_note(3000, run_number))
        assert done.returncode == 0, (run_number, done.returncode, done.stderr.decode()[-500:])
        assert b"timeout after 0.5s" in done.stderr
    assert len(ok("ls", "--jsonl").stdout.splitlines()) == 5


LONG_NOTE = ("The billing service retries failed card charges three times with exponential backoff, then "
             "parks the invoice in the dunning queue that finance reviews every Monday morning.")


class KilledWhileWaiting:
    """A compressor (or embedder) whose call is where the process was killed: the provider never
    answered and the user lost patience."""

    dim = 256
    model_id = "killed"

    def __call__(self, raw, **_):
        raise Killed

    def embed_with_whole(self, texts, whole=False):
        raise Killed

    embed = embed_with_whole


@pytest.mark.parametrize("waiting_on", ["compressor", "embedder"])
def test_add_killed_while_a_model_or_provider_works_has_already_stored_the_memory(use_providers, waiting_on):
    ok("init")
    killer = KilledWhileWaiting()
    use_providers(**{waiting_on: killer if waiting_on == "compressor" else (lambda ref: killer)})
    with pytest.raises(Killed):
        run("add", LONG_NOTE, "-t", "billing")
    use_providers(compressor=fakes_module().FakeCompressor(), embedder=lambda ref: fakes_module().FakeEmbedder())
    stored = jsonl(ok("ls", "--jsonl", "--raw").stdout)
    assert [(m["content"], m["tags"]) for m in stored] == [(LONG_NOTE, ["billing"])]
    assert jsonl(ok("search", "dunning queue", "--jsonl").stdout)[0]["id"] == stored[0]["id"]
    if waiting_on == "compressor":
        assert [load_file(path)["compression"]["status"] for path in memory_files()] == ["pending"]
        ok("compress", "--pending")
        assert jsonl(ok("ls", "--jsonl").stdout)[0].get("optimized") is True


def fakes_module():
    import fakes

    return fakes
