"""Where compression runs (mem.yaml's `provider`): the presets of known OpenAI-compatible servers and the
settings the worker follows. memcli.config reads them as part of the store's settings."""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, fields

from memcli.errors import StoreError

log = logging.getLogger("memcli")

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
ON_WRITE = ("background", "wait")
_POSITIVE = ("timeout_seconds", "max_per_minute", "max_concurrent", "circuit_threshold", "circuit_cooldown_seconds",
             "idle_seconds")
_NOT_NEGATIVE = ("max_retries", "backoff_seconds", "max_backoff_seconds")
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
    # What a one-shot write (`mem add`, `mem update`) does with a compression for the server: `background`
    # queues it for a detached runner and returns at once (a write never waits on a server); `wait` asks
    # the server before returning (and still stores the memory first).
    on_write: str = "background"

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
            default = "" if known[key].default is None else known[key].default
            try:
                values[key] = None if value is None else coerce(value, default)
            except TypeError:
                raise StoreError(f"{origin}: provider: {key!r} must be {kind_of(default)}, got {value!r}") from None
        settings = cls(**values)
        settings.validate(origin)
        return settings

    def validate(self, origin: str) -> None:
        if not self.remote:
            return
        if not self.base_url or not str(self.base_url).startswith(("http://", "https://")):
            raise StoreError(f"{origin}: provider {self.name} needs a base_url (http:// or https://)")
        credential = _credential_in(self.base_url)
        if credential:
            raise StoreError(f"{origin}: provider: base_url must not hold {credential} (it is written in mem.yaml, "
                             "shown by `mem status` and sent in every request); name the key's environment "
                             "variable with api_key_env instead")
        if not self.model:
            raise StoreError(f"{origin}: provider {self.name} needs a model (the name the server knows it by)")
        if self.constrain not in CONSTRAINTS:
            raise StoreError(f"{origin}: provider: constrain must be one of {', '.join(CONSTRAINTS)}")
        if self.on_write not in ON_WRITE:
            raise StoreError(f"{origin}: provider: on_write must be one of {', '.join(ON_WRITE)}")
        for name in _POSITIVE + _NOT_NEGATIVE:
            if getattr(self, name) < 0 or (name in _POSITIVE and getattr(self, name) == 0):
                raise StoreError(f"{origin}: provider: {name} must be {'above' if name in _POSITIVE else 'at least'} 0")
        if self.circuit_max_cooldown_seconds < self.circuit_cooldown_seconds:
            raise StoreError(f"{origin}: provider: circuit_max_cooldown_seconds is below circuit_cooldown_seconds")


_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session", re.IGNORECASE)


def _credential_in(url: str) -> str | None:
    """What in a server's URL is a credential (a user and password, a key in the query), by its name only."""
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        return "a user or password"
    names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if _SECRET_PARAM.search(name)]
    return f"a credential in its query ({names[0]!r})" if names else None


def coerce(value, default):
    """A mem.yaml value as it is, when it has its default's type (a whole number where a number is
    expected is fine); TypeError otherwise. Nothing is converted: `send_to_remote: "false"` is a string,
    and read as a truth it would send every text."""
    if isinstance(default, bool) or isinstance(value, bool):
        if not (isinstance(default, bool) and isinstance(value, bool)):
            raise TypeError
        return value
    if isinstance(default, int):
        if not isinstance(value, int):
            raise TypeError
        return value
    if isinstance(default, float):
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise TypeError
        return float(value)
    if not isinstance(value, type(default)):
        raise TypeError
    return value


def kind_of(default) -> str:
    """What a setting takes, in the words of a YAML file."""
    if isinstance(default, bool):
        return "true or false (unquoted)"
    if isinstance(default, int):
        return "a whole number"
    if isinstance(default, float):
        return "a finite number"
    return "a list" if isinstance(default, list) else "a string"
