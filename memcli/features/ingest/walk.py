"""`mem ingest`: files and folders into memories, one per chunk, kept in step with the files on re-runs.

Each text file is redacted as a whole (a private-key block is caught even when it is longer than a
chunk), split with memcli.features.ingest.chunk, and a file's new chunks are stored through memcli.core.writing.write_each (embedded together,
like any memory) with `source: <path>#<n>` (n from 1) and `written_by: ingest`. Compression, the slow
part (seconds a chunk with the local model), is queued by default for `mem compress --pending`.

How a path is written (memcli.store.sources): relative to the project (the folder around a `.mem/` store,
else the store folder) when it is inside it, so a store committed to git holds `docs/setup.md#2` on
every machine; else `~/...` when it is under the user's home; else absolute. It does not depend on
the working directory, so a re-run from anywhere finds the chunks of an earlier one.

A chunk of a markdown file that does not open with a heading starts with the path of headings it
sits under, `Install > Linux` on a line of its own, so search and a reader know where it comes
from (the line is not counted in `ingest_chunk_chars`).

A PATH that does not exist is reported in `missing` and the others are ingested (nothing is pruned
under a missing PATH); when none exists, InputError.

A re-run matches the chunks of a file with those stored for its path by their (redacted) text:
an unchanged chunk is kept as it is (same id, short form and vector; renumbered or given the new tags
when needed: "updated"), a new text is added, a stored chunk whose text is gone is removed. So an
unchanged file adds nothing and an edit replaces only the chunks it touched. Only memories that ingest
wrote are managed. Chunks of files that are no longer there (deleted, or now ignored, or now binary)
stay unless `remove_orphans`, which removes them under the walked PATHs only.

The duplicate guard of `mem add` does not apply: the same text in two files is two memories, each
with its own source, because each file's chunks must stay complete for the matching above.
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from memcli.core.compressing import CompressOptions
from memcli.core.reading import listing
from memcli.core.writing import relabel, remove, write_each
from memcli.errors import InputError, Refused
from memcli.features.ingest.chunk import sections, split
from memcli.index.filters import Filters
from memcli.index.versions import chain
from memcli.privacy.pinned import Pin, read_pinned
from memcli.store.memory import Memory, normalise_tags
from memcli.store.sources import CHUNK, glob_escape, written
from memcli.util.progress import Progress
from memcli.util.textio import decode, looks_binary

log = logging.getLogger("memcli")

WRITTEN_BY = "ingest"
_MARKER_KIND = re.compile(r"\[REDACTED:([A-Za-z0-9_.-]+)\]")
# Files whose `#` lines are headings: a chunk of one starts with the path of headings it sits under
# ("Install > Linux") unless it opens with a heading. In code and config files `#` starts a comment.
MARKDOWN = (".md", ".markdown", ".mdown", ".mkd", ".mdx")



@dataclass
class IngestReport:
    """What a run did (or, with dry_run, would do). Counts are of files, then of chunks."""

    seen: int = 0  # files looked at, plus ignored folders (each counted once)
    files: int = 0  # text files read and split
    ignored: int = 0
    binary: int = 0
    skipped: int = 0  # too large, not UTF-8, unreadable (each logged with its reason)
    refused: list[str] = field(default_factory=list)  # "source: why" of files that kept a private key
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    pending: int = 0  # chunks added whose compression waits for `mem compress --pending`
    orphaned: int = 0  # chunks of files no longer there, kept because remove_orphans was not asked
    redacted: dict[str, int] = field(default_factory=dict)  # secrets replaced in the chunks added
    dry_run: bool = False
    missing: list[str] = field(default_factory=list)  # PATHs given that do not exist (the others were ingested)

    def to_dict(self) -> dict:
        """Every count; `missing` only when a path was (a key with nothing to say is left out)."""
        data = asdict(self)
        if not self.missing:
            del data["missing"]
        return data


@dataclass
class _Root:
    path: Path  # absolute
    source: str  # how paths under it are written
    is_dir: bool

    def glob(self) -> str:
        """A GLOB for the sources of chunks under this root."""
        if not self.is_dir:
            return glob_escape(self.source) + "#*"
        return glob_escape(self.source) + "/*" if self.source else "*"

    def holds(self, path: str) -> bool:
        if not self.is_dir:
            return path == self.source
        return not self.source or path.startswith(self.source + "/")


def ingest(mem, paths: Iterable[Path | str], *, tags: Iterable[str] = (), dry_run: bool = False,
           remove_orphans: bool = False, defer: bool = True, follow_links: bool = False,
           progress: Progress | None = None) -> IngestReport:
    """Ingest files and folders into `mem` (an memcli.core.mem.Mem); see the module docstring. By default (`defer`)
    chunks are stored at the speed of embedding and their compression is queued (`report.pending`)."""
    report = IngestReport(dry_run=dry_run)
    tags = normalise_tags(list(tags))
    given = [Path(p) for p in paths]
    report.missing = [str(p) for p in given if not p.exists()]
    if given and len(report.missing) == len(given):
        raise InputError(f"no such file or folder: {', '.join(report.missing)}")
    roots = [_root(mem, p) for p in given if p.exists()]
    files = _files(mem, roots, report, follow_links)
    stored = _stored_chunks(mem, roots)
    present: set[str] = set()
    read = [(source, _chunks(mem, pinned, source, report)) for pinned, source in files]
    ticks = _Ticks(progress, sum(len(chunks) for _, chunks in read if isinstance(chunks, list)))
    for source, chunks in read:
        if chunks is not False:
            present.add(source)
        if isinstance(chunks, list):
            _sync_file(mem, source, chunks, stored.get(source, []), tags, report, ticks, dry_run=dry_run, defer=defer)
    ticks.finish()
    gone = [entry for source, chunks in stored.items() if source not in present for entry in chunks]
    if remove_orphans:
        if gone and not dry_run:
            remove(mem, _every_version(mem, gone))
        report.removed += len(gone)
    else:
        report.orphaned = len(gone)
    if not dry_run:
        mem.settle()
    return report


def _root(mem, given: Path) -> _Root:
    if not given.exists():
        raise InputError(f"no such file or folder: {given}")
    path = Path(os.path.abspath(given))
    return _Root(path, written(mem.home, path), path.is_dir())


def _files(mem, roots: list[_Root], report: IngestReport, follow_links: bool) -> list[tuple[Pin, str]]:
    """The files to read, in a stable order, each once, pinned to what the denylist decided on (under
    their name and what they resolve to), with their source path; counts what is ignored."""
    files: dict[str, tuple[Pin, str]] = {}
    store = mem.store
    own_folders = tuple(os.path.realpath(folder) + os.sep for folder in (store.memories_dir, store.index_dir))
    for root in roots:
        if root.is_dir:
            found = mem.gate.ignore_rules(walk_root=root.path, follow_links=follow_links).walk()
        else:
            found = [(root.path, *mem.gate.ignore_rules().decide(root.path))]
            # A file named explicitly is refused as `mem add --file` refuses it; a walk only skips.
            mem.gate.refuse_ignored(os.path.relpath(root.path), found=found[0][1])
        for path, match, pinned in found:
            report.seen += 1
            if match is not None and match.ignored:
                report.ignored += 1
                log.info("ignored %s", match)
            elif pinned.real.startswith(own_folders) or pinned.real == os.path.realpath(store.settings_path):
                report.ignored += 1
                log.info("ignored %s (the store's own files)", path)
            else:
                files.setdefault(str(path), (pinned, written(mem.home, path)))
    return list(files.values())


@dataclass
class _Stored:
    """The current memory of a chunk, and the text ingest stored for it: the memory's own, or, when a
    person corrected the chunk with `mem update`, the text of the version ingest wrote."""

    memory: Memory
    text: str

    @property
    def corrected(self) -> bool:
        return self.memory.written_by != WRITTEN_BY


def _stored_chunks(mem, roots: list[_Root]) -> dict[str, list[_Stored]]:
    """Chunks that ingest stored earlier under the roots, by the path of their file, in chunk order. A
    chunk corrected with `mem update` is its file's chunk still (the correction is its current version),
    so a re-run neither stores the old text beside it nor takes it for a chunk of its own."""
    chunks: dict[str, dict] = {}
    for root in roots:
        for memory in listing(mem, Filters(source=root.glob())):
            found = CHUNK.match(memory.source or "")
            text = _ingested_text(mem, memory)
            if text is not None and found and root.holds(found["path"]):
                chunks.setdefault(found["path"], {})[memory.id] = _Stored(memory, text)
    return {path: sorted(by_id.values(), key=lambda stored: _number(stored.memory)) for path, by_id in chunks.items()}


def _ingested_text(mem, memory: Memory) -> str | None:
    """The text ingest stored for this memory's chunk: its own when ingest wrote it, else that of the
    newest version ingest wrote in its chain; None when ingest wrote none of them."""
    if memory.written_by == WRITTEN_BY:
        return memory.raw
    if not memory.supersedes:
        return None
    return next((version.raw for version in chain(mem.catalog, memory.id) if version.written_by == WRITTEN_BY), None)


class _Ticks:
    """Progress in chunks, the unit of work (a file of 47 chunks takes 47 times one of 1)."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.done = progress, total, 0
        self._tell()

    def tick(self) -> None:
        """A chunk begins: say how many are done before it."""
        self._tell()
        self.done += 1

    def finish(self) -> None:
        self.done = self.total
        self._tell()

    def _tell(self) -> None:
        if self.progress:
            self.progress("ingesting chunks", self.done, self.total)


