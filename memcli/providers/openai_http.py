"""One chat completion from an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio, OpenAI,
OpenRouter, Anthropic's compatibility endpoint) over httpx, with every failure turned into a
ProviderError of a known kind, so the worker can tell "try again later" from "stop".

The key comes from the environment variable named by `api_key_env`, else from the `api_keys` mapping
of the user's config file (`~/.config/mem/config.yaml`, outside any store): never from mem.yaml.
"""

from __future__ import annotations

import email.utils
import logging
import os
import time
from typing import Any

from memcli.errors import ProviderError
from memcli.providers.settings import ProviderSettings
from memcli.util.paths import user_config_dir

log = logging.getLogger("memcli")

USER_CONFIG = "config.yaml"


def api_key(settings: ProviderSettings) -> str | None:
    """The key for the provider, or None when it needs none (no api_key_env). ProviderError("auth")
    when it needs one that is nowhere to be found."""
    name = settings.api_key_env
    if not name:
        return None
    if os.environ.get(name):
        return os.environ[name]
    path = user_config_dir() / USER_CONFIG
    keys = read_user_config(path).get("api_keys") or {}
    if isinstance(keys, dict) and keys.get(name):
        if path.stat().st_mode & 0o077:
            log.warning("%s holds an API key and others can read it: chmod 600 %s", path, path)
        return str(keys[name])
    raise ProviderError("auth", f"no API key: set ${name} or api_keys.{name} in {path}")


def read_user_config(path) -> dict:
    """The user's own config.yaml (outside any store), {} when there is none."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, yaml.YAMLError) as exc:
        raise ProviderError("auth", f"cannot read {path}: {exc}") from None
    return data if isinstance(data, dict) else {}


class ChatClient:
    """A keep-alive connection to one server; `complete` sends one request and never retries (the
    worker in memcli.providers.calls decides that)."""

    def __init__(self, settings: ProviderSettings):
        import httpx

        key = api_key(settings)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.settings, self.key = settings, key
        self.client = httpx.Client(base_url=settings.base_url.rstrip("/") + "/", headers=headers,
                                   timeout=settings.timeout_seconds, trust_env=True)

    def complete(self, messages: list[dict], *, max_tokens: int, extra: dict[str, Any], timeout: float) -> str:
        import httpx

        body = {"model": self.settings.model, "messages": messages, "max_tokens": max_tokens,
                "temperature": 0.0, "stream": False, **extra}
        try:
            response = self.client.post("chat/completions", json=body, timeout=timeout)
        except httpx.TimeoutException:
            raise ProviderError("timeout", f"no answer within {timeout:g}s") from None
        except httpx.TransportError as exc:
            raise ProviderError("connection", self.scrub(f"{type(exc).__name__}: {exc}".rstrip(": "))) from None
        _raise_for_status(response, self.scrub)
        try:
            return response.json()["choices"][0]["message"]["content"] or ""
        except (ValueError, LookupError, TypeError):
            raise ProviderError("bad-response", f"not a chat completion: {self.scrub(response.text)[:120]!r}") from None

    def scrub(self, text: str) -> str:
        """A server's words without our key: an error that quotes the request (as some proxies do) becomes a
        memory's `compression.reason`, the circuit's state file and a line on stderr. (The reason is
        redacted again when it is stored, as every field is.)"""
        return text.replace(self.key, "[REDACTED:api-key]") if self.key else text

    def close(self) -> None:
        self.client.close()


def _raise_for_status(response, scrub) -> None:
    status = response.status_code
    if status < 400:
        return
    detail = f"HTTP {status} from {response.request.url.host}: {_message(response, scrub)}"
    if status in (401, 403):
        raise ProviderError("auth", detail)
    if status == 429:
        raise ProviderError("rate-limit", detail, retry_after=retry_after(response.headers.get("retry-after")))
    if status >= 500:
        raise ProviderError("server", detail, retry_after=retry_after(response.headers.get("retry-after")))
    raise ProviderError("bad-request", detail)


def _message(response, scrub) -> str:
    try:
        error = response.json().get("error")
        text = error.get("message") if isinstance(error, dict) else error
    except (ValueError, AttributeError):
        text = None
    return scrub(" ".join(str(text or response.text or response.reason_phrase).split()))[:160]


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds: a number, or an HTTP date (RFC 9110)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())
