"""Which memories a read wants: tags (all of them), a time window, source globs (any of them, as
memcli.store.sources reads a typed `--source`), the content kind compression found and who wrote it
(`mem ui`'s filters); current versions only unless `all_versions` (memcli/index/versions.py).

One value object shared by listing, search (both sides) and export, turned into SQL in one place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Filters:
    tags: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    source: str | tuple[str, ...] | None = None  # a GLOB, or several: a memory matching any one is wanted
    all_versions: bool = False
    kind: str | None = None  # compression.kind (memcli.compress.kinds): prose, diff, log, ...
    written_by: str | None = None  # cli, mcp:<name>, a coding assistant's name, ...

    def __post_init__(self):
        """Lists become tuples: a Filters is a key of what search keeps (memcli.index.lexical)."""
        object.__setattr__(self, "tags", tuple(self.tags))
        if isinstance(self.source, list):
            object.__setattr__(self, "source", tuple(self.source))

    @classmethod
    def parse(cls, tags=(), since: str | None = None, until: str | None = None,
              source: str | None = None, all_versions: bool = False, home: Path | None = None,
              kind: str | None = None, written_by: str | None = None) -> "Filters":
        """From what a person or an assistant typed (`-t`, `--since 3d`, MCP arguments), checked. Given
        the project's `home`, `source` is a path from the working directory (memcli.store.sources.globs)."""
        from memcli.index.when import parse_when
        from memcli.store.memory import check_text, normalise_tags
        from memcli.store.sources import globs

        return cls(tags=tuple(normalise_tags(tags)), since=parse_when(since) if since else None,
                   until=parse_when(until, end_of_day=True) if until else None,
                   source=globs(check_text(source, "the source filter"), home) if source else None,
                   all_versions=all_versions, kind=check_text(kind, "the kind filter") if kind else None,
                   written_by=check_text(written_by, "the written-by filter") if written_by else None)

    def __bool__(self) -> bool:
        """Whether it narrows the set beyond current versions (which the vector side leaves out by itself)."""
        return bool(self.tags or self.since or self.until or self.source or self.kind or self.written_by)

    def sql(self, alias: str = "m") -> tuple[str, list]:
        clauses, params = [], []
        tags = list(dict.fromkeys(self.tags))
        if len(tags) == 1:
            clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)")
            params.append(tags[0])
        elif tags:
            # Every one of several tags in one clause with one parameter: a clause per tag would hit
            # SQLite's limits on expression depth and parameters past a thousand tags.
            clauses.append(f"(SELECT COUNT(DISTINCT value) FROM json_each({alias}.tags) "
                           "WHERE value IN (SELECT value FROM json_each(?))) = ?")
            params += [json.dumps(tags), len(tags)]
        if self.since:
            clauses.append(f"{alias}.created_at >= ?")
            params.append(self.since)
        if self.until:
            clauses.append(f"{alias}.created_at <= ?")
            params.append(self.until)
        if self.source:
            patterns = (self.source,) if isinstance(self.source, str) else self.source
            clauses.append("(" + " OR ".join([f"{alias}.source GLOB ?"] * len(patterns)) + ")")
            params += patterns
        if self.kind:
            clauses.append(f"json_extract({alias}.record, '$.compression.kind') = ?")
            params.append(self.kind)
        if self.written_by:
            clauses.append(f"json_extract({alias}.record, '$.written_by') = ?")
            params.append(self.written_by)
        if not self.all_versions:
            clauses.append(f"{alias}.superseded_by IS NULL")
        return (" AND ".join(clauses) or "1"), params