def _chunks(mem, pinned: Pin, source: str, report: IngestReport) -> list[str] | bool:
    """The file's redacted chunks; False when it is binary (its chunks count as gone), True when it cannot
    be read or is refused (a secret survived, or it changed into something else after it was decided
    on): what an earlier run stored stays untouched. All files are read before any chunk is stored, so
    progress can count chunks against a known total."""
    path = pinned.path
    try:
        text = _read_text(mem, pinned)
    except Refused as exc:
        report.refused.append(f"{source}: {exc}")
        return True
    except _Binary:
        report.binary += 1
        log.info("skipped %s: binary", path)
        return False
    except OSError as exc:
        report.skipped += 1
        log.warning("skipped %s: %s", path, exc.strerror or exc)
        return True
    except InputError as exc:  # too large, not UTF-8
        report.skipped += 1
        log.warning("skipped %s", exc)
        return True
    try:
        redacted = mem.gate.redact(text).text
    except Refused as exc:
        report.refused.append(f"{source}: {exc}")
        return True
    report.files += 1
    if path.suffix.lower() not in MARKDOWN:
        return split(redacted, mem.settings.ingest_chunk_chars)
    return [f"{' > '.join(headings)}\n{chunk}" if headings else chunk
            for headings, chunk in sections(redacted, mem.settings.ingest_chunk_chars)]


