"""The sessions page: the captured coding sessions of each project, newest first, with their prompts,
their observations, their summary, what capture skipped and why, and the digest the next session will
be handed.

A session's state is what the capture runner folded its events into (memcli.capture.spool, .capture/);
its observations and summary are memories (source `session/<id>#<n>` and `session/<id>`), found with one
query for a whole page of sessions. The digest is read the way `mem hook SessionStart` reads it
(memcli.capture.hook: the store's `capture:` settings, the digest the last run wrote, cut to their room),
so the page shows exactly what the assistant will get; its tokens are counted with the compression
model's tokenizer, as the runner counts them when it fits the digest to `capture.inject_tokens`.
"""

from __future__ import annotations

from pathlib import Path

from memcli.capture.options import CaptureOptions
from memcli.capture.projects import project_of
from memcli.capture.spool import Spool
from memcli.core.reading import listing
from memcli.index.filters import Filters
from memcli.store.sources import glob_escape
from memcli.ui.memory_views import row

SESSIONS = 20  # sessions a page shows
OBSERVATIONS = 40  # observations shown under one session (the memories page lists them all)
SKIPPED = "skipped: "


def sessions_page(mem, offset: int = 0) -> dict:
    spool = Spool(mem.store.root)
    states = sorted((s for s in spool.all_sessions() if isinstance(s.get("id"), str)),
                    key=lambda s: _number(s.get("last")), reverse=True)
    shown = states[offset:offset + SESSIONS]
    observed = _by_session(mem, "observation", [glob_escape(f"session/{s['id']}") + "#*" for s in shown])
    summaries = _by_session(mem, "session", [glob_escape(f"session/{s['id']}") for s in shown])
    projects: dict[str, list[dict]] = {}
    for state in shown:
        found = observed.get(state["id"], [])
        summary = summaries.get(state["id"], [])
        projects.setdefault(_text(state.get("cwd")), []).append({
            "id": state["id"], "client": _text(state.get("client")), "started": _number(state.get("started")),
            "last": _number(state.get("last")), "events": _number(state.get("seq")),
            "prompts": _texts(state.get("prompts")), "changed": _texts(state.get("changed")),
            "open": _texts(state.get("open")), "failures": [_text(f[0]) for f in state.get("failures") or []
                                                            if isinstance(f, list) and f],
            "observations": [row(mem, m) for m in found[:OBSERVATIONS]], "observed": len(found),
            "summary": row(mem, summary[0]) | {"text": summary[0].raw} if summary else None})
    counts = spool.state().get("counts") or {}
    project = project_of(_text(states[0].get("cwd"))) if states else ""
    digest, options = next_digest(mem.store.root, project)
    return {"projects": list(projects.items()), "sessions": len(states), "offset": offset,
            "more": offset + SESSIONS if len(states) > offset + SESSIONS else None,
            "earlier": max(offset - SESSIONS, 0) if offset else None,
            "skipped": {reason[len(SKIPPED):]: n for reason, n in counts.items() if reason.startswith(SKIPPED)},
            "done": {reason: n for reason, n in counts.items() if not reason.startswith(SKIPPED)},
            "problems": spool.state().get("errors") or {},
            "digest": digest, "digest_project": project, "digest_tokens": _count(mem)(digest) if digest else 0,
            "tokenizer": mem.settings.compress_model, "budget": options.inject_tokens, "capturing": options.enabled}


def next_digest(root: Path, project: str) -> tuple[str, CaptureOptions]:
    """What the next SessionStart hook in `project` (memcli.capture.projects) hands the assistant, read as
    the hook reads it, and the options it was read with. The page shows the project of the newest
    captured session: a store filled by `--user` hooks holds several, each with its own digest."""
    from memcli.capture.hook import store_settings, trim

    options = CaptureOptions.from_settings(store_settings(root).get("capture"))
    return (trim(Spool(root).context(project), options.inject_chars) if options.enabled else ""), options


def _by_session(mem, tag: str, globs: list[str]) -> dict[str, list]:
    """The current memories with this tag whose source one of the globs matches, newest first, by session id
    (the source up to its `#`)."""
    if not globs:
        return {}
    found: dict[str, list] = {}
    for memory in listing(mem, Filters(tags=(tag,), source=tuple(globs))):
        named = (memory.source or "").removeprefix("session/")
        session = named.rpartition("#")[0] if tag == "observation" else named
        found.setdefault(session, []).append(memory)
    return found


def _count(mem):
    """The compression model's token count; without that model, the runner's own estimate (three
    characters a token: memcli.capture.event_jobs)."""
    count = mem.cheap_counter(batch=True)
    return count or (lambda text: -(-len(text) // 3))


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _texts(value) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
