"""Where model work comes from: the protocols mem asks of a model, llama.cpp behind them, installing models.

`Providers` is the one seam between mem and its models: `Mem(store, providers=...)` takes it, the CLI
and the MCP server pass it down, tests hand in fakes, and another back end (a remote server) is one
more set of these callables. memcli.core.engines assembles the default, llama.cpp in this process.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from memcli.providers.protocols import Compressor, Embedder


@dataclass(frozen=True)
class Providers:
    embedder: Callable[[str], Embedder]  # model reference -> a loaded embedder
    compressor: Compressor  # the whole compression step (model, method, guard, fallbacks)
    token_counter: Callable[[str], Callable[[str], int]]  # model reference -> count(text)
    locate_model: Callable[[str, str], Path]  # (reference, role) -> the model file, or ModelError
    # What leaves the machine: None when compression runs here; else a description of the server
    # ("ollama:qwen2.5:1.5b"), and every text passes the egress gate (memcli.privacy.egress) first.
    remote: str | None = None
    status: Callable[[], dict] | None = None  # the worker's state for `mem status` (circuit, requests)
    # Free text from the provider's chat model, writer(system, user, max_tokens=, timeout_s=) (a thread's
    # summary); None when nothing may leave the machine or no provider is configured.
    writer: Callable[..., str] | None = None
