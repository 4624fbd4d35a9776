"""The worker's rules against a real HTTP server on 127.0.0.1 that fails on purpose: retries with
backoff, Retry-After, the circuit breaker and its cooldown, rate limits, timeouts, dropped connections.
Every failure leaves the write done (raw text stored) and the job pending or failed with its reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest
from helpers import add, ok, run
from locations import FAKE_MEM, ROOT
from provider_helpers import GOOD_JSON, GOOD_LINE, NOTE, state_file, stored, use_server
from script_server import ScriptServer

from memcli.errors import ProviderError
from memcli.providers.calls import Caller
from memcli.providers.circuit import CircuitState
from memcli.providers.openai_http import ChatClient
from memcli.providers.protocols import Deadline
from memcli.providers.settings import ProviderSettings


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


def caller_for(server, tmp_path, clock=None, **overrides):
    """A Caller and a client on the script server; sleeps are recorded (and advance the fake clock)."""
    settings = ProviderSettings(name="openai-compatible", base_url=server.base_url, model="scripted",
                                **{"timeout_seconds": 2.0, "max_retries": 0, **overrides})
    clock = clock or Clock()
    slept: list[float] = []

    def sleep(seconds):
        slept.append(seconds)
        clock.now += seconds

    caller = Caller(settings, CircuitState(tmp_path / ".index", settings, clock), sleep=sleep, rng=lambda: 0.5)
    client = ChatClient(settings)
    send = lambda timeout: client.complete([{"role": "user", "content": "hi"}], max_tokens=8, extra={},  # noqa: E731
                                           timeout=timeout)
    return caller, send, slept


def test_5xx_is_retried_with_doubling_backoff_and_jitter(tmp_path):
    steps = [("status", 500, {}), ("status", 502, {}), ("status", 503, {}), ("ok", "done")]
    with ScriptServer(steps) as server:
        caller, send, slept = caller_for(server, tmp_path, max_retries=3, backoff_seconds=1.0,
                                         max_backoff_seconds=3.0)
        assert caller.call(send, Deadline(60)) == "done"
    assert len(server.requests) == 4
    assert slept == [0.75, 1.5, 2.25]  # rng 0.5 -> 3/4 of 1, 2, then 4 capped at 3
    lo_hi = [(c / 2, c) for c in (1.0, 2.0, 3.0)]
    caller.rng = lambda: 0.0
    assert [caller.backoff(n) for n in range(3)] == [lo for lo, _ in lo_hi]
    caller.rng = lambda: 0.999999
    assert all(abs(caller.backoff(n) - hi) < 1e-5 for n, (_, hi) in enumerate(lo_hi))


def test_429_honours_retry_after(tmp_path):
    steps = [("status", 429, {"Retry-After": "7"}), ("ok", "done")]
    with ScriptServer(steps) as server:
        caller, send, slept = caller_for(server, tmp_path, max_retries=2)
        assert caller.call(send, Deadline(60)) == "done"
    assert slept == [7.0]
    assert len(server.requests) == 2


def test_retry_after_past_the_deadline_gives_up_as_transient(tmp_path):
    with ScriptServer([("status", 429, {"Retry-After": "120"})]) as server:
        caller, send, slept = caller_for(server, tmp_path, max_retries=3)
        with pytest.raises(ProviderError) as err:
            caller.call(send, Deadline(30))
    assert err.value.kind == "rate-limit" and err.value.transient
    assert slept == [] and len(server.requests) == 1
    # Another process on the same store waits out the Retry-After too, without sending.
    again, send2, _ = caller_for(server, tmp_path, max_retries=0)
    assert again.state.reserve() > 100


def test_breaker_opens_after_threshold_and_stops_sending(tmp_path):
    with ScriptServer(default=("status", 500, {})) as server:
        caller, send, _ = caller_for(server, tmp_path, circuit_threshold=3)
        for _ in range(3):
            with pytest.raises(ProviderError, match="server"):
                caller.call(send, Deadline(10))
        for _ in range(5):
            with pytest.raises(ProviderError) as err:
                caller.call(send, Deadline(10))
            assert err.value.kind == "circuit-open"
    assert len(server.requests) == 3


def test_cooldown_doubles_and_caps(tmp_path):
    clock = Clock()
    with ScriptServer(default=("status", 500, {})) as server:
        caller, send, _ = caller_for(server, tmp_path, clock, circuit_threshold=2, circuit_cooldown_seconds=10,
                                     circuit_max_cooldown_seconds=35)
        cooldowns = []
        for _ in range(2):
            with pytest.raises(ProviderError):
                caller.call(send, Deadline(10))
        for _ in range(4):
            snap = caller.state.snapshot()
            assert snap["circuit"] == "open"
            cooldowns.append(snap["closes_at"] - clock.now)
            clock.now = snap["closes_at"] + 0.1  # the cooldown is over: one trial, which fails
            assert caller.state.snapshot()["circuit"] == "half-open"
            with pytest.raises(ProviderError, match="server"):
                caller.call(send, Deadline(10))
        server.default = ("ok", "back")
        clock.now = caller.state.snapshot()["closes_at"] + 0.1
        assert caller.call(send, Deadline(10)) == "back"
        assert caller.state.snapshot()["circuit"] == "closed"
    assert cooldowns == [10, 20, 35, 35]
    assert len(server.requests) == 2 + 4 + 1


def test_401_opens_at_once_and_fails_the_job_with_auth(tmp_path):
    with ScriptServer(default=("status", 401, {})) as server:
        use_server(server.base_url, circuit_threshold=5, max_retries=3)
        first = add(NOTE)
        second = add(NOTE + " Second note.")
    assert len(server.requests) == 1  # no retry, and the second write sent nothing
    info = stored(first)["compression"]
    assert info["status"] == "failed" and info["reason"].startswith("auth: HTTP 401")
    assert stored(first)["raw"] == NOTE
    assert stored(second)["compression"]["status"] == "pending"
    assert "circuit-open" in stored(second)["compression"]["reason"]


def test_state_survives_between_processes(tmp_path):
    with ScriptServer(default=("status", 500, {})) as server:
        use_server(server.base_url, circuit_threshold=2)
        add(NOTE)
        add(NOTE + " Two.")
        # Another process: a `mem add` there sends nothing, and its `mem status` sees the open circuit.
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, str(FAKE_MEM), "add", NOTE + " Three."], env=env, check=True,
                       capture_output=True, timeout=120)
        status = json.loads(subprocess.run([sys.executable, str(FAKE_MEM), "status", "--json"], env=env,
                                           check=True, capture_output=True, timeout=120).stdout)
    assert len(server.requests) == 2
    assert status["circuit"] == "open" and status["closes_at"] is not None
    assert status["requests_last_minute"] == 2
    assert "HTTP 500" in status["last_error"]["reason"]
    assert state_file()["failures"] == 2


def test_timeout_leaves_the_job_pending_and_the_write_done(tmp_path):
    with ScriptServer([("slow", 3, GOOD_LINE)]) as server:
        use_server(server.base_url, timeout_seconds=0.5)
        memory_id = add(NOTE)
    memory = stored(memory_id)
    assert memory["raw"] == NOTE and memory["compressed"] is None
    assert memory["compression"]["status"] == "pending"
    assert memory["compression"]["reason"].startswith("timeout")


def test_dropped_connection_is_retried_then_compresses(tmp_path):
    with ScriptServer([("drop",), ("ok", GOOD_JSON)]) as server:
        use_server(server.base_url, max_retries=2, constrain="json_schema")
        memory_id = add(NOTE)
    assert len(server.requests) == 2
    memory = stored(memory_id)
    assert memory["compressed"] == GOOD_LINE
    assert memory["compression"]["method"] == "facts" and memory["compression"]["status"] == "done"


def test_pending_jobs_are_retried_by_compress_pending(tmp_path):
    with ScriptServer([("status", 500, {}), ("ok", GOOD_LINE)]) as server:
        use_server(server.base_url)
        memory_id = add(NOTE)
        assert stored(memory_id)["compression"]["status"] == "pending"
        result = ok("compress", "--pending")
    assert "1 done" in result.stderr
    assert stored(memory_id)["compressed"] == GOOD_LINE


def test_max_per_minute_holds_requests_back(tmp_path):
    clock = Clock()
    with ScriptServer(default=("ok", "fine")) as server:
        caller, send, slept = caller_for(server, tmp_path, clock, max_per_minute=2)
        assert caller.call(send, Deadline(10)) == "fine"
        assert caller.call(send, Deadline(10)) == "fine"
        with pytest.raises(ProviderError) as err:  # the next slot opens in 60 s: past a 10 s deadline
            caller.call(send, Deadline(10))
        assert err.value.kind == "rate-limited"
        assert len(server.requests) == 2
        assert caller.call(send, Deadline(120)) == "fine"  # waits for the slot
    assert slept == [60.0]
    assert len(server.requests) == 3


def test_max_concurrent_bounds_requests_in_flight(tmp_path):
    with ScriptServer(default=("slow", 0.3, "fine")) as server:
        caller, send, _ = caller_for(server, tmp_path, max_concurrent=1)
        results: list[str] = []
        threads = [threading.Thread(target=lambda: results.append(caller.call(send, Deadline(20)))) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
    assert results == ["fine"] * 3
    assert server.most_in_flight == 1


def test_a_missing_key_fails_without_sending(tmp_path, monkeypatch):
    monkeypatch.delenv("MEM_TEST_KEY", raising=False)
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url, api_key_env="MEM_TEST_KEY")
        memory_id = add(NOTE)
    assert server.requests == []
    info = stored(memory_id)["compression"]
    assert info["status"] == "failed" and "$MEM_TEST_KEY" in info["reason"]


def test_the_key_comes_from_the_environment_or_the_user_config(tmp_path, monkeypatch):
    with ScriptServer(default=("ok", GOOD_LINE)) as server:
        use_server(server.base_url, api_key_env="MEM_TEST_KEY")
        monkeypatch.setenv("MEM_TEST_KEY", "from-env-123")
        add(NOTE)
        monkeypatch.delenv("MEM_TEST_KEY")
        config = tmp_path / "config" / "config.yaml"
        config.parent.mkdir(exist_ok=True)
        config.write_text("api_keys:\n  MEM_TEST_KEY: from-file-456\n")
        config.chmod(0o600)
        add(NOTE + " Again.")
    assert [r["headers"]["Authorization"] for r in server.requests] == ["Bearer from-env-123", "Bearer from-file-456"]


def test_a_key_in_mem_yaml_is_refused(tmp_path):
    use_server("http://127.0.0.1:9/v1", api_key="sk-should-not-be-here")
    result = run("add", NOTE)
    assert result.exit_code == 5
    assert "api_key" in result.stderr and "api_key_env" in result.stderr
