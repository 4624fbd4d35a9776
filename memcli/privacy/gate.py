"""The gate every write passes: secrets redacted, ignored paths refused, before anything is stored.

One object decides for every write path (add, edit, import, ingest, MCP), so the paths cannot drift
apart: whatever reaches a file, the catalog or a model has been through `redact_all`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from memcli.errors import Refused


class Gate:
    def __init__(self, home: Path, patterns: list[dict]):
        self.home = home  # the folder the store speaks for: its .memignore is the store's denylist
        self.patterns = patterns  # the store's own `redact` patterns from mem.yaml

    def ignore_rules(self, walk_root: Path | None = None):
        """The denylist (memcli.privacy.ignore.IgnoreRules) for this store, and for a walk of `walk_root`."""
        from memcli.privacy.ignore import IgnoreRules

        return IgnoreRules.load(self.home, walk_root)

    def refuse_ignored(self, path: Path | str, what: str = "file", rules=None, named: str | None = None) -> None:
        """Refused, naming the rule and where it is written, when the denylist ignores `path`."""
        found = (rules or self.ignore_rules()).match(path)
        if found is not None and found.ignored:
            raise Refused(f"refusing {what} {named or path}: it is ignored by {found.source_name}:{found.line}:"
                          f"{found.pattern} (`mem ignore check -v {path}` explains)")

    def refuse_ignored_source(self, source: str | None) -> None:
        """A `source` that names a local path (a plain path, `path#n`, or a file:// URI) must not be ignored;
        other URIs (https://, mailto:, ...) are not files mem could read, and pass."""
        from memcli.privacy.ignore import local_paths

        paths = local_paths(source) if source else []
        if paths:
            rules = self.ignore_rules()
            for path in paths:
                self.refuse_ignored(path, "source", rules, named=source)

    def redact(self, text: str):
        """The text with its secrets replaced (a memcli.privacy.redact.Redaction); Refused if a private key
        survives. A broken `redact` pattern in mem.yaml is a StoreError naming it."""
        from memcli.privacy.redact import check_no_private_key, redact

        result = redact(text, self.patterns)
        check_no_private_key(result.text)
        return result

    def redact_all(self, *texts: str | None) -> tuple[list[str | None], dict[str, int]]:
        """Each text redacted (None stays None), and the counts of all of them together."""
        counts: Counter[str] = Counter()
        out = []
        for text in texts:
            if text is not None:
                result = self.redact(text)
                text = result.text
                counts.update(result.counts)
            out.append(text)
        return out, dict(counts)
