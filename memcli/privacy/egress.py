"""The egress gate: the last check before a memory's text leaves the machine for a compression server.

Runs on every job bound for a provider, after the write-time gate, because the stored text may have
changed since (a hand edit, a teammate's file merged by git, new `redact` patterns in mem.yaml):

- the memory asked to stay here (`send_to_remote: false`, from `mem add --local-only`): compressed
  locally, nothing sent;
- its source is named by the denylist (.memignore, .gitignore, the defaults): status `skipped`,
  reason `path excluded`, nothing sent;
- redaction runs again with the same detectors; a high-risk secret (a private key, a cloud
  credential) found by this second pass, or any trace of one left after it, means the text escaped
  the write-time gate: status `quarantined` with the reason, nothing sent. Other secrets found now are
  replaced in what is sent (the stored text stays as it is).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcli.privacy.gate import Gate
from memcli.privacy.redact import PRIVATE_KEY_TRACE, redact

HIGH_RISK_KINDS = frozenset({"private-key", "aws-access-key", "aws-secret-key", "google-api-key"})
# Looser than the redactors on purpose: traces of a credential that redaction would not replace
# (a cut-off key block, a key glued to other text, a cloud credentials file).
_TRACES = (
    ("private-key", PRIVATE_KEY_TRACE),  # the same traces that stop a write (SSH2 blocks have four dashes)
    ("aws-access-key", re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}")),
    ("aws-secret-key", re.compile(r"(?i)aws_secret_access_key\s*[=:]\s*[A-Za-z0-9/+]{20}")),
    ("gcp-service-account", re.compile(r'"private_key_id"\s*:\s*"[0-9a-f]{20}')),
    ("azure-storage-key", re.compile(r"AccountKey=[A-Za-z0-9+/]{40}")),
)


@dataclass
class Egress:
    text: str | None  # what may be sent, or None when nothing may
    info: dict | None = None  # the `compression` mapping of a job that is not sent
    local_only: bool = False  # compress here instead


def check(gate: Gate, raw: str, source: str | None, *, keep_local: bool) -> Egress:
    if keep_local:
        return Egress(None, local_only=True)
    if _excluded(gate, source):
        return Egress(None, {"status": "skipped", "reason": "path excluded"})
    result = redact(raw, gate.patterns)
    found = sorted(HIGH_RISK_KINDS & set(result.counts))
    found += [kind for kind, pattern in _TRACES if pattern.search(result.text) and kind not in found]
    if found:
        return Egress(None, {"status": "quarantined",
                             "reason": f"holds a {found[0]} that redaction had not removed; not sent"})
    return Egress(result.text)


def _excluded(gate: Gate, source: str | None) -> bool:
    from memcli.store.sources import local_paths

    paths = local_paths(source, gate.home) if source else []
    if not paths:
        return False
    rules = gate.ignore_rules()
    return any((found := rules.match(path)) is not None and found.ignored for path in paths)
