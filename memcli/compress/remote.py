"""Compression on an OpenAI-compatible server: the `facts` line written by the provider's model, held
to the same guard as a local one, with the local model behind it.

- `facts`: the egress gate has let the text out (memcli.privacy.egress, run by the write path); the
  server writes the KEY=value line under the strongest constraint it takes (a GBNF grammar, a JSON
  schema, or the prompt alone); the guard checks it. A rejected line falls back to `prune` on the
  local model, then to the raw text, as in memcli.compress.pipeline; `reason` records why.
- `prune`, and any memory kept on the machine (`local_only`): the local compressor, nothing sent.
- The server unreachable, slow, rate-limited or its circuit open: status `pending` with the reason
  (the job is tried again later: `mem compress --pending`, or the MCP server's idle worker). A
  rejected key: status `failed`, reason `auth: ...`. The raw text is stored either way.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from memcli.compress import guard
from memcli.compress.keyvalues import GRAMMAR, KEYS, SEPARATOR, SYSTEM_PROMPT, clean
from memcli.compress.kinds import PROSE_KINDS, detect
from memcli.errors import ProviderError, describe
from memcli.providers import Providers
from memcli.providers.protocols import Deadline
from memcli.providers.settings import ProviderSettings

log = logging.getLogger("memcli")

MAX_FACTS_TOKENS = 512
_WORD_TOKENS = 0.75  # words per token, for a reply whose size no local tokenizer can count

FACTS_SCHEMA = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"key": {"type": "string", "enum": list(KEYS)}, "value": {"type": "string"}},
                "required": ["key", "value"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["facts"],
    "additionalProperties": False,
}


def constraint(kind: str) -> dict:
    """The request fields that hold the reply to the facts format on a server of this kind."""
    if kind == "grammar":
        return {"grammar": GRAMMAR}
    if kind == "json_schema":
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": "facts", "strict": True, "schema": FACTS_SCHEMA}}}
    return {}


def facts_line(reply: str) -> str:
    """The KEY=value line from a reply: the JSON of a schema-held reply, else its first line."""
    text = reply.strip()
    if text.startswith("{"):
        try:
            pairs = json.loads(text).get("facts") or []
            return clean(SEPARATOR.join(f"{p.get('key')}={p.get('value')}" for p in pairs if isinstance(p, dict)))
        except (ValueError, AttributeError):
            pass
    return clean(text.splitlines()[0] if text else "")


class RemoteCompressor:
    """memcli.providers.protocols.Compressor for a provider; `local` is the in-process compressor it
    falls back to (and uses for whatever must stay on the machine)."""

    def __init__(self, settings: ProviderSettings, index_dir: Path, local: Providers, local_model: str, *,
                 caller=None):
        from memcli.providers.calls import Caller
        from memcli.providers.circuit import CircuitState

        self.settings = settings
        self.local = local
        self.local_model = local_model
        self.caller = caller or Caller(settings, CircuitState(index_dir, settings))
        self.name = f"{settings.name}:{settings.model}"
        self._client = None
        self._client_lock = threading.Lock()
        self._counter = None

    def status(self) -> dict:
        """The provider and its worker's state, for `mem status`."""
        return {"provider": self.settings.name, "base_url": self.settings.base_url, "model": self.settings.model,
                **self.caller.state.snapshot()}

    def client(self):
        from memcli.providers.openai_http import ChatClient

        with self._client_lock:
            if self._client is None:
                self._client = ChatClient(self.settings)
            return self._client

    def count_tokens(self, text: str) -> int:
        """The local compression model's tokenizer (what mem counts every budget in); a word estimate
        when that model is not installed."""
        if self._counter is None:
            try:
                self._counter = self.local.token_counter(self.local_model)
            except Exception as exc:  # noqa: BLE001 - a missing local model must not stop remote compression
                log.info("counting tokens by words (%s)", describe(exc))
                self._counter = lambda text: max(1, round(len(text.split()) / _WORD_TOKENS))
        return self._counter(text)

    def __call__(self, raw: str, *, method: str, ratio: float, model: str, min_chars: int, timeout_s: float,
                 local_only: bool = False):
        from memcli.compress.pipeline import Compression, too_short

        local = dict(ratio=ratio, model=model, min_chars=min_chars, timeout_s=timeout_s)
        # Only prose is worth a facts line: code, diffs and tool output are compressed here by kind.
        if method != "facts" or local_only or not self.settings.send_to_remote or detect(raw) not in PROSE_KINDS:
            return self.local.compressor(raw, method="prune" if method == "facts" else method, **local)
        short = too_short(raw, min_chars)
        if short:
            return Compression(None, {"method": method, "model": self.name, "status": "skipped", "reason": short})
        deadline = Deadline(timeout_s)
        try:
            line = self.facts(raw, deadline)
        except ProviderError as exc:
            if exc.transient or exc.kind == "auth":
                status = "pending" if exc.transient else "failed"
                return Compression(None, {"method": "facts", "model": self.name, "status": status,
                                          "reason": _short(str(exc))})
            why = f"facts from {self.name} failed: {exc}"  # the server cannot do this request: no use retrying
        else:
            reason = guard.check(raw, line, self.count_tokens, allowed=KEYS)
            if reason is None:
                return Compression(line, {"method": "facts", "model": self.name, "raw_tokens": self.count_tokens(raw),
                                          "tokens": self.count_tokens(line), "status": "done",
                                          "guarded": guard.seal(raw, line, "facts")})
            why = f"facts from {self.name} rejected: {reason}"
        log.info("%s; falling back to prune", why)
        local["timeout_s"] = max(1.0, deadline.remaining())
        fallback = self.local.compressor(raw, method="prune", **local)
        info = dict(fallback.info)
        info["reason"] = _short(why + (f"; then {info['reason']}" if info.get("reason") else ""))
        return Compression(fallback.text, info)

    def facts(self, raw: str, deadline: Deadline) -> str:
        """The facts line the server writes for raw (one request, retried by the caller's rules)."""
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": raw}]
        max_tokens = min(self.count_tokens(raw), MAX_FACTS_TOKENS)
        extra = constraint(self.settings.constrain)
        client = self.client()  # no key: failed at once, without a request or a mark on the circuit
        reply = self.caller.call(
            lambda timeout: client.complete(messages, max_tokens=max_tokens, extra=extra, timeout=timeout), deadline)
        return facts_line(reply)


    def write(self, system: str, user: str, *, max_tokens: int, timeout_s: float) -> str:
        """Free text from the server's model (a thread's summary): one request, retried by the caller's
        rules; the caller has passed `user` through the egress gate and checks the reply itself."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        client = self.client()
        return self.caller.call(lambda timeout: client.complete(messages, max_tokens=max_tokens, extra={}, timeout=timeout),
                                Deadline(timeout_s)).strip()


def _short(reason: str, limit: int = 200) -> str:
    return reason if len(reason) <= limit else reason[: limit - 3] + "..."
