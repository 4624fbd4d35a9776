"""A thread on disk: `threads/<thread id>/thread.json` (title, created_at) and one file per message,
`threads/<thread id>/<seq>-<message id>.json`.

One file per message makes an append a new file (atomic, and a plain file addition in git), and the
sequence number, given under the store lock, keeps the order of appends from several processes. Two
clones appending to one thread each make their own files; after a merge both are kept, ordered by
(seq, id). What has been folded is not written here: a fold is the summary memory whose source is
`thread/<id>#<first>-<last>`, so a fold lands in one atomic write or not at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from memcli.errors import InputError, InvalidMemory
from memcli.store import ids
from memcli.store.memory import parse_time
from memcli.util.textio import json_object

ROLES = ("system", "user", "assistant", "tool")
ROLE_ALIASES = {"model": "assistant"}  # Gemini's name for the assistant
SEQ_DIGITS = 6
MAX_SEQ = 10 ** 12  # a sequence number is part of a file name: a runaway one must not make it too long


def normalise_role(role: str) -> str:
    value = ROLE_ALIASES.get(str(role).strip().lower(), str(role).strip().lower())
    if value not in ROLES:
        raise InputError(f"unknown role {role!r} (use one of {', '.join(ROLES)}; 'model' means assistant)")
    return value


@dataclass
class Message:
    seq: int
    id: str
    role: str
    content: str
    created_at: str
    name: str | None = None

    @property
    def filename(self) -> str:
        return f"{self.seq:0{SEQ_DIGITS}d}-{self.id}.json"

    def to_dict(self) -> dict:
        data = {"seq": self.seq, "id": self.id, "role": self.role}
        if self.name:
            data["name"] = self.name
        data["created_at"] = self.created_at
        data["content"] = self.content
        return data

    def to_chat(self) -> dict:
        """The shape a chat API takes."""
        data = {"role": self.role, "content": self.content}
        if self.name:
            data["name"] = self.name
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str, origin: str) -> "Message":
        return cls.from_dict(json_object(text, origin, InvalidMemory), origin)

    @classmethod
    def from_dict(cls, data: dict, origin: str) -> "Message":
        """A message file's fields (or an exported message's), checked; InvalidMemory naming `origin`."""
        try:
            seq, content, name = data["seq"], data["content"], data.get("name")
            if isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq < MAX_SEQ:
                raise TypeError(f"'seq' must be a whole number from 1, not {str(seq)[:20]!r}")
            if not isinstance(content, str):
                raise TypeError
            if name is not None and not isinstance(name, str):
                raise TypeError
            if not isinstance(data["id"], str) or not ids.is_valid(data["id"]):
                raise TypeError(f"malformed id {str(data['id'])[:40]!r}")
            return cls(seq=seq, id=data["id"], role=normalise_role(data["role"]), content=content,
                       created_at=parse_time(data.get("created_at"), f"{origin}: created_at"), name=name)
        except (KeyError, TypeError, InputError) as exc:
            raise InvalidMemory(f"{origin}: not a thread message ({exc or 'bad field'})") from None


@dataclass
class ThreadInfo:
    id: str
    title: str | None
    created_at: str
    messages: int = 0
    folded: int = 0
    updated_at: str | None = None

    def to_dict(self) -> dict:
        data = {"id": self.id}
        if self.title:
            data["title"] = self.title
        data.update(created_at=self.created_at, messages=self.messages, folded=self.folded)
        if self.updated_at:
            data["updated_at"] = self.updated_at
        return data
