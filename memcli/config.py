"""Store settings (mem.yaml).

mem.yaml is committed with a shared store, so it holds only what every teammate should agree on:
models, compression thresholds, redaction patterns, limits. Unknown keys are kept out of the way
with a warning rather than an error, so an older mem can still open a newer store.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields

from memcli.compress import methods
from memcli.errors import StoreError
from memcli.providers.registry import DEFAULT_COMPRESS_MODEL, DEFAULT_EMBED_MODEL

log = logging.getLogger("memcli")

ON_SIMILAR = ("keep", "update", "ask")  # what a write close to a current memory does (memcli/versions.py)
LOCAL = "local"
# Where each preset's OpenAI-compatible API lives and how it takes a constraint on the output:
# `grammar` (a GBNF grammar: llama.cpp's server, llama-cpp-python's), `json_schema` (response_format),
# or `none` (the prompt alone; Anthropic's compatibility layer ignores response_format).
PRESETS: dict[str, dict] = {
    "ollama": {"base_url": "http://localhost:11434/v1", "constrain": "json_schema"},
    "llamacpp": {"base_url": "http://127.0.0.1:8080/v1", "model": "default", "constrain": "grammar"},
    "openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY", "constrain": "json_schema"},
    "openrouter": {"base_url": "https://openrouter.ai/api/v1", "api_key_env": "OPENROUTER_API_KEY",
                   "constrain": "json_schema"},
    "anthropic": {"base_url": "https://api.anthropic.com/v1", "api_key_env": "ANTHROPIC_API_KEY", "constrain": "none"},
    "openai-compatible": {"constrain": "none"},
}
CONSTRAINTS = ("grammar", "json_schema", "none")
_SECRET_KEYS = {"api_key", "key", "token", "secret", "password", "authorization"}


@dataclass
class ProviderSettings:
    """Where compression runs (mem.yaml `provider`): `local` (llama.cpp in this process) or an
    OpenAI-compatible server, and how the worker treats it. The key is never here: mem.yaml is
    committed; `api_key_env` names the environment variable (or the entry of the user's config.yaml)."""

    name: str = LOCAL
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    constrain: str = "none"
    send_to_remote: bool = True  # false: nothing leaves the machine; memories are pruned locally
    timeout_seconds: float = 30.0
    max_retries: int = 3
    backoff_seconds: float = 1.0  # the first retry's delay; doubles each retry, with jitter
    max_backoff_seconds: float = 30.0
    max_per_minute: int = 60
    max_concurrent: int = 2
    circuit_threshold: int = 5
    circuit_cooldown_seconds: float = 30.0
    circuit_max_cooldown_seconds: float = 900.0
    idle_seconds: float = 5.0

    @property
    def remote(self) -> bool:
        return self.name != LOCAL

    def to_yaml(self):
        if not self.remote:
            return LOCAL
        preset = PRESETS.get(self.name, {})
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) != preset.get(f.name, f.default)}

    @classmethod
    def from_yaml(cls, data, origin: str) -> "ProviderSettings":
        if data is None or data == LOCAL:
            return cls()
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            raise StoreError(f"{origin}: 'provider' must be a name ({LOCAL}, {', '.join(PRESETS)}) or a mapping")
        data = dict(data)
        secret = _SECRET_KEYS & {str(k).lower() for k in data}
        if secret:
            raise StoreError(f"{origin}: provider: {sorted(secret)[0]!r} does not belong in mem.yaml (it is "
                             "committed); name an environment variable with api_key_env instead")
        name = str(data.pop("name", "openai-compatible" if "base_url" in data else LOCAL))
        if name != LOCAL and name not in PRESETS:
            raise StoreError(f"{origin}: provider: unknown name {name!r} (use {LOCAL}, {', '.join(PRESETS)})")
        known = {f.name: f for f in fields(cls)}
        values: dict = {"name": name, **PRESETS.get(name, {})}
        for key, value in data.items():
            if key not in known:
                log.warning("%s: unknown provider setting %r ignored", origin, key)
                continue
            default = known[key].default
            try:
                values[key] = None if value is None else str(value) if default is None else _coerce(value, default)
            except (TypeError, ValueError, OverflowError):
                raise StoreError(f"{origin}: provider: {key!r} should be like {default!r}, got {value!r}") from None
        settings = cls(**values)
        settings.validate(origin)
        return settings

    def validate(self, origin: str) -> None:
        if not self.remote:
            return
        if not self.base_url or not str(self.base_url).startswith(("http://", "https://")):
            raise StoreError(f"{origin}: provider {self.name} needs a base_url (http:// or https://)")
        if not self.model:
            raise StoreError(f"{origin}: provider {self.name} needs a model (the name the server knows it by)")
        if self.constrain not in CONSTRAINTS:
            raise StoreError(f"{origin}: provider: constrain must be one of {', '.join(CONSTRAINTS)}")
        if min(self.timeout_seconds, self.max_per_minute, self.max_concurrent, self.circuit_threshold,
               self.circuit_cooldown_seconds, self.idle_seconds) <= 0 or self.max_retries < 0:
            raise StoreError(f"{origin}: provider: timeouts, limits and the circuit settings must be positive")
        if self.circuit_max_cooldown_seconds < self.circuit_cooldown_seconds:
            raise StoreError(f"{origin}: provider: circuit_max_cooldown_seconds is below circuit_cooldown_seconds")


