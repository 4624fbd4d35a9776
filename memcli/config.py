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
from memcli.providers.settings import ProviderSettings, coerce, kind_of
from memcli.util.user_regex import compile_pattern

log = logging.getLogger("memcli")

ON_SIMILAR = ("keep", "update", "ask")  # what a write close to a current memory does (memcli/core/writing.py)
MAX_INPUT_BYTES = 1 << 30


@dataclass
class Settings:
    embed_model: str = DEFAULT_EMBED_MODEL
    compress_model: str = DEFAULT_COMPRESS_MODEL
    compress_method: str = methods.DEFAULT_METHOD
    compress_min_chars: int = methods.DEFAULT_MIN_CHARS
    compress_target: float = 0.6
    compress_timeout_s: float = 30.0
    max_input_bytes: int = 1024 * 1024
    ingest_chunk_chars: int = 1500
    thread_summarize_every: int = 10  # fold the oldest turns when more than this many are unfolded
    thread_window_tokens: int = 1500  # ... or when the unfolded turns pass about this many tokens
    on_similar: str = "keep"
    redact: list[dict] = field(default_factory=list)
    capture: dict = field(default_factory=dict)  # `mem hook`'s settings, read by memcli.capture.options
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
            **({"capture": dict(self.capture)} if self.capture else {}),
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
        for name in ("embed", "compress"):
            if name in models:
                if not isinstance(models[name], str):
                    raise StoreError(f"{origin}: models: {name!r} must be a string, got {models[name]!r}")
                values[f"{name}_model"] = models[name]
        values["provider"] = ProviderSettings.from_yaml(data.pop("provider", None), origin)
        capture = data.pop("capture", None)
        if capture is not None and not isinstance(capture, dict):
            raise StoreError(f"{origin}: 'capture' must be a mapping (see docs/capture.md)")
        values["capture"] = capture or {}
        known = {f.name: f for f in fields(cls)}
        for key, value in data.items():
            if key not in known or key in ("embed_model", "compress_model", "provider"):
                log.warning("%s: unknown setting %r ignored", origin, key)
                continue
            default = getattr(cls(), key)
            try:
                values[key] = coerce(value, default)
            except TypeError:
                raise StoreError(f"{origin}: setting {key!r} must be {kind_of(default)}, got {value!r}") from None
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
            if isinstance(rule["name"], str) and isinstance(rule["regex"], str) and rule["regex"]:
                compile_pattern(rule["name"], rule["regex"])  # a broken pattern is named before any write
