"""Export and import as JSON lines: one memory per line, ids and timestamps kept; a whole export also
carries the threads (a line per thread, then one per message: memcli.threads.storage), so a backup keeps
every conversation.

An import line is either an exported memory (`raw`, `id`, times, ...), a read-contract record
(`content_raw`/`content`; fields that only describe a read, `score`, `query`, `optimized`, are dropped),
or a thread's line (`type` thread or message).

A memory whose id, or whose text, the store held before the import is skipped. Texts are not compared
between the records of one file: a store that held one text twice (`mem add --allow-duplicate`, the
same paragraph ingested from two files) comes back as it was.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Iterator

from memcli.errors import InputError, InvalidMemory, MemError, Refused
from memcli.index.filters import Filters
from memcli.index.versions import refuse_loop
from memcli.store import ids
from memcli.store.memory import Memory, clean_input, content_key, now_utc
from memcli.threads.storage import MESSAGE_RECORD, THREAD_RECORD, Threads
from memcli.util.progress import Progress
from memcli.util.textio import json_object

if TYPE_CHECKING:
    from memcli.core.compressing import CompressOptions
    from memcli.core.mem import Mem

WRITE_BATCH = 64  # memories per write: their texts share the embedding model's batches
READ_ONLY_FIELDS = ("content", "content_raw", "optimized", "score", "query")
SHORT_FORM = ("compressed", "compression")


@dataclass
class ImportReport:
    imported: int = 0
    duplicates: int = 0
    invalid: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # "line N: why" of compressed forms the guard refused
    redacted: dict[str, int] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)  # ids of the memories imported
    thread_lines: int = 0  # thread and message lines read
    threads: int = 0  # threads made
    messages: int = 0  # messages written (the others were there already)


def export(mem: Mem, filters: Filters = Filters(), limit: int | None = None) -> Iterator[dict]:
    """The memories `filters` choose, as their stored fields, oldest first; with no filter and no limit
    (a backup), every thread after them."""
    if not mem.store.exists:
        return
    mem.catalog.refresh()
    yield from (memory.to_dict() for memory in mem.catalog.list(filters, limit, newest_first=False))
    if not filters and limit is None:
        yield from Threads(mem).export()


def import_lines(mem: Mem, lines: Iterable[str | bytes | MemError], compressing: CompressOptions,
                 progress: Progress | None = None) -> ImportReport:
    """Take exported JSON lines through the write pipeline: ids and timestamps kept, what the store held
    already (same id, or same text as a memory not from this import) skipped, threads restored, bad or
    refused lines reported and the rest imported. The lines are read first, so `progress` counts records
    against a known total. A line may come as bytes (decoded here, so one line that is not UTF-8 is
    reported, not the whole import), or as the error that reading it met (textio.bounded_lines)."""
    report = ImportReport()
    mem.ensure_store()
    threads = Threads(mem)
    lines = list(lines)
    if progress:
        progress("importing memories", 0, len(lines))
    batch: list = []
    linked: dict[str, list[str]] = {}  # what the records read so far replace, for the loop check
    notes: dict[str, str] = {}  # by id: why a record's compressed form was dropped, said once it is imported
    mem.catalog.refresh()
    for number, line in enumerate(lines, 1):
        try:
            text = _line_text(line, number)
            if not text.strip():
                continue
            record = json_object(text, f"line {number}", InvalidMemory)
            if _is_thread_line(record):
                report.thread_lines += 1
                _restore(threads, record, number, report)
                continue
            record = memory_record(record, number)
            given = to_memory(record, number, mem.settings.max_input_bytes)
            mem.gate.refuse_ignored_source(given.source)
            # The record as given (tags not yet lower-cased, unknown keys and all) passes the gate.
            fields, redacted = mem.gate.screen(record, skip=SHORT_FORM)
            if fields["raw"] == record["raw"]:
                short, in_short_form = mem.gate.screen({key: record.get(key) for key in SHORT_FORM})
                fields.update(short)
                redacted = dict(Counter(redacted) + Counter(in_short_form))
            else:  # the short form was made from the secret too: make a new one
                fields.update(dict.fromkeys(SHORT_FORM))
            memory = to_memory(fields, number, mem.settings.max_input_bytes)
            if memory.supersedes:
                try:
                    refuse_loop(mem.catalog, memory.id, memory.supersedes, linked)
                except InvalidMemory as exc:
                    raise InvalidMemory(f"line {number}: {exc}") from None
                linked[memory.id] = memory.supersedes
        except Refused as exc:
            report.refused.append(f"line {number}: {exc}")
            continue
        except MemError as exc:
            report.invalid.append(str(exc))
            continue
        report.redacted = dict(Counter(report.redacted) + Counter(redacted))
        dropped = _guard_short_form(memory, number)
        if dropped:
            notes[memory.id] = dropped
        needs = memory.compressed is None and memory.status != "skipped"
        batch.append((memory, compressing if needs else None))
        if len(batch) == WRITE_BATCH:
            _commit(mem, batch, compressing, report, progress, len(lines), notes)
    _commit(mem, batch, compressing, report, progress, len(lines), notes)
    mem.settle()
    if progress:
        progress("importing memories", len(lines), len(lines))
    return report


def _guard_short_form(memory: Memory, number: int) -> str | None:
    """A compressed form that comes with a record passes the guard a form made here passes; one that
    fails is dropped, so the raw is served until the memory is compressed again. Says why, if dropped."""
    from memcli.compress.pipeline import check_given

    if memory.compressed is None:
        return None
    problem = check_given(memory.raw, memory.compressed, (memory.compression or {}).get("method"))
    if not problem:
        return None
    memory.compressed, memory.compression = None, None
    return f"line {number}: its compressed form was dropped ({problem}); the raw text is served until it is compressed again"


def _commit(mem: Mem, batch: list, compressing: CompressOptions, report: ImportReport, progress: Progress | None,
            total: int, notes: dict[str, str]) -> None:
    """Store a batch the way every write is stored (one embedding call for all of it), its compressions
    done unless deferred, and empty it. A record whose id, or whose text as a memory not from this
    import, the store holds already is skipped (a text twice in the file is stored twice)."""
    from memcli.core.persist import already_stored
    from memcli.core.writing import Draft, finish_now, store

    mine = report.written | {memory.id for memory, _ in batch}
    fresh = [(memory, options) for memory, options in batch
             if already_stored(mem, memory.id, content_key(memory.raw), apart=mine) is None]
    stored = {item.memory.id: item for item in store(mem, [Draft(m, compress=options) for m, options in fresh])}
    finish_now(mem, list(stored.values()), compressing)
    for memory, _ in batch:
        if memory.id not in stored or stored[memory.id].existing:
            report.duplicates += 1
        else:
            report.imported += 1
            if memory.id in notes:
                report.dropped.append(notes[memory.id])
            report.written.add(memory.id)
        if progress:
            progress("importing memories", report.imported + report.duplicates + len(report.invalid)
                     + len(report.refused), total)
    batch.clear()


def _line_text(line: str | bytes | MemError, number: int) -> str:
    if isinstance(line, MemError):
        raise type(line)(f"line {number}: {line}")
    if isinstance(line, bytes):
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidMemory(f"line {number}: not valid UTF-8 (byte {exc.start})") from None
    return line


def _is_thread_line(record: dict) -> bool:
    return record.get("type") in (THREAD_RECORD, MESSAGE_RECORD) and "raw" not in record


def _restore(threads: Threads, record: dict, number: int, report: ImportReport) -> None:
    """A thread's line written (its errors go up to the caller, which reports them by line)."""
    written, redacted = threads.restore(record, f"line {number}")
    report.redacted = dict(Counter(report.redacted) + Counter(redacted))
    if written and record["type"] == THREAD_RECORD:
        report.threads += 1
    elif written:
        report.messages += 1


def parse_record(text: str, line: int) -> dict:
    """The fields an import line gives, as a memory record (read-only fields dropped, defaults filled
    in); InvalidMemory naming the line."""
    return memory_record(json_object(text, f"line {line}", InvalidMemory), line)


def memory_record(record: dict, line: int) -> dict:
    """A memory line's object as a memory record (see parse_record)."""
    if "raw" not in record and isinstance(record.get("content_raw"), str):
        record["raw"] = record["content_raw"]
    if isinstance(record.get("raw"), str):
        try:
            record["raw"] = clean_input(record["raw"])
        except InputError as exc:
            raise InvalidMemory(f"line {line}: {exc}") from None
    record.setdefault("id", ids.new_id())
    record.setdefault("created_at", now_utc())
    record.setdefault("written_by", "import")
    for key in READ_ONLY_FIELDS:
        record.pop(key, None)
    return record


def to_memory(record: dict, line: int, max_bytes: int) -> Memory:
    """The memory a record stands for; InvalidMemory or InputError naming the line."""
    memory = Memory.from_dict(record, f"line {line}")
    if len(memory.raw.encode("utf-8")) > max_bytes:
        raise InputError(f"line {line}: text larger than {max_bytes} bytes")
    return memory
