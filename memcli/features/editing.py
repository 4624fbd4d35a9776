"""`mem edit`, the library side: the file's YAML to edit, and the edited text checked and saved.

The edited text passes the same gate as every write (every field screened, an ignored source
refused) and is stored the way every write is (memcli.core.writing.store), and nothing is written before
it is valid; a compressed form changed by hand passes the guard of a form mem makes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from memcli.core.compressing import CompressOptions
from memcli.core.mem import Mem
from memcli.core.reading import relpath_of
from memcli.core.writing import Draft, check_size, finish_now, store
from memcli.errors import InvalidMemory
from memcli.index.versions import refuse_loop
from memcli.store.comments import comments_of, with_comments
from memcli.store.memory import Memory, clean_input, is_local, now_utc
from memcli.store.yamlfile import parse_yaml


@dataclass
class EditResult:
    memory: Memory | None  # None when nothing changed
    redacted: dict[str, int] = field(default_factory=dict)


def edit_text(mem: Mem, memory: Memory) -> str:
    """The memory's file as mem writes it, with the comments a person wrote in it."""
    path = mem.store.file_path(relpath_of(mem, memory.id))
    text = path.read_text(encoding="utf-8")
    return with_comments(Memory.from_yaml(text, relpath_of(mem, memory.id)).to_yaml(), comments_of(text))


def save_edit(mem: Mem, memory: Memory, text: str) -> EditResult:
    """Validate an edited file, redact it (its comments too) and save it. Raises before writing anything.
    A change of comments alone is a change."""
    origin = f"edited memory {memory.id}"
    record = parse_yaml(text, origin)
    if not isinstance(record, dict):
        raise InvalidMemory(f"{origin}: expected a mapping of fields")
    if record.get("source") != memory.source and isinstance(record.get("source"), str):
        mem.gate.refuse_ignored_source(record["source"])
    record, redacted = mem.gate.screen(record)
    comments = comments_of(text)
    screened, in_comments = mem.gate.screen({"comments": [comment.text for comment in comments]})
    comments = [replace(comment, text=clean) for comment, clean in zip(comments, screened["comments"])]
    redacted = dict(Counter(redacted) + Counter(in_comments))
    edited = Memory.from_dict(record, origin)
    edited.comments = comments
    if edited.id != memory.id:
        raise InvalidMemory(f"the id cannot be changed (was {memory.id}, now {edited.id})")
    if edited.to_dict() == memory.to_dict() and comments == comments_of(edit_text(mem, memory)):
        return EditResult(None, redacted)
    if edited.supersedes != memory.supersedes:
        refuse_loop(mem.catalog, edited.id, edited.supersedes)
    compressing = None
    if edited.raw != memory.raw:
        edited.raw = clean_input(edited.raw)
        check_size(mem, edited.raw)
        if edited.compressed == memory.compressed:
            compressing = CompressOptions()  # the old short form describes the old text; make a new one
    if compressing is None and edited.compressed is not None and edited.compressed != memory.compressed:
        _check_form(edited)
    edited.updated_at = now_utc()
    edited.local = is_local(relpath_of(mem, memory.id))  # an edit does not share what stays on this machine
    stored = store(mem, [Draft(edited, compress=compressing, replaces=relpath_of(mem, memory.id))])
    finish_now(mem, stored, compressing)
    return EditResult(stored[0].memory, redacted)


def _check_form(edited: Memory) -> None:
    """A compressed form written by hand is read instead of the raw text, so it passes the guard a form
    mem makes passes: one that says what the raw does not ("Always force-push" over "Never force-push")
    is refused."""
    from memcli.compress.guard import seal
    from memcli.compress.pipeline import check_given

    method = (edited.compression or {}).get("method")
    problem = check_given(edited.raw, edited.compressed, method)
    if problem:
        raise InvalidMemory(f"the compressed form does not say what the raw text says ({problem}): correct it, "
                            "or set `compressed: null` to have the raw text read (`mem compress ID` makes a new form)")
    edited.compression = {**(edited.compression or {}), "guarded": seal(edited.raw, edited.compressed, method)}
