"""Issue 42, "writes lost, truths forked, crashes": a kill in the middle of `mem rm`, a full disk, a provider
that does not answer, a model still running when its compression timed out, a read-only store."""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import socket
import subprocess
import sys

import fakes as fake_models
import pytest
import yaml
from helpers import add, jsonl, load_file, memory_files, ok, run, store_root

from memcli.store.folder import Store


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
    return subprocess.run([sys.executable, "-m", "memcli", *args], input=input, capture_output=True,
                          env=dict(os.environ), timeout=timeout)


def _set(setting: str, value: str) -> None:
    """A line of mem.yaml replaced (or added), as a user edits it."""
    path = store_root() / "mem.yaml"
    lines = [line for line in path.read_text().splitlines() if not line.startswith(f"{setting}:")]
    path.write_text("\n".join([*lines, f"{setting}: {value}"]) + "\n")


def _long_note(words: int, seed: int) -> bytes:
    vocabulary = ("the service retries requests with exponential backoff when the upstream gateway returns "
                  "errors during the nightly deploy of Kestrel on Tuesday").split()
    rng = random.Random(seed)
    return " ".join(rng.choice(vocabulary) for _ in range(words)).encode()


@pytest.mark.models
def test_add_whose_local_compression_times_out_while_llama_runs_exits_cleanly(real_models):
    assert _mem_process("init").returncode == 0
    _set("compress_timeout_s", "0.5")
    _set("compress_target", "0.95")  # only the forward pass can choose which safe words go: llama runs
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
    use_providers(compressor=fake_models.FakeCompressor(), embedder=lambda ref: fake_models.FakeEmbedder())
    stored = jsonl(ok("ls", "--jsonl", "--raw").stdout)
    assert [(m["content"], m["tags"]) for m in stored] == [(LONG_NOTE, ["billing"])]
    assert jsonl(ok("search", "dunning queue", "--jsonl").stdout)[0]["id"] == stored[0]["id"]
    if waiting_on == "compressor":
        assert [load_file(path)["compression"]["status"] for path in memory_files()] == ["pending"]
        ok("compress", "--pending")
        assert jsonl(ok("ls", "--jsonl").stdout)[0].get("optimized") is True


