"""One memory: the record, its YAML file form (schema version 1) and its read-contract form.

The file is written for people first: keys in a fixed order, the raw prose as a block scalar, the
compression details on one line. Loading is forgiving about what a hand edit or a git merge may do
(unquoted timestamps, a tag given as a string, keys mem does not know, which are kept, a date in
one of them kept as text) and strict about everything else: a value of an unexpected type anywhere,
a YAML alias, text that is not Unicode, a date out of range make the file invalid (InvalidMemory),
so the catalog names it in a warning and skips it, and no other memory is affected.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field

from memcli.errors import InputError, InvalidMemory
from memcli.store import ids, yamlfile

# What one file may replace: the current versions of one memory (two or three after a fork). A file from
# git that named every id would hide the whole store from ls and search.
MAX_REPLACED = 16
KEY_ORDER = ("id", "created_at", "updated_at", "tags", "source", "written_by", "supersedes", "raw", "compressed",
             "compression")
COMPRESSION_ORDER = ("method", "kind", "kinds", "model", "raw_tokens", "tokens", "status", "reason", "guarded")
STATUSES = ("done", "skipped", "pending", "failed", "quarantined")
TAG_RE = re.compile(r"^[^\s,]+$")

# How deep a value under a key mem does not know may nest (a bound on what a hand edit can ask of every
# command that reads it).
MAX_DEPTH = 32


def now_utc() -> str:
    return format_time(dt.datetime.now(dt.timezone.utc))


def format_time(moment: dt.datetime) -> str:
    """The canonical UTC form, four-digit year always (strftime drops the zeros of year 1); a moment
    that has no UTC form (0001-01-01T00:00+01:00) raises OverflowError."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    utc = moment.astimezone(dt.timezone.utc)
    return f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"


def parse_time(value, what: str = "timestamp") -> str:
    """Accept what YAML, JSON or a person may write for a moment; return the canonical UTC form."""
    try:
        if isinstance(value, dt.datetime):
            return format_time(value)
        if isinstance(value, dt.date):
            return format_time(dt.datetime(value.year, value.month, value.day))
        if isinstance(value, str):
            text = value.strip().replace(" ", "T", 1)
            if text.endswith(("Z", "z")):
                text = text[:-1] + "+00:00"
            try:
                return format_time(dt.datetime.fromisoformat(text))
            except ValueError:
                pass
    except OverflowError:
        raise InvalidMemory(f"{what} {value!r} is outside the years 0001-9999 in UTC") from None
    raise InvalidMemory(f"{what} {_shown(value)} is not an ISO 8601 date or time")


