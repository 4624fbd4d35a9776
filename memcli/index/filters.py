"""Which memories a read wants: tags (all of them), a time window, a source glob; current versions only
unless `all_versions` (memcli/versions.py).

One value object shared by listing, search (both sides) and export, turned into SQL in one place.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Filters:
    tags: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    source: str | None = None
    all_versions: bool = False

    def __bool__(self) -> bool:
        """Whether it narrows the set beyond current versions (which the vector side leaves out by itself)."""
        return bool(self.tags or self.since or self.until or self.source)

    def sql(self, alias: str = "m") -> tuple[str, list]:
        clauses, params = [], []
        for tag in self.tags:
            clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)")
            params.append(tag)
        if self.since:
            clauses.append(f"{alias}.created_at >= ?")
            params.append(self.since)
        if self.until:
            clauses.append(f"{alias}.created_at <= ?")
            params.append(self.until)
        if self.source:
            clauses.append(f"{alias}.source GLOB ?")
            params.append(self.source)
        if not self.all_versions:
            clauses.append(f"{alias}.superseded_by IS NULL")
        return (" AND ".join(clauses) or "1"), params