# -- a full disk, a read-only store: real file systems (a small tmpfs, remounted read-only), as root ---------


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    """A 2 MB file system of its own holding the store (mounting needs root, which the tests have here)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True)
    assert mounted.returncode == 0, f"cannot mount a tmpfs (these tests need root): {mounted.stderr.decode()}"
    monkeypatch.setenv("MEM_DIR", str(disk / "store"))
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=True)


def _mem_lines(count: int, size: int) -> str:
    return "\n".join(json.dumps({"raw": f"imported note {n} about the cache layer " + "lorem " * (size // 6)})
                     for n in range(count))


def _one_error_line(stderr: str, says: str) -> None:
    """No traceback; one error line, saying why (a warning that the index is held in memory may precede it)."""
    errors = [line for line in stderr.splitlines() if line.startswith("mem: error:")]
    assert len(errors) == 1 and says in errors[0].lower(), stderr
    assert "Traceback" not in stderr


def _reads_work(expected_ids: set[str], doctor_exit: int) -> None:
    """ls, show, search and doctor each end with one line at most on stderr and no traceback; doctor
    exits 1 where it has something to report."""
    listed = run("ls", "--jsonl", "-n", "0")
    assert listed.exit_code == 0, listed.stderr
    assert expected_ids <= {m["id"] for m in jsonl(listed.stdout)}
    probe = sorted(expected_ids)[0]
    assert run("show", probe).exit_code == 0
    found = run("search", "deploy window Friday", "--jsonl")
    assert found.exit_code == 0, found.stderr
    assert jsonl(found.stdout)[0]["id"] == probe
    doctor = run("doctor")
    assert doctor.exit_code == doctor_exit, doctor.stdout + doctor.stderr


def test_import_onto_a_full_disk_ends_with_one_line_and_reads_keep_working(small_disk, tmp_path):
    ok("init")
    first = add("the deploy window is Friday 16:00", "--no-compress")
    lines = tmp_path / "lines.jsonl"
    lines.write_text(_mem_lines(400, 6000))  # 2.4 MB: more than the disk holds
    done = run("import", str(lines), "--no-compress")
    assert done.exit_code == 5, done.stderr
    _one_error_line(done.stderr, "no space left")
    assert not list(small_disk.rglob("*.tmp")), "a half-written temp file was left"
    for path in memory_files():
        load_file(path)  # every file there is whole
    _reads_work({first}, doctor_exit=1)
    added = run("add", "one more note about the cache layer " * 20000, "--no-compress")
    assert added.exit_code == 5, added.stderr
    _one_error_line(added.stderr, "no space left")


def test_reads_of_a_read_only_store_work(small_disk):
    ok("init")
    first = add("the deploy window is Friday 16:00", "--no-compress")
    add("the cache layer evicts after ten minutes", "--no-compress")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    _reads_work({first}, doctor_exit=0)
    assert run("ls").stderr == ""  # reading a read-only store is no surprise: nothing to warn about
    refused = run("add", "a new note that cannot be stored", "--no-compress")
    assert refused.exit_code == 5 and "read-only" in refused.stderr.lower()


def silent_provider(server: socket.socket, **provider) -> None:
    """mem.yaml names a server on 127.0.0.1 that accepts connections and never answers."""
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    settings_path = store_root() / "mem.yaml"
    settings = yaml.safe_load(settings_path.read_text())
    settings["provider"] = {"name": "openai-compatible", "base_url": f"http://127.0.0.1:{server.getsockname()[1]}/v1",
                            "model": "any", "timeout_seconds": 60, "max_retries": 0, **provider}
    settings_path.write_text(yaml.safe_dump(settings, sort_keys=False))


def test_add_returns_at_once_while_a_provider_never_answers_and_its_compression_waits_in_the_queue():
    ok("init")
    with socket.socket() as server:
        silent_provider(server)
        server.setblocking(False)
        added = ok("add", LONG_NOTE, "-t", "billing")
        with pytest.raises(BlockingIOError):
            server.accept()  # the add asked the server nothing
    assert "compression queued for" in added.stderr
    assert [load_file(path)["compression"]["status"] for path in memory_files()] == ["pending"]
    assert [row["kind"] for row in jsonl(ok("queue", "--jsonl").stdout)] == ["compress"]


def test_add_killed_while_a_provider_never_answers_has_stored_the_memory():
    """With `on_write: wait` the add asks the server before returning; killed meanwhile, it has stored the
    memory first, and its compression waits in the queue."""
    ok("init")
    with socket.socket() as server:
        silent_provider(server, on_write="wait")
        writer = subprocess.Popen([sys.executable, "-m", "memcli", "add", LONG_NOTE, "-t", "billing"],
                                  env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server.settimeout(120)
        connection, _ = server.accept()  # the add now waits for an answer that never comes
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        connection.close()
    stored = jsonl(ok("ls", "--jsonl", "--raw").stdout)
    assert [(m["content"], m["tags"]) for m in stored] == [(LONG_NOTE, ["billing"])]
    assert [load_file(path)["compression"]["status"] for path in memory_files()] == ["pending"]
    # no model here: the vectors wait in the queue too
    assert [row["kind"] for row in jsonl(ok("queue", "--jsonl").stdout)] == ["compress", "embed"]


def test_a_long_lived_process_writes_its_index_to_disk_again_once_there_is_room(small_disk, caplog):
    """The MCP server on a disk that fills up and is freed: answers throughout, warns once, and then keeps
    its index on disk again (a copy in memory would re-read every file at each request)."""
    from memcli.core.mem import Mem
    from memcli.index.filters import Filters

    def catch_up() -> set[str]:
        """What the server does before each request; the ids it then lists. (Each CLI run above replaces
        the logger's handlers with its own, so the test's is put back each time.)"""
        logging.getLogger("memcli").addHandler(caplog.handler)
        try:
            server.catalog.catch_up()
        finally:
            logging.getLogger("memcli").removeHandler(caplog.handler)
        return {m.id for m in server.catalog.list(Filters())}

    ok("init")
    first = add("the deploy window is Friday 16:00", "--no-compress")
    server = Mem.open(providers=fake_models.current)
    catch_up()
    later = add("the cache layer evicts after ten minutes", "--no-compress")  # another process, while room
    filler = small_disk / "filler"
    with open(filler, "wb") as handle, pytest.raises(OSError):
        while True:
            handle.write(b"\0" * 65536)
            handle.flush()
    assert catch_up() >= {first, later}
    assert catch_up() >= {first, later}
    filler.unlink()
    third = add("the queue retries three times", "--no-compress")
    assert catch_up() >= {first, later, third}
    assert not server.catalog.in_memory
    assert len([r for r in caplog.records if "copy of it in memory" in r.getMessage()]) == 1
