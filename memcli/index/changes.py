"""How the catalog finds what changed on disk, by any process, without reading the files.

Adding, deleting or renaming a file into place (git checkout and pull, other mem processes, editors
that save by renaming) changes its folder's mtime, so the catalog keeps every folder's mtime and, when
none moved, looks no further: a handful of stats, whatever the store's size. A changed folder has its
own files looked at. A file rewritten in place changes no folder; it is seen at the next full look at
every file, which happens when the last one is older than FULL_LOOK_EVERY times what it cost (at least
FULL_LOOK_MIN_S): at once in a small store, within a few seconds at 100k memories, where a full look
costs half a second: a stat of every file, whose stamps are compared with the catalog's only when their
sums differ (_TALLY). A one-shot search has that look made by a child while it loads the vector graph
(memcli.core.reading). With `patience` n, the full look waits until it is n times that late: a server
answering a request leaves it to its idle moments, unless it is never idle.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memcli.errors import StoreError
from memcli.index import db as db_file
from memcli.index import stamps
from memcli.index.stamps import RACY, SETTLED_NS

if TYPE_CHECKING:
    from memcli.store.folder import Store
    from memcli.util.forked import Child

# A file rewritten in place changes no folder's mtime; every file is looked at when the last full look is
# older than this many times what that look cost (and at least FULL_LOOK_MIN_S).
FULL_LOOK_EVERY = 10
FULL_LOOK_MIN_S = 0.2

# A one-shot search looks at every file in a child of its own when the last look cost at least this: a
# cheaper look (under some 20,000 files) hides behind the model's load in the other child anyway
# (bench/cold_search.py --due, bench/RESULTS.md).
LOOK_AHEAD_MIN_S = 0.1

# The stamps of every file are tallied as sums modulo this (SQLite's integers overflow at 2**63): see _TALLY.
TALLY_MOD = 1 << 40

Expected = tuple[tuple[int, ...], dict[str, "int | None"]]


@dataclass
class Scan:
    """A look at every file: every folder's mtime, and the files' stamps, None when they tally with what
    the catalog held when the look began (nothing changed); `began` and `started_ns` are when it began,
    `seconds` what it cost."""

    began: float
    started_ns: int
    seconds: float
    folders: dict[str, int | None]
    files: list[stamps.Stamped] | None


@dataclass
class Found:
    """What one look found: files new or changed and paths gone, the folders it looked at (None: all),
    when it began and what it cost."""

    fresh: list[stamps.Stamped]
    gone: list[str]
    folders: list[str] | None
    began: float
    started_ns: int
    cost: float


class Looks:
    """The catalog's looks at the files; `catalog` gives the open database (`db`) and the `store`."""

    def __init__(self, catalog):
        self.catalog = catalog
        self._seen_folders: dict[str, int | None] = {}
        self._ahead: Child | None = None  # a look at every file made by a child (expect)

    @property
    def db(self):
        return self.catalog.db

    @property
    def store(self) -> Store:
        return self.catalog.store

    def drop_ahead(self) -> None:
        if self._ahead is not None:  # what it tallies against is about to go
            self._ahead.stop()
            self._ahead = None

    def due(self) -> Expected | None:
        """What a child's look at every file should tally against, when such a look is worth making
        now (due, and costly enough to be worth a child); else None."""
        if self._ahead is not None or not self.catalog.path.exists():
            return None
        try:
            last = self._last_full_look()
            if last is None or last[1] < LOOK_AHEAD_MIN_S or time.time() <= _due_at(last, 1):
                return None
            return self._expected()
        except Exception as exc:
            if not db_file.is_damage(exc):
                raise
            return None  # the refresh rebuilds it

    def expect(self, child: Child | None) -> None:
        """A child's scan_every_file, made for this catalog's next look to take."""
        self._ahead = child

    def find(self, full: bool, patience: float = 1) -> Found | None:
        """What changed since the last look; None when no folder moved and no full look is due."""
        began, started_ns = time.time(), time.time_ns()
        folders = None if full else self._changed_folders(patience)
        scan, ahead, self._ahead = None, self._ahead, None
        if ahead is not None and folders is None and not full:
            scan = ahead.result()  # None when the child failed: the look is made here
        elif ahead is not None:
            ahead.stop()  # another process looked at every file meanwhile, or this look compares every stamp
        if folders == []:
            return None
        if folders is None:
            scan = scan or scan_every_file(self.store, None if full else self._expected())
            began, started_ns, counted = scan.began, scan.started_ns, time.time() - scan.seconds
            fresh, gone = self._diff_every_file(scan)
        else:
            counted = began
            fresh, gone = self._diff(folders)
        return Found(fresh, gone, folders, began, started_ns, time.time() - counted)

    def remember(self, found: Found) -> None:
        """Store the mtime of every folder just looked at; one that moved within SETTLED_NS of the look
        is stored as -1 (it may change again within the same clock tick unnoticed), so it is looked at
        again next time, as git treats a "racily clean" file."""
        rows = [(folder, -1 if mtime is not None and mtime >= found.started_ns - SETTLED_NS else mtime)
                for folder, mtime in self._seen_folders.items()]
        with db_file.transaction(self.db) as db:
            if found.folders is None:
                db.execute("DELETE FROM folders")
                db_file.set_meta(db, "full_look", json.dumps([found.began, found.cost]))
            db.executemany("INSERT OR REPLACE INTO folders VALUES (?, ?)", rows)
            db.execute("DELETE FROM folders WHERE mtime_ns IS NULL AND path != 'memories'")

    def full_look_due_at(self, patience: float = 1) -> float:
        """When the next command looks at every file (0 when none was made)."""
        last = self._last_full_look()
        return 0.0 if last is None else _due_at(last, patience)

    def behind(self) -> tuple[int, int]:
        """How far the catalog is behind the files, without catching up: (new or changed, removed), every
        stamp compared. A file only due for its second look (RACY) is not behind."""
        fresh, gone = self._diff_every_file(scan_every_file(self.store, None))
        settling = sum(1 for path, *_ in fresh if self.db.execute(
            "SELECT 1 FROM memories WHERE path = ? AND ctime_ns = ?", (path, RACY)).fetchone())
        return len(fresh) - settling, len(gone)

    def as_they_are_now(self, found: Found) -> tuple[list[stamps.Stamped], list[str]]:
        """The files a look found new, changed or gone, stat'ed again under the store's lock (a mem writer
        may have finished with them meanwhile). Only these: looking at their folders again would read
        every file of a large import's folder twice, and whatever else changed since the look moved a
        folder's mtime after the one the look recorded, so the next look finds it."""
        now, vanished = [], []
        for path in [path for path, *_ in found.fresh] + found.gone:
            try:
                info = os.stat(self.store.file_path(path))
            except (OSError, StoreError):
                vanished.append(path)
                continue
            now.append((path, info.st_mtime_ns, info.st_size, info.st_ctime_ns))
        return now, vanished

    def _expected(self) -> Expected:
        """What a look at every file finds when nothing changed: the tally of the stamps the catalog
        holds, and the folders' mtimes as recorded."""
        count, mtimes, sizes, ctimes = self.db.execute(_TALLY).fetchone()
        return ((count, mtimes % TALLY_MOD, sizes, ctimes % TALLY_MOD),
                dict(self.db.execute("SELECT path, mtime_ns FROM folders")))

    def _last_full_look(self) -> tuple[float, float] | None:
        """(when it began, what it cost) of the last look at every file; None when there was none."""
        try:
            at, cost = json.loads(db_file.meta(self.db, "full_look") or "null")
        except (TypeError, ValueError):  # never looked, or a meta row that does not parse
            return None
        return at, cost

    def _changed_folders(self, patience: float) -> list[str] | None:
        """Folders (relative to the store root) whose files need a look: None for all, [] for none."""
        if time.time() > self.full_look_due_at(patience):
            return None
        changed = []
        for folder, mtime in self.db.execute("SELECT path, mtime_ns FROM folders"):
            try:
                now = os.stat(self.store.root / folder).st_mtime_ns
            except FileNotFoundError:
                now = None
            if now != mtime:
                changed.append(folder)
        return changed

    def _diff(self, folders: list[str]) -> tuple[list[stamps.Stamped], list[str]]:
        """Files new or changed, and files gone, in the given folders."""
        self._seen_folders = {}
        known_folders = {path for (path,) in self.db.execute("SELECT path FROM folders")}
        known, files = set(), []
        for folder in folders:
            for row in self.db.execute(_RECORDED.format(where=" WHERE path > ?1 AND path < ?1 || '~'"),
                                       (folder + "/",)):
                parent = os.path.dirname(row[0])
                if parent == folder or parent not in known_folders:
                    known.add(row)
            files += self.store.scan(folder, folders=self._seen_folders,
                                     descend=lambda sub: sub not in known_folders)
        return _compare(known, files)

    def _diff_every_file(self, scan: Scan) -> tuple[list[stamps.Stamped], list[str]]:
        self._seen_folders = scan.folders
        if scan.files is None:
            return [], []
        return _compare(set(self.db.execute(_RECORDED.format(where=""))), scan.files)


