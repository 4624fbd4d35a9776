"""The memories page and one memory's page: what they show, and the two actions on a memory.

Listing, search, versions, deleting and retagging are the library calls the CLI makes (`mem ls`, `mem
search`, `mem show --history`, `mem rm`, `mem tag`), so the page and the command cannot disagree: a
search here ranks as `mem search` does, with its default mode, cut-off and number of results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from memcli.compress.kinds import KINDS, MIXED
from memcli.core import reading
from memcli.features.savings import stored_counts
from memcli.index.filters import Filters
from memcli.index.versions import chain, heads, own_versions
from memcli.store.memory import Memory, normalise_tags
from memcli.ui.dropped import marked

PAGE = 50  # memories a page of the listing shows
SEARCH_K = 10  # results of a search, as `mem search` gives by default (-n 10)
CLIP = 360  # characters of a memory's text a listing shows
KIND_CHOICES = (*KINDS, MIXED)
FIELDS = ("q", "tag", "kind", "source", "written_by", "since", "until")


@dataclass(frozen=True)
class Asked:
    """The memories page's form, as typed: a search, the filters, where the page starts."""

    q: str = ""
    tag: str = ""
    kind: str = ""
    source: str = ""
    written_by: str = ""
    since: str = ""
    until: str = ""
    offset: int = 0
    n: int = 0

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> "Asked":
        texts = {name: (params.get(name) or "").strip() for name in FIELDS}
        return cls(**texts, offset=_number(params.get("offset"), 0), n=_number(params.get("n"), 0))

    def filters(self) -> Filters:
        """As the CLI's filters read what a person typed (memcli.index.filters.Filters.parse); a source is a
        glob over the sources as written, as MCP reads it (the page has no working folder)."""
        return Filters.parse(self.tag.replace(",", " ").split(), self.since or None, self.until or None,
                             self.source or None, kind=self.kind or None, written_by=self.written_by or None)

    def params(self, **changes) -> dict[str, str]:
        """The non-empty fields, for a link to another page of the same listing."""
        values = {name: getattr(self, name) for name in FIELDS} | changes
        return {name: str(value) for name, value in values.items() if value not in ("", 0, None)}


def memories_page(mem, asked: Asked) -> dict:
    """The newest memories (a page of PAGE from `offset`), or a search's hits best first."""
    filters = asked.filters()
    if asked.q:
        k = asked.n or SEARCH_K
        hits = reading.search(mem, asked.q, k=k, filters=filters)
        rows = [row(mem, hit.memory, hit.score) for hit in hits]
        return {"rows": rows, "more": asked.params(n=k + SEARCH_K) if len(rows) == k else None, "earlier": None,
                "under_cut": getattr(hits, "under_cut", None), "total": None}
    memories = list(reading.listing(mem, filters, PAGE + 1, offset=asked.offset))
    return {"rows": [row(mem, memory) for memory in memories[:PAGE]],
            "more": asked.params(offset=asked.offset + PAGE) if len(memories) > PAGE else None,
            "earlier": asked.params(offset=max(asked.offset - PAGE, 0)) if asked.offset else None,
            "under_cut": None, "total": mem.catalog.count() if mem.readable() and not filters else None}


def row(mem, memory: Memory, score: float | None = None) -> dict:
    """One memory as a listing shows it."""
    content = " ".join(memory.content.split())
    return {**facts(memory), "id": memory.id, "short": mem.catalog.short_id(memory.id), "score": score,
            "content": content if len(content) <= CLIP else content[:CLIP - 1] + "…"}


def facts(memory: Memory) -> dict:
    """What is said of a memory beside its text: when, tags, source, who wrote it, its kind, its tokens."""
    info = memory.compression or {}
    counts = stored_counts(memory)
    return {"created_at": memory.created_at, "tags": list(memory.tags), "source": memory.source,
            "written_by": memory.written_by, "kind": info.get("kind"), "status": memory.status,
            "optimized": memory.optimized, "replaced_by": memory.superseded_by,
            "tokens": {"raw": counts[0], "read": counts[1], "saved": counts[0] - counts[1]} if counts else None}


def memory_page(mem, handle: str) -> dict:
    """One memory (a short id, the full id or a unique beginning): its two forms side by side with what
    compression dropped marked, its versions, the guard's verdict."""
    memory = reading.get(mem, handle)
    versions = chain(mem.catalog, memory.id)
    current = {m.id for m in heads(versions)}
    from memcli.store.memory import is_local

    return {**facts(memory), "id": memory.id, "short": mem.catalog.short_id(memory.id), "score": None, "raw": memory.raw,
            "kept_here": is_local(reading.relpath_of(mem, memory.id)),
            "compressed": memory.compressed, "method": (memory.compression or {}).get("method"),
            "marks": marked(memory.raw, memory.compressed) if memory.compressed is not None else None,
            "verdict": verdict(memory),
            "versions": [{"id": m.id, "short": mem.catalog.short_id(m.id), "created_at": m.created_at,
                          "current": m.id in current, "this": m.id == memory.id} for m in versions]}


def verdict(memory: Memory) -> tuple[str, str]:
    """(passes | rejects | raw, what it means): a compressed form checked by the guard now, as an imported
    or hand-edited form is (memcli.compress.pipeline.check_given); a memory kept raw says why."""
    if memory.compressed is not None:
        from memcli.compress.pipeline import check_given

        reason = check_given(memory.raw, memory.compressed, (memory.compression or {}).get("method"))
        if reason is None:
            return "passes", "the compressed form passes the guard: it keeps every protected span and invents nothing"
        return "rejects", f"the guard rejects the compressed form: {reason}"
    info = memory.compression or {}
    status, reason = info.get("status"), info.get("reason")
    if status == "pending":
        return "raw", "compression waits in the work queue"
    if status is None:
        return "raw", "never compressed"
    return "raw", f"kept raw ({status})" + (f": {reason}" if reason else "")


def delete(mem, handle: str) -> tuple[str, list[str]]:
    """Delete a memory with all its versions, as `mem rm` does: its short id (named before it goes), and
    the ids deleted."""
    from memcli.core.writing import remove

    named = reading.get(mem, handle)
    short = mem.catalog.short_id(named.id)
    versions = own_versions(mem.catalog, named.id)
    remove(mem, versions)
    return short, [m.id for m in versions]


def share(mem, handle: str) -> str:
    """Share a memory kept on this machine with the team store, with its versions, as `mem share` does;
    its id."""
    from memcli.features.sharing import share as share_memory

    memory = reading.get(mem, handle)
    share_memory(mem, [memory.id])
    return memory.id


def set_tags(mem, handle: str, typed: str):
    """Make a memory's tags those typed (spaces or commas between them), as `mem tag ID +new -old` does."""
    from memcli.core.writing import retag

    memory = reading.get(mem, handle)
    wanted = normalise_tags(typed.replace(",", " ").split())
    return retag(mem, memory, [t for t in wanted if t not in memory.tags], [t for t in memory.tags if t not in wanted])


def _number(text: str | None, default: int) -> int:
    return int(text) if text and text.isdigit() and len(text) < 10 else default