MAX_INPUT_BYTES = 1 << 30


@dataclass
class Settings:
    embed_model: str = DEFAULT_EMBED_MODEL
    compress_model: str = DEFAULT_COMPRESS_MODEL
    compress_method: str = methods.DEFAULT_METHOD
    compress_min_chars: int = 400
    compress_target: float = 0.6
    compress_timeout_s: float = 30.0
    max_input_bytes: int = 1024 * 1024
    ingest_chunk_chars: int = 1500
    thread_summarize_every: int = 10  # fold the oldest turns when more than this many are unfolded
    thread_window_tokens: int = 1500  # ... or when the unfolded turns pass about this many tokens
    on_similar: str = "keep"
    redact: list[dict] = field(default_factory=list)
    provider: ProviderSettings = field(default_factory=ProviderSettings)

    def to_yaml_dict(self) -> dict:
        return {
            "version": 1,
            "models": {"embed": self.embed_model, "compress": self.compress_model},
            "compress_method": self.compress_method,
            "compress_min_chars": self.compress_min_chars,
            "compress_target": self.compress_target,
            "compress_timeout_s": self.compress_timeout_s,
            "max_input_bytes": self.max_input_bytes,
            "ingest_chunk_chars": self.ingest_chunk_chars,
            "thread_summarize_every": self.thread_summarize_every,
            "thread_window_tokens": self.thread_window_tokens,
            "on_similar": self.on_similar,
            "redact": list(self.redact),
            "provider": self.provider.to_yaml(),
        }

    @classmethod
    def from_yaml_dict(cls, data: dict | None, origin: str) -> "Settings":
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise StoreError(f"{origin}: expected a mapping of settings")
        data = dict(data)
        data.pop("version", None)
        models = data.pop("models", None) or {}
        if not isinstance(models, dict):
            raise StoreError(f"{origin}: 'models' must be a mapping with 'embed' and 'compress'")
        values: dict = {}
        if "embed" in models:
            values["embed_model"] = str(models["embed"])
        if "compress" in models:
            values["compress_model"] = str(models["compress"])
        values["provider"] = ProviderSettings.from_yaml(data.pop("provider", None), origin)
        known = {f.name: f for f in fields(cls)}
        for key, value in data.items():
            if key not in known or key in ("embed_model", "compress_model", "provider"):
                log.warning("%s: unknown setting %r ignored", origin, key)
                continue
            default = getattr(cls(), key)
            try:
                values[key] = _coerce(value, default)
            except (TypeError, ValueError, OverflowError):
                raise StoreError(f"{origin}: setting {key!r} should be like {default!r}, got {value!r}") from None
        settings = cls(**values)
        if settings.provider.remote:
            # A server is there to write facts; prune needs every token's logits, so it always runs here
            # (as the fallback, or when asked: `mem compress --method prune`).
            settings.compress_method = "facts"
        settings.validate(origin)
        return settings

    def validate(self, origin: str) -> None:
        problem = methods.check(self.compress_method)
        if problem:
            raise StoreError(f"{origin}: compress_method: {problem}")
        if not 0.05 <= self.compress_target <= 0.95:
            raise StoreError(f"{origin}: compress_target must be between 0.05 and 0.95")
        if self.thread_summarize_every < 2 or self.thread_window_tokens < 50:
            raise StoreError(f"{origin}: thread_summarize_every must be at least 2, thread_window_tokens at least 50")
        if self.on_similar not in ON_SIMILAR:
            raise StoreError(f"{origin}: on_similar must be one of {', '.join(ON_SIMILAR)} (got {self.on_similar!r})")
        if self.max_input_bytes <= 0 or self.compress_min_chars < 0 or self.ingest_chunk_chars < 200:
            raise StoreError(f"{origin}: limits must be positive (ingest_chunk_chars at least 200)")
        if self.max_input_bytes > MAX_INPUT_BYTES:  # every read is bounded by a multiple of it
            raise StoreError(f"{origin}: max_input_bytes may be at most {MAX_INPUT_BYTES} (1 GiB)")
        for rule in self.redact:
            if not isinstance(rule, dict) or not {"name", "regex"} <= set(rule):
                raise StoreError(f"{origin}: each 'redact' entry needs a 'name' and a 'regex'")


def _coerce(value, default):
    if isinstance(default, bool):
        return bool(value)
    if isinstance(default, int):
        return int(value)
    if isinstance(default, float):
        return float(value)
    if isinstance(default, list):
        if not isinstance(value, list):
            raise TypeError
        return value
    return str(value)