def _due_at(last: tuple[float, float], patience: float) -> float:
    """When a look at every file is due, given (when the last began, what it cost)."""
    at, cost = last
    return at + patience * max(FULL_LOOK_MIN_S, FULL_LOOK_EVERY * cost)


# How many files the catalog holds, and the sums of their mtimes, sizes and ctimes (each taken modulo
# TALLY_MOD before it is added, so that no sum overflows; the sums are then taken modulo it).
#
# Equal to the tally of the files on disk, with every folder's mtime as recorded, nothing changed: no
# file came or went (that moves its folder), and a file written since moved its ctime forward (no tool
# can set a ctime back; a file recorded RACY holds -1). For the sums to agree anyway, other changes
# would have to cancel it to the nanosecond, modulo 2**40 ns. Far cheaper than reading the catalog's
# every stamp and comparing them (bench/full_look.py). Where the ctime is not the inode's change time
# (Windows' st_ctime is the creation time, some FUSE file systems give the mtime), two files of one size
# whose contents and mtimes are swapped in place tally the same: `mem doctor` compares every stamp
# (refresh(full=True)).
_TALLY = ("SELECT count(*), coalesce(sum(mtime_ns % {m}), 0), coalesce(sum(size), 0), coalesce(sum(ctime_ns % {m}), 0)"
          " FROM (SELECT mtime_ns, size, ctime_ns FROM memories UNION ALL SELECT mtime_ns, size, ctime_ns FROM broken)"
          ).format(m=TALLY_MOD)