def check_text(value: str, what: str) -> str:
    """Text that can be written as UTF-8: Python lets a lone surrogate (a JSON "\\ud800", a file name
    or argument that is not UTF-8) into a str, and every file, the catalog and stdout would refuse it later."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{what} is not valid Unicode text (character {exc.start})") from None
    return value


def normalise_tags(values) -> list[str]:
    """Tags are lower-case words; `-t a,b` is two tags; order kept, repeats dropped."""
    if values is None:
        return []
    if isinstance(values, (str, int, float)) and not isinstance(values, bool):
        values = [values]
    if not isinstance(values, (list, tuple)):
        raise InputError(f"tags must be a list of words, not {_kind(values)}")
    tags: list[str] = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(f"a tag must be a word, not {_kind(value)}")
        for part in check_text(str(value), "a tag").split(","):
            tag = part.strip().lower().replace("[redacted:", "[REDACTED:")  # a redaction marker keeps its form
            if not tag:
                continue
            if not TAG_RE.match(tag):
                raise InputError(f"tag {tag!r} may not contain spaces")
            if tag not in tags:
                tags.append(tag)
    return tags


def clean_input(text: str) -> str:
    """The text as given, minus the trailing newline(s) that `echo` and files add; never empty."""
    raw = check_text(text, "the text").rstrip("\r\n")
    if not raw.strip():
        raise InputError("nothing to add: the text is empty")
    if "\x00" in raw:
        raise InputError("the text contains NUL bytes; mem stores text only")
    return raw


def content_key(raw: str) -> str:
    """The duplicate test: same text after Unicode, case and whitespace normalisation."""
    folded = " ".join(unicodedata.normalize("NFC", raw).casefold().split())
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()


LOCAL_MEMORIES = "memories/local"  # memories kept on this machine: ignored by git (memcli.store.folder)


def is_local(relpath: str) -> bool:
    return relpath.startswith(LOCAL_MEMORIES + "/")


@dataclass
class Memory:
    id: str
    created_at: str
    updated_at: str
    raw: str
    tags: list[str] = field(default_factory=list)
    source: str | None = None
    written_by: str = "cli"
    compressed: str | None = None
    compression: dict | None = None
    extra: dict = field(default_factory=dict)
    # The versions this one replaces (memcli/index/versions.py). The link lives in the new file only, so two
    # people updating one memory add two files and git merges them without a conflict.
    supersedes: list[str] = field(default_factory=list)
    # Not in the file: the catalog fills it from the files that name this one in `supersedes`.
    superseded_by: str | None = field(default=None, compare=False)
    # The comments its next file gets (memcli.store.comments); None keeps those of the file it replaces.
    comments: list | None = field(default=None, compare=False, repr=False)
    # Not in the file: kept on this machine (under memories/local/, which git ignores: what capture
    # writes, until shared), as the place its file was read from says (memcli.store.folder).
    local: bool = field(default=False, compare=False)
    # Not in the file: why the catalog found the compressed form failing the guard when it took the file in
    # (a hand edit, a merge; memcli.compress.pipeline.check_given). Such a form is never served: the raw is.
    served_raw: str | None = field(default=None, compare=False)

    @property
    def optimized(self) -> bool:
        return self.compressed is not None and self.served_raw is None

    @property
    def content(self) -> str:
        return self.compressed if self.optimized else self.raw

    @property
    def status(self) -> str | None:
        return (self.compression or {}).get("status")

    def relpath(self) -> str:
        """Where the file lives inside the store, from its creation month (under memories/local/ when it
        stays on this machine)."""
        return f"{LOCAL_MEMORIES if self.local else 'memories'}/{self.created_at[:4]}/{self.created_at[5:7]}/{self.id}.yaml"

    def to_dict(self) -> dict:
        """Every field, in file order (export, the catalog, `mem edit`); `supersedes` only when set."""
        data = {
            "id": self.id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "tags": list(self.tags),
            "source": self.source,
            "written_by": self.written_by,
        }
        if self.supersedes:
            data["supersedes"] = list(self.supersedes)
        data["raw"] = self.raw
        data["compressed"] = self.compressed
        data["compression"] = _ordered_compression(self.compression)
        data.update(self.extra)
        return data

    def to_contract(self, *, raw: bool = False, include_raw: bool = False, score: float | None = None) -> dict:
        """The read contract (v2) shared by `--json`, `--jsonl` and MCP (README, "Output and exit codes").

        Every key a reader does not need is left out, because each one costs the reading model tokens:
        `content` is the compressed form where there is one (the raw prose with `raw`), `content_raw`
        only on request and only when it differs, `optimized` only when true, empty tags and no source
        not at all. `mem export` gives every stored field."""
        data: dict = {"id": self.id, "content": self.raw if raw else self.content}
        if include_raw and data["content"] != self.raw:
            data["content_raw"] = self.raw
        if self.optimized:
            data["optimized"] = True
        if self.tags:
            data["tags"] = list(self.tags)
        if self.source:
            data["source"] = self.source
        data["created_at"] = self.created_at
        if self.superseded_by:
            data["superseded_by"] = self.superseded_by
        if score is not None:
            data["score"] = round(float(score), 4)
        return data

    @classmethod
    def from_dict(cls, data, origin: str = "record") -> "Memory":
        try:
            return cls._from_dict(data, origin)
        except InputError as exc:
            raise InvalidMemory(f"{origin}: {exc}") from None

    @classmethod
    def _from_dict(cls, data, origin: str) -> "Memory":
        if not isinstance(data, dict):
            raise InvalidMemory(f"{origin}: expected a mapping of fields")
        for key in data:
            if not isinstance(key, str):
                raise InvalidMemory(f"{origin}: the key {_shown(key)} is not a word (quote it)")
        memory_id = data.get("id")
        if not isinstance(memory_id, str) or not ids.is_valid(memory_id):
            raise InvalidMemory(f"{origin}: missing or malformed id {_shown(memory_id)}")
        raw = data.get("raw")
        if not isinstance(raw, str) or not raw.strip():
            raise InvalidMemory(f"{origin}: 'raw' must be non-empty text")
        check_text(raw, "'raw'")
        created_at = data.get("created_at")
        if created_at is None:
            # A hand-written file may leave it out; the id knows when it was made.
            try:
                created_at = dt.datetime.fromtimestamp(ids.created_ms(memory_id) / 1000, dt.timezone.utc)
            except (OverflowError, ValueError, OSError):
                raise InvalidMemory(f"{origin}: no created_at, and the id's time is out of range") from None
        created = parse_time(created_at, f"{origin}: created_at")
        updated = parse_time(data.get("updated_at") or created, f"{origin}: updated_at")
        compressed = _optional_text(data.get("compressed"), "'compressed'")
        compression = _compression(data.get("compression"))
        source = data.get("source")
        if isinstance(source, bool) or not isinstance(source, (str, int, float, type(None))):
            raise InvalidMemory(f"{origin}: 'source' must be a path or URI, not {_kind(source)}")
        supersedes = data.get("supersedes") or []
        if isinstance(supersedes, str):
            supersedes = [supersedes]
        if not isinstance(supersedes, list) or not all(isinstance(v, str) and ids.is_valid(v) for v in supersedes):
            raise InvalidMemory(f"{origin}: 'supersedes' must be a list of memory ids")
        if len(set(supersedes)) > MAX_REPLACED:
            raise InvalidMemory(f"{origin}: 'supersedes' names {len(set(supersedes))} versions; a memory replaces "
                                f"at most {MAX_REPLACED} (the current versions of one memory)")
        return cls(
            id=memory_id,
            created_at=created,
            updated_at=updated,
            raw=raw,
            tags=normalise_tags(data.get("tags")),
            source=None if source is None else check_text(str(source), "'source'"),
            written_by=_optional_text(data.get("written_by"), "'written_by'") or "cli",
            compressed=compressed or None,
            compression=compression or None,
            extra={key: _plain(value, f"'{key}'") for key, value in data.items() if key not in KEY_ORDER},
            supersedes=[v for v in dict.fromkeys(supersedes) if v != memory_id],
        )

    def to_yaml(self) -> str:
        text = yamlfile.dump(self.to_dict(), literal=True)
        if yamlfile.load(text).get("raw") != self.raw:
            # Some text (a carriage return, trailing spaces before a line break) cannot survive a block
            # scalar; the quoted form is uglier but exact.
            text = yamlfile.dump(self.to_dict(), literal=False)
        return text

    @classmethod
    def from_yaml(cls, text: str, origin: str) -> "Memory":
        return cls.from_dict(yamlfile.parse_yaml(text, origin), origin)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


def _ordered_compression(info: dict | None) -> dict | None:
    if not info:
        return None
    ordered = {key: info[key] for key in COMPRESSION_ORDER if key in info}
    ordered.update({k: v for k, v in info.items() if k not in ordered})
    return ordered


def _kind(value) -> str:
    return "nothing" if value is None else type(value).__name__


def _shown(value) -> str:
    """A value as a message shows it: short, and never echoing a whole runaway structure."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _optional_text(value, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{what} must be text, not {_kind(value)}")
    return check_text(value, what)


