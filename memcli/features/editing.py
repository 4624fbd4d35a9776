"""`mem edit`, the library side: the file's YAML to edit, and the edited text checked and saved.

The edited text passes the same gate as every write (every field screened, an ignored source
refused) and the same pipeline (memcli.core.writing.commit), and nothing is written before it is valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memcli.core.compressing import Compressing
from memcli.core.mem import Mem
from memcli.core.reading import relpath_of
from memcli.core.writing import check_size, commit
from memcli.errors import InvalidMemory
from memcli.index.versions import refuse_loop
from memcli.store.memory import Memory, clean_input, now_utc
from memcli.store.yamlfile import parse_yaml


@dataclass
class EditResult:
    memory: Memory | None  # None when nothing changed
    redacted: dict[str, int] = field(default_factory=dict)


def edit_text(mem: Mem, memory: Memory) -> str:
    return mem.store.read(relpath_of(mem, memory.id)).to_yaml()


def save_edit(mem: Mem, memory: Memory, text: str) -> EditResult:
    """Validate an edited file, redact it and save it. Raises before writing anything."""
    origin = f"edited memory {memory.id}"
    record = parse_yaml(text, origin)
    if not isinstance(record, dict):
        raise InvalidMemory(f"{origin}: expected a mapping of fields")
    if record.get("source") != memory.source and isinstance(record.get("source"), str):
        mem.gate.refuse_ignored_source(record["source"])
    record, redacted = mem.gate.screen(record)
    edited = Memory.from_dict(record, origin)
    if edited.id != memory.id:
        raise InvalidMemory(f"the id cannot be changed (was {memory.id}, now {edited.id})")
    if edited.to_dict() == memory.to_dict():
        return EditResult(None, redacted)
    if edited.supersedes != memory.supersedes:
        refuse_loop(mem.catalog, edited.id, edited.supersedes)
    compressing = None
    if edited.raw != memory.raw:
        edited.raw = clean_input(edited.raw)
        check_size(mem, edited.raw)
        if edited.compressed == memory.compressed:
            compressing = Compressing()  # the old short form describes the old text; make a new one
    edited.updated_at = now_utc()
    commit(mem, [(edited, compressing)], dedupe=False, replaces=relpath_of(mem, memory.id))
    return EditResult(edited, redacted)