_RECORDED = ("SELECT path, mtime_ns, size, ctime_ns FROM memories{where} UNION ALL"
             " SELECT path, mtime_ns, size, ctime_ns FROM broken{where}")


def scan_every_file(store: Store, expected: Expected | None) -> Scan:
    """Stat every file; its stamps unless they tally with `expected` (Looks.due; None: always), from the
    same walk. In a forked child it touches no database."""
    began, started_ns = time.time(), time.time_ns()
    folders: dict[str, int | None] = {}
    files = store.scan(folders=folders)
    tally = (len(files), sum(stamp[1] for stamp in files) % TALLY_MOD, sum(stamp[2] for stamp in files),
             sum(stamp[3] for stamp in files) % TALLY_MOD)
    same = expected is not None and (tally, folders) == expected
    return Scan(began, started_ns, time.time() - began, folders, None if same else files)


def _compare(known: set, files: list[stamps.Stamped]) -> tuple[list[stamps.Stamped], list[str]]:
    """(files new or changed, paths gone): a file is as recorded when its (path, mtime, size, ctime) is
    one of the catalog's, one set of those tuples probed once a file (no list or dict entry built per file)."""
    fresh = [stamp for stamp in files if stamp not in known]
    if len(files) - len(fresh) == len(known):  # every file the catalog holds was found as recorded
        return fresh, []
    return fresh, sorted({path for path, *_ in known} - {path for path, *_ in files})