COMPRESSION_TYPES = {"method": str, "kind": str, "kinds": list, "model": str, "raw_tokens": int, "tokens": int, "status": str,
                     "reason": str, "guarded": str}


def _compression(value) -> dict | None:
    """The compression mapping with each known key of its type (a status mem knows); others kept plain."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(f"'compression' must be a mapping, not {_kind(value)}")
    info = _plain(value, "'compression'")
    for key, kind in COMPRESSION_TYPES.items():
        item = info.get(key)
        if item is not None and (not isinstance(item, kind) or isinstance(item, bool)):
            raise InputError(f"'compression.{key}' must be {kind.__name__}, not {_kind(item)}")
    if info.get("status") is not None and info["status"] not in STATUSES:
        raise InputError(f"'compression.status' must be one of {', '.join(STATUSES)}, not {_shown(info['status'])}")
    return info


def _plain(value, what: str, depth: int = 0):
    """A value mem does not interpret, as JSON can hold it (the catalog and every --json output do):
    dates become ISO text; binary, sets, non-text keys, NaN, lone surrogates and runaway nesting are refused."""
    if depth > MAX_DEPTH:
        raise InputError(f"{what} nests deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{what} holds {value}, which JSON cannot")
        return value
    if isinstance(value, str):
        return check_text(value, what)
    if isinstance(value, dt.date):  # a datetime too
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(item, what, depth + 1) for item in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InputError(f"{what} has the key {_shown(key)}, which is not text (quote it)")
            out[check_text(key, what)] = _plain(item, what, depth + 1)
        return out
    raise InputError(f"{what} holds {_kind(value)}, which mem cannot keep (text, numbers, lists and mappings only)")