def _sync_file(mem, source: str, chunks: list[str], stored: list[_Stored], tags: list[str], report: IngestReport,
               ticks: _Ticks, *, dry_run: bool, defer: bool) -> None:
    """Bring the stored chunks of one file in step with its text. A chunk is matched by the text ingest
    stored for it, so a correction made with `mem update` stands while its part of the file is as it
    was (a correction is taken before a stale copy of the same chunk); when that part changes, the new
    text becomes the correction's next version."""
    pool: dict[str, list[_Stored]] = {}
    for entry in sorted(stored, key=lambda entry: not entry.corrected):
        pool.setdefault(entry.text, []).append(entry)
    new: list[tuple[str, str]] = []
    updated = 0
    for n, chunk in enumerate(chunks, 1):
        chunk_source = f"{source}#{n}"
        same_text = pool.get(chunk)
        if not same_text:
            new.append((chunk, chunk_source))
            report.redacted = dict(Counter(report.redacted) + Counter(_MARKER_KIND.findall(chunk)))
            continue
        ticks.tick()
        entry = next((e for e in same_text if e.memory.source == chunk_source), same_text[0])
        same_text.remove(entry)
        memory = entry.memory
        wanted_tags = memory.tags + [t for t in tags if t not in memory.tags]
        if memory.source == chunk_source and wanted_tags == memory.tags:
            report.unchanged += 1
            continue
        updated += 1
        if not dry_run:
            relabel(mem, memory, source=chunk_source, tags=wanted_tags)
    gone = [entry for left in pool.values() for entry in left]
    # A corrected chunk whose part of the file changed is replaced by the new text at its place.
    replaced = {e.memory.source: e for e in gone if e.corrected and e.memory.source in {s for _, s in new}}
    if new and not dry_run:
        stored_now = write_each(mem, new, tags=tags, written_by=WRITTEN_BY, compressing=CompressOptions(defer=defer),
                                check_source=False)
        report.pending += sum(1 for result in stored_now if result.memory.status == "pending")
        for result in stored_now:
            old = replaced.get(result.memory.source)
            if old is not None:
                relabel(mem, result.memory, source=result.memory.source, tags=result.memory.tags,
                        supersedes=[old.memory.id])
    for _ in new:  # new chunks count once stored (embedded together, above)
        ticks.tick()
    added = len(new)
    gone = [e for e in gone if e.memory.source not in replaced or replaced[e.memory.source] is not e]
    if gone and not dry_run:
        remove(mem, _every_version(mem, gone))
    report.added += added
    report.updated += updated
    report.removed += len(gone)
    if added or updated or gone:
        log.info("%s: %d added, %d updated, %d removed", source, added, updated, len(gone))


def _every_version(mem, entries: list[_Stored]) -> list[Memory]:
    """What removing chunks removes: a corrected chunk with every version of it, or the version ingest
    wrote would be current again."""
    return [version for entry in entries
            for version in (chain(mem.catalog, entry.memory.id) if entry.corrected else [entry.memory])]


class _Binary(Exception):
    pass


def _read_text(mem, pinned: Pin) -> str:
    """The pinned file's text; _Binary, Refused (it changed), OSError, or InputError (too large, not UTF-8,
    not a regular file)."""
    limit = mem.settings.max_input_bytes
    data = read_pinned(pinned, limit)
    if looks_binary(data):
        raise _Binary
    return decode(data, str(pinned.path), limit)


def _number(memory) -> int:
    return int(CHUNK.match(memory.source)["n"])
