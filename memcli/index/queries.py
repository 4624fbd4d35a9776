"""The catalog's queries: memories by id, prefix, filter or label, and the counts commands show.

Every read is answered from the SQLite cache alone; keeping that cache up with the files (and
rebuilding it when damaged) is memcli.index.catalog's, which builds on this class.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import replace
from typing import Callable, Container, Iterable, Iterator

from memcli.errors import AmbiguousId, NotFound
from memcli.index import db as db_file
from memcli.index.filters import Filters
from memcli.store import ids
from memcli.store.ids import MIN_HANDLE, normalise_prefix
from memcli.store.memory import KEY_ORDER, Memory

MAX_MATCHES = 50  # an ambiguous handle names this many at most ("more than 50")


class CatalogQueries:
    """Reads over `db`, the catalog's connection; `recover` rebuilds a catalog found damaged midway."""

    db: sqlite3.Connection
    recover: Callable[[BaseException], object]
    _kept = None

    def resolve(self, handle: str) -> tuple[str, str]:
        """A unique id prefix or suffix → (id, path); unknown and ambiguous handles are errors, never
        guesses (the rule of memcli.store.ids, answered here in SQL)."""
        norm = ids.handle(handle)
        rows = self.db.execute(
            "SELECT id, path FROM memories WHERE id >= ?1 AND id < ?1 || '~'"
            " UNION SELECT id, path FROM memories WHERE tail >= ?2 AND tail < ?2 || '~' LIMIT ?3",
            (norm, norm[::-1], MAX_MATCHES + 1)).fetchall()
        if not rows:
            raise NotFound(f"no memory with id {handle!r}")
        if len(rows) > 1:
            matches = sorted(r[0] for r in rows)[:MAX_MATCHES]
            raise AmbiguousId(handle, matches, [self._describe(m) for m in matches[:10]],
                              more=len(rows) > MAX_MATCHES)
        return rows[0]

    def _describe(self, memory_id: str) -> str:
        memory = self.get(memory_id)
        text = " ".join(memory.raw.split())
        return f"{memory_id}  {memory.created_at[:10]}  {text[:60] + '…' if len(text) > 60 else text}"

    def short_id(self, memory_id: str, min_length: int = MIN_HANDLE) -> str:
        """The shortest tail of the id (at least min_length) that names only this memory today, like
        git's short hashes but from the random end: ids made close in time share long beginnings, and
        each character costs a reader about a token. `mem show`, `mem rm` and MCP accept it back."""
        return self.kept.get(("short id", memory_id, min_length), lambda: self._short_id(memory_id, min_length))

    def _short_id(self, memory_id: str, min_length: int) -> str:
        tail = memory_id[::-1]
        neighbours = self.db.execute(
            "SELECT (SELECT tail FROM memories WHERE tail < ?1 ORDER BY tail DESC LIMIT 1),"
            " (SELECT tail FROM memories WHERE tail > ?1 ORDER BY tail LIMIT 1)", (tail,)).fetchone()
        length = max(min_length, 1 + max((len(os.path.commonprefix([tail, other])) for other in neighbours if other),
                                         default=0))
        while length < len(memory_id) and self.db.execute(
                "SELECT 1 FROM memories WHERE id >= ?1 AND id < ?1 || '~' AND id != ?2 LIMIT 1",
                (memory_id[-length:], memory_id)).fetchone():
            length += 1  # it must not read as the beginning of another id either
        return memory_id[-length:]

    def exists(self, memory_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None

    def get(self, memory_id: str) -> Memory:
        row = self.db.execute("SELECT record, superseded_by, served_raw FROM memories WHERE id = ?",
                              (memory_id,)).fetchone()
        if not row:
            raise NotFound(f"no memory with id {memory_id!r}")
        return _from_record(*row)

    def find_content(self, key: str, besides: Container[str] = ()) -> str | None:
        """The current memory holding this text (an earlier version with it does not count: saying the old
        thing again is news), other than those `besides` names."""
        rows = self.db.execute("SELECT id FROM memories WHERE content_key = ? AND superseded_by IS NULL", (key,))
        return next((found for found, in rows if found not in besides), None)

    def list(self, filters: Filters, limit: int | None = None, newest_first: bool = True,
             offset: int = 0) -> Iterator[Memory]:
        """Memories in creation order. Damage met on the way rebuilds the catalog and the listing goes on
        where it was (the order is the files' own, so a rebuilt catalog gives the same one)."""
        where, params = filters.sql()
        order = "DESC" if newest_first else "ASC"
        sql = (f"SELECT record, superseded_by, served_raw FROM memories m WHERE {where}"
               f" ORDER BY m.created_at {order}, m.id {order}")
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            # A larger limit or offset means "all" or "none", and SQLite's integers stop at 2**63.
            params += [-1 if limit is None else min(limit, 1 << 62), min(offset, 1 << 62)]
        given = 0
        for attempt in range(2):
            try:
                for number, row in enumerate(self.db.execute(sql, params)):
                    if number >= given:
                        memory = _from_record(*row)
                        given += 1
                        yield memory
                return
            except Exception as exc:
                if attempt or not db_file.is_damage(exc):
                    raise
                self.recover(exc)

    def by_labels(self, labels: Iterable[int]) -> dict[int, Memory]:
        rows = db_file.rows_in(self.db, "SELECT label, record, superseded_by, served_raw FROM memories"
                                        " WHERE label IN ({marks})", list(labels))
        return {label: _from_record(*rest) for label, *rest in rows}

    def superseded_labels(self) -> frozenset[int]:
        """Labels of the versions a newer one replaced (a partial index makes this cheap), kept until the
        index changes."""
        return self.kept.get("superseded", lambda: frozenset(
            label for (label,) in self.db.execute("SELECT label FROM memories WHERE superseded_by IS NOT NULL")))

    def links(self, memory_ids: Iterable[str]) -> set[tuple[str, str]]:
        """(old, new) for every supersedes link that touches one of these ids."""
        ids = list(memory_ids)
        found = set()
        for column in ("old", "new"):
            found.update(db_file.rows_in(self.db, f"SELECT old, new FROM links WHERE {column} IN ({{marks}})", ids))
        return found

    def all_links(self) -> list[tuple[str, str]]:
        """(old, new) for every supersedes link."""
        return list(self.db.execute("SELECT old, new FROM links"))

    def branched(self) -> list[str]:
        """Ids that two or more versions supersede: where forks can be."""
        return [old for (old,) in self.db.execute("SELECT old FROM links GROUP BY old HAVING COUNT(*) > 1")]

    def labels(self, filters: Filters) -> set[int]:
        where, params = filters.sql()
        return {label for (label,) in self.db.execute(f"SELECT label FROM memories m WHERE {where}", params)}

    def bm25(self, match: str, filters: Filters, scored: int) -> list[tuple[int, float]]:
        """(label, score) for an FTS5 query over raw text, tags and date words, newest first, for the
        newest `scored` matches (FTS5 reads them newest first and stops there); higher is better (FTS5's
        bm25() is negated). Replaced versions are left out here, by superseded_labels: asking a matching
        row for its superseded_by follows the row's record to its end (overflow pages), half of what a
        match cost. When they cut the newest `scored` short, the next older matches are read."""
        every = replace(filters, all_versions=True)
        rows = self._bm25(match, every, scored)
        if filters.all_versions:
            return rows
        replaced = self.superseded_labels()
        current = [row for row in rows if row[0] not in replaced]
        while len(rows) == scored and len(current) < scored:
            rows = self._bm25(match, every, scored, before=rows[-1][0])
            current += [row for row in rows if row[0] not in replaced]
        return current[:scored]

    def _bm25(self, match: str, filters: Filters, scored: int, before: int | None = None) -> list[tuple[int, float]]:
        where, params = filters.sql("m")
        join = " JOIN memories m ON m.label = f.rowid" if where != "1" else ""
        older, bound = ("", []) if before is None else (" AND f.rowid < ?", [before])
        return self.db.execute(
            f"SELECT f.rowid, -bm25(fts, 1.0, 0.5, 1.0) FROM fts f{join} WHERE fts MATCH ? AND {where}{older}"
            " ORDER BY f.rowid DESC LIMIT ?", [match, *params, *bound, scored]).fetchall()

    @property
    def kept(self) -> db_file.Kept:
        """What reads compute from this connection's database, kept until it changes."""
        if self._kept is None or self._kept.db is not self.db:
            self._kept = db_file.Kept(self.db)
        return self._kept

    @property
    def lexicon(self):
        """Word counts and word scores for search (memcli.index.lexical), kept with this connection."""
        from memcli.index.lexical import Lexicon

        return Lexicon(self.kept, self)

    def ids_starting(self, prefix: str, limit: int) -> list[str]:
        """Ids that begin with `prefix` (as typed: any case, Crockford look-alikes), newest first."""
        norm = normalise_prefix(prefix) if prefix else ""
        if norm is None:
            return []
        rows = self.db.execute("SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id DESC LIMIT ?",
                               (norm, norm + "~", limit)).fetchall()
        return [row[0] for row in rows]

    def short_ids_starting(self, typed: str, limit: int) -> list[tuple[str, str]]:
        """(short id, id) of the memories whose short id, as listings show it, begins with `typed` (a short
        id typed in part), newest first."""
        norm = normalise_prefix(typed)
        if not norm:
            return []
        found = []
        # A short id is an id's last few characters (8 covers any store of fewer than 32**7 memories).
        for (memory_id,) in self.db.execute(
                "SELECT id FROM memories WHERE instr(substr(id, -8), ?) ORDER BY id DESC", (norm,)):
            short = self.short_id(memory_id)
            if short.startswith(norm):
                found.append((short, memory_id))
                if len(found) == limit:
                    break
        return found

    def tag_counts(self, filters: Filters) -> list[tuple[str, int]]:
        where, params = filters.sql()
        return self.db.execute(
            f"SELECT t.value, COUNT(*) AS n FROM memories m, json_each(m.tags) t WHERE {where}"
            " GROUP BY t.value ORDER BY n DESC, t.value", params).fetchall()

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]

    def status_counts(self) -> dict[str, int]:
        """How many memories are in each compression status (`none` for those without one)."""
        rows = self.db.execute("SELECT COALESCE(status, 'none'), COUNT(*) FROM memories GROUP BY 1").fetchall()
        return dict(rows)

    def served_raw(self) -> list[tuple[str, str]]:
        """(id, why) of the memories whose compressed form failed the guard when its file was taken in."""
        return self.db.execute("SELECT id, served_raw FROM memories WHERE served_raw IS NOT NULL"
                               " ORDER BY id").fetchall()

    def broken_files(self) -> list[tuple[str, str]]:
        return self.db.execute("SELECT path, error FROM broken ORDER BY path").fetchall()


def _from_record(record: str, superseded_by: str | None = None, served_raw: str | None = None) -> Memory:
    """Records in the catalog were validated when their file was read; rebuild them without checks
    (one that no longer parses means a damaged catalog)."""
    try:
        data = json.loads(record)
        known = {key: data.pop(key) for key in KEY_ORDER if key in data}
        return Memory(**known, extra=data, superseded_by=superseded_by, served_raw=served_raw)
    except (TypeError, ValueError, AttributeError) as exc:
        raise db_file.Damaged(f"a record in the catalog does not parse ({exc})") from None
