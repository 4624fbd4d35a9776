"""Threads on disk: create, append under the store lock, read, list, remove, prune folded messages."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator

from memcli.errors import InputError, InvalidMemory, NotFound
from memcli.index.filters import Filters
from memcli.store import ids
from memcli.store.memory import Memory, clean_input, now_utc, parse_time
from memcli.threads.records import Message, ThreadInfo, normalise_role
from memcli.util.fsutil import atomic_write

if TYPE_CHECKING:
    from memcli.core.mem import Mem

log = logging.getLogger("memcli")

FOLDER = "threads"
LOCAL = "local"  # threads/local/: the threads kept on this machine
META = "thread.json"
SOURCE_PREFIX = "thread/"
THREAD_RECORD, MESSAGE_RECORD = "thread", "message"  # the `type` of a thread's lines in `mem export`
MESSAGE_FILE = re.compile(r"^\d+-[0-9A-Z]{26}\.json$")
SOURCE_RANGE = re.compile(r"^thread/(?P<id>[0-9A-Z]{26})#(?P<first>\d+)-(?P<last>\d+)$")


@dataclass
class Fold:
    """Messages first..last (sequence numbers) summarised by `memory` (tag `thread`)."""

    first: int
    last: int
    memory: Memory


def summary_source(thread_id: str, first: int, last: int) -> str:
    return f"{SOURCE_PREFIX}{thread_id}#{first}-{last}"


class Threads:
    def __init__(self, mem: Mem):
        self.mem = mem
        self.root = mem.store.root / FOLDER
        self.local_root = self.root / LOCAL  # threads kept on this machine (git ignores it): captured sessions

    # -- writing ---------------------------------------------------------------------------------

    def create(self, title: str | None = None) -> ThreadInfo:
        if title is not None:
            title = self.mem.gate.screen({"title": " ".join(title.split())})[0]["title"] or None
        info = ThreadInfo(id=ids.new_id(), title=title, created_at=now_utc())
        self._make(info.id, title, info.created_at)
        return info

    def append(self, thread_id: str, messages: Iterable[dict], *, screened: bool = False,
               fixed_ids: list[str] | None = None) -> tuple[list[Message], dict[str, int]]:
        """Append messages ({role, content, name?, created_at?}) in order; every string is redacted first,
        unless the caller did (`screened`: a captured hook event). Returns the stored messages and the
        redaction counts. Nothing is written if any message is bad. `fixed_ids`: each message's id, chosen
        by the caller (a captured turn's, from its event): one already in the thread is not added again,
        so a capture run again after a kill adds each turn once."""
        drafts, counts = [], {}
        for number, data in enumerate(messages, 1):
            if not isinstance(data, dict):
                raise InputError(f"message {number}: expected an object with role and content")
            content = data.get("content")
            if not isinstance(content, str):
                raise InputError(f"message {number}: 'content' must be text")
            role = normalise_role(data.get("role", ""))
            name = data.get("name")
            if name is not None and not isinstance(name, str):
                raise InputError(f"message {number}: 'name' must be text")
            created = parse_time(data["created_at"], f"message {number}: created_at") if data.get("created_at") \
                else None
            fields, redacted = {"content": clean_input(content), "name": name or None}, {}
            if not screened:
                fields, redacted = self.mem.gate.screen(fields)
            content, name = fields["content"], fields["name"]
            for kind, n in redacted.items():
                counts[kind] = counts.get(kind, 0) + n
            drafts.append((role, content, name, created))
        if not drafts:
            raise InputError("no messages to append")
        folder = self._folder(thread_id)
        if folder.parent == self.local_root:
            self.mem.store.keep_local_out_of_git()
        stored = []
        fixed = list(fixed_ids) if fixed_ids is not None else [None] * len(drafts)
        with self.mem.store.lock():
            last_seq, last_id = self._last(folder)
            there = {name.split("-", 1)[1][:-5] for name in self._message_files(folder)} if fixed_ids else set()
            for (role, content, name, created), given in zip(drafts, fixed):
                if given in there:
                    continue
                message_id = given or ids.new_id()
                if not given and last_id and message_id <= last_id:  # another process's clock may run ahead of ours
                    message_id = _after(last_id)
                last_seq, last_id = last_seq + 1, message_id
                message = Message(seq=last_seq, id=message_id, role=role, content=content,
                                  created_at=created or now_utc(), name=name)
                atomic_write(folder / message.filename, message.to_json())
                stored.append(message)
        return stored, counts

    def remove(self, thread_id: str) -> int:
        """Delete a thread's files; its summaries stay as long-term memories. Returns messages removed."""
        folder = self._folder(thread_id)
        count = len(self._message_files(folder))
        with self.mem.store.lock():
            shutil.rmtree(folder)
        return count

    def prune(self, thread_id: str) -> int:
        """Delete the messages already folded into summaries, for good. Returns how many."""
        folder = self._folder(thread_id)
        folded_to = max((fold.last for fold in self.folds(thread_id)), default=0)
        removed = 0
        with self.mem.store.lock():
            for message in self.messages(thread_id):
                if message.seq <= folded_to and message.role != "system":
                    (folder / message.filename).unlink(missing_ok=True)
                    removed += 1
        return removed

    # -- moving between stores (mem export, mem import) ------------------------------------------

    def export(self) -> Iterator[dict]:
        """Every thread as records for JSON lines: the thread, then each of its messages in order. The
        summaries are memories (exported with them), tied to the thread by its id, which import keeps."""
        for thread_id in self._ids():
            info = self.info(thread_id)
            yield {"type": THREAD_RECORD, "id": thread_id, **({"title": info.title} if info.title else {}),
                   "created_at": info.created_at}
            for message in self.messages(thread_id):
                yield {"type": MESSAGE_RECORD, "thread": thread_id, **message.to_dict()}

    def restore(self, record: dict, origin: str) -> tuple[bool, dict[str, int]]:
        """Write a record `export` made, keeping its ids, order and times, unless it is there already (a
        thread's folder, a message's file); a message whose thread is not there makes it. Every string is
        redacted first, as for `append`. Returns (whether it was written, the redaction counts)."""
        is_thread = record.get("type") == THREAD_RECORD
        thread_id = record.get("id" if is_thread else "thread")
        if not isinstance(thread_id, str) or not ids.is_valid(thread_id):
            raise InvalidMemory(f"{origin}: malformed thread id {str(thread_id)[:40]!r}")
        if is_thread:
            title = record.get("title")
            if title is not None and not isinstance(title, str):
                raise InvalidMemory(f"{origin}: 'title' must be text")
            screened, redacted = self.mem.gate.screen({"title": title})
            created = parse_time(record.get("created_at") or now_utc(), f"{origin}: created_at")
            return self._make(thread_id, screened["title"], created), redacted
        message = Message.from_dict({key: value for key, value in record.items() if key not in ("type", "thread")},
                                    origin)
        try:
            content = clean_input(message.content)
        except InputError as exc:
            raise InvalidMemory(f"{origin}: {exc}") from None
        screened, redacted = self.mem.gate.screen({"content": content, "name": message.name})
        message.content, message.name = screened["content"], screened["name"] or None
        self.mem.ensure_store()
        with self.mem.store.lock():
            self._make(thread_id, None, message.created_at)
            path = self._folder(thread_id) / message.filename
            if path.exists():
                return False, redacted
            atomic_write(path, message.to_json())
            # `thread ls` orders threads by their last message file's time: the message's own, not the import's.
            moment = dt.datetime.fromisoformat(message.created_at.replace("Z", "+00:00")).timestamp()
            os.utime(path, (moment, moment))
        return True, redacted

    def ensure(self, thread_id: str, title: str | None, *, local: bool = False) -> bool:
        """A thread with an id the caller chose (a captured session's), made unless it exists (again,
        after `mem thread rm`); whether it was made. The title is the caller's, screened already. `local`:
        kept on this machine (threads/local/, which git ignores) until shared."""
        return self._make(thread_id, title, now_utc(), local=local)

    def share(self, thread_id: str) -> bool:
        """Move a thread kept on this machine to where git takes it; False when it was shared already."""
        folder = self._folder(thread_id)
        if folder.parent != self.local_root:
            return False
        with self.mem.store.lock():
            os.replace(folder, self.root / thread_id)
        return True

    def is_local(self, thread_id: str) -> bool:
        return self._folder(thread_id).parent == self.local_root

    def _make(self, thread_id: str, title: str | None, created_at: str, *, local: bool = False) -> bool:
        """The thread's folder and thread.json, unless it exists; whether it was made."""
        if any((root / thread_id).is_dir() for root in (self.root, self.local_root)):
            return False
        folder = (self.local_root if local else self.root) / thread_id
        self.mem.ensure_store()
        if local:
            self.mem.store.keep_local_out_of_git()
            self.mem.store.make_dir(self.local_root)
        self.mem.store.make_dir(folder)
        meta = {"id": thread_id, "created_at": created_at}
        if title:
            meta["title"] = title
        atomic_write(folder / META, json.dumps(meta, ensure_ascii=False, indent=1) + "\n")
        return True

    # -- reading ---------------------------------------------------------------------------------

    def resolve(self, handle: str) -> str:
        """A thread id from its short id, the full id or a unique beginning, as memory ids are named."""
        return ids.resolve_among(handle, self._ids(), "thread", "threads")

    def short_ids(self) -> dict[str, str]:
        """thread id -> the short id listings show (memcli.store.ids)."""
        return ids.short_ids(self._ids())

    def messages(self, thread_id: str, after: int = 0) -> list[Message]:
        """The messages on disk with a sequence number above `after` (all by default), in order; an
        unreadable file is named in a warning and skipped."""
        folder = self._folder(thread_id)
        found = []
        for name in self._message_files(folder):
            if int(name.partition("-")[0]) <= after:
                continue
            try:
                found.append(Message.from_json((folder / name).read_text(encoding="utf-8"), f"{FOLDER}/{thread_id}/{name}"))
            except (InvalidMemory, OSError, UnicodeDecodeError) as exc:
                log.warning("skipped unreadable thread message %s: %s", name, exc)
        return sorted(found, key=lambda m: (m.seq, m.id))

    def folds(self, thread_id: str) -> list[Fold]:
        """The summaries of this thread, oldest first (the memories whose source names its ranges)."""
        from memcli.core.reading import listing

        found = []
        for memory in listing(self.mem, Filters(source=f"{SOURCE_PREFIX}{thread_id}#*")):
            match = SOURCE_RANGE.match(memory.source or "")
            if match and match["id"] == thread_id:
                found.append(Fold(int(match["first"]), int(match["last"]), memory))
        return sorted(found, key=lambda fold: (fold.first, fold.last))

    def info(self, thread_id: str) -> ThreadInfo:
        folder = self._folder(thread_id)
        try:
            meta = json.loads((folder / META).read_text(encoding="utf-8"))
            title, created = meta.get("title"), str(meta.get("created_at") or "")
        except (OSError, ValueError, AttributeError):
            title, created = None, ""
        names = self._message_files(folder)
        return ThreadInfo(id=thread_id, title=title if isinstance(title, str) else None,
                          created_at=created or _mtime(folder), messages=len(names),
                          updated_at=_mtime(folder / names[-1]) if names else None)

    def list(self) -> list[ThreadInfo]:
        """Every thread, most recently active first: a directory listing per thread and one catalog
        query for the folds of all of them."""
        from memcli.core.reading import listing

        folded: dict[str, int] = {}
        for memory in listing(self.mem, Filters(source=f"{SOURCE_PREFIX}*")):
            match = SOURCE_RANGE.match(memory.source or "")
            if match:
                folded[match["id"]] = max(folded.get(match["id"], 0), int(match["last"]))
        found = []
        for thread_id in self._ids():
            info = self.info(thread_id)
            info.folded = folded.get(thread_id, 0)
            found.append(info)
        return sorted(found, key=lambda info: info.updated_at or info.created_at, reverse=True)

    def _ids(self) -> list[str]:
        found = []
        for root in (self.root, self.local_root):
            try:
                found += [entry.name for entry in os.scandir(root)
                          if entry.is_dir(follow_symlinks=False) and ids.is_valid(entry.name)]
            except (FileNotFoundError, NotADirectoryError):
                pass
        return sorted(set(found))

    def _folder(self, thread_id: str):
        if ids.is_valid(thread_id):
            for root in (self.root, self.local_root):
                if (root / thread_id).is_dir() and not (root / thread_id).is_symlink():
                    return root / thread_id
        raise NotFound(f"no thread with id {thread_id!r}")

    @staticmethod
    def _message_files(folder) -> list[str]:
        return sorted(name for name in os.listdir(folder) if MESSAGE_FILE.match(name))

    def _last(self, folder) -> tuple[int, str | None]:
        names = self._message_files(folder)
        if not names:
            return 0, None
        seq, _, rest = names[-1].partition("-")
        return int(seq), rest.removesuffix(".json")


def _after(memory_id: str) -> str:
    """The smallest id greater than memory_id (same millisecond, random part plus one)."""
    value = 0
    for char in memory_id:
        value = value * 32 + ids.ALPHABET.index(char)
    value += 1
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(ids.ALPHABET[digit])
    return "".join(reversed(chars))


def _mtime(path) -> str:
    from memcli.store.memory import format_time

    try:
        return format_time(dt.datetime.fromtimestamp(os.stat(path).st_mtime, dt.timezone.utc))
    except OSError:
        return now_utc()
