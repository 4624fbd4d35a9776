"""The gate every write passes: secrets redacted, ignored paths refused, before anything is stored.

One object decides for every write path (add, edit, import, ingest, MCP), so the paths cannot drift
apart: whatever reaches a file, the catalog or a model has been through `screen` (every field of a
record) or `redact` (a text before it is split or read further).
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from pathlib import Path

from memcli.errors import InputError, Refused
from memcli.store.memory import Memory

OWN_FIELDS = frozenset(field.name for field in dataclasses.fields(Memory))
STAMPS = frozenset({"id", "created_at", "updated_at", "supersedes"})  # ids and ISO times, never text
TEXTS = ("raw", "compressed")  # long texts, redacted as they are (no key gives them context)


class Gate:
    def __init__(self, home: Path, patterns: list[dict], gitignore: bool = True):
        self.home = home  # the folder the store speaks for: its .memignore is the store's denylist
        self.patterns = patterns  # the store's own `redact` patterns from mem.yaml
        self.gitignore = gitignore  # whether .gitignore files inside a git work tree count too

    def ignore_rules(self, walk_root: Path | None = None, *, follow_links: bool = False):
        """The denylist (memcli.privacy.ignore.IgnoreRules) for this store, and for a walk of `walk_root`
        (which follows links out of it only with `follow_links`)."""
        from memcli.privacy.ignore import IgnoreRules

        return IgnoreRules.load(self.home, walk_root, gitignore=self.gitignore, follow_links=follow_links)

    def refuse_ignored(self, path: Path | str, what: str = "file", rules=None, named: str | None = None,
                       found=None) -> None:
        """Refused, naming the rule and where it is written, when the denylist ignores `path` (under its
        name or what it resolves to)."""
        found = found if found is not None else (rules or self.ignore_rules()).match(path)
        if found is not None and found.ignored:
            via = f" (it leads to {found.via})" if found.via else ""
            raise Refused(f"refusing {what} {named or path}{via}: it is ignored by {found.source_name}:{found.line}:"
                          f"{found.pattern} (`mem ignore check -v {path}` explains)")

    def read_file(self, path: Path, limit: int, rules=None) -> str:
        """A file's text, read only when the denylist lets it be and only from the very file it decided on
        (memcli.privacy.pinned): Refused when ignored or swapped meanwhile, InputError when unusable."""
        from memcli.privacy.pinned import read_pinned
        from memcli.util.textio import decode

        if os.path.isdir(path):
            raise InputError(f"{path} is a directory; give a file (or use `mem ingest` for folders)")
        found, pinned = (rules or self.ignore_rules()).decide(path)
        self.refuse_ignored(path, found=found)
        try:
            data = read_pinned(pinned, limit)
        except PermissionError:
            raise InputError(f"cannot read {path}: permission denied") from None
        return decode(data, str(path), limit)

    def refuse_ignored_source(self, source: str | None) -> None:
        """A `source` that names a local path (a plain path, `path#n`, or a file:// URI; a relative one read
        from here and from the project, memcli.store.sources) must not be ignored; other URIs (https://,
        mailto:, ...) are not files mem could read, and pass."""
        from memcli.store.sources import local_paths

        paths = local_paths(source, self.home) if source else []
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

    def screen(self, record: dict, skip: tuple[str, ...] = ()) -> tuple[dict, dict[str, int]]:
        """A memory record with every string in it redacted, and the counts: the text, the short form,
        each tag (before tags are lower-cased, so a key's shape is still seen), source, written_by, the
        compression details and any key mem does not know, nested or not, and the keys but mem's own field names. A
        value held under a secret-named key (`password: two words`) goes whole. Refused if a private
        key survives anywhere. `skip` names top-level fields already screened."""
        from memcli.privacy.detectors import held_secret
        from memcli.privacy.redact import Redaction

        counts: Counter[str] = Counter()

        def clean(value, key: str):
            if isinstance(value, str):
                result = self.redact(value)
                if not result.total and key and key not in TEXTS:
                    # Shapes known by their context (`aws_secret_access_key: ...`, `Authorization: Bearer ...`).
                    head = f"{key}: "
                    in_context = self.redact(head + value)
                    if in_context.total and in_context.text.startswith(head):
                        result = Redaction(in_context.text[len(head):], in_context.counts)
                kind = None if result.total else held_secret(key, value)
                if kind:
                    counts[kind] += 1
                    return f"[REDACTED:{kind}]"
                counts.update(result.counts)
                return result.text
            if isinstance(value, dict):
                # mem's own field names are structure, not text (a user's redact pattern may match them).
                # Its ids and times are mem's own too, checked for their shape where they are read.
                return {clean(k, "") if isinstance(k, str) and not (value is record and k in OWN_FIELDS) else k:
                        v if value is record and (k in skip or k in STAMPS) else clean(v, k if isinstance(k, str) else "")
                        for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [clean(item, key) for item in value]
            if isinstance(value, (int, float)) and not isinstance(value, bool) and held_secret(key, str(value)):
                return clean(str(value), key)
            return value

        return clean(record, ""), dict(counts)
