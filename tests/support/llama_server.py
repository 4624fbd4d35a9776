"""llama-cpp-python's own OpenAI-compatible server (`python -m llama_cpp.server`), started on
127.0.0.1 for the tests that need a real compression server; stopped when they are done."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

START_TIMEOUT_S = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serve(model: Path, log: Path, threads: int = 2):
    """Yield the base URL (…/v1) of a server on `model`; its output goes to `log`."""
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads), "--model_alias", "smollm2"]
    # As mem itself runs llama.cpp (memcli.providers.llama): OpenMP threads that spin between operations
    # steal the cores a shared machine needs, and make the server several times slower under load.
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {process.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not answer within {START_TIMEOUT_S:g}s")
            time.sleep(0.2)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
