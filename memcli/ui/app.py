"""The page's routes on Starlette, its Jinja2 templates (package data under templates/), and the library's
errors as pages.

Pages are GET and change nothing; each action is a POST of a form that memcli.ui.access has checked,
answered by a redirect (303) back to a page, so a reload never repeats it. Templates escape every value
(autoescape): a memory's text is captured tool output and prompts, so it is data, never markup. Nothing
is served from a path the request names: there are no static files, the style is inline.
"""

from __future__ import annotations

import datetime as dt
from typing import Callable
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.routing import Route

from memcli.errors import AmbiguousId, InputError, MemError, NotFound
from memcli.index.when import local
from memcli.ui import memory_views, overview, timeline
from memcli.ui.access import FORM, FORM_FIELD, Checkpoint
from memcli.ui.store_thread import StoreThread

BACK = {"memories": "/", "sessions": "/sessions"}  # where an action may send the browser back to


def build(open_mem: Callable[[], object], token: str, port: int) -> tuple[Checkpoint, StoreThread]:
    """The ASGI app behind its checkpoint, and the thread that holds the store (to close at the end)."""
    thread = StoreThread(open_mem)
    pages = Pages(thread)
    app = Starlette(routes=[
        Route("/", pages.memories),
        Route("/memory/{handle}", pages.memory),
        Route("/memory/{handle}/delete", pages.delete, methods=["POST"]),
        Route("/memory/{handle}/tags", pages.tags, methods=["POST"]),
        # Sharing a captured item with the team store: issue 53 ("what a team store shares is a choice")
        # defines how. When the library has that call, its POST route goes here, beside delete and tags,
        # and the button the memory page shows disabled comes alive.
        Route("/sessions", pages.sessions),
        Route("/store", pages.overview),
    ])
    checkpoint = Checkpoint(app, token, port)
    pages.templates.globals["form_token"] = checkpoint.form_token
    pages.templates.globals["form_field"] = FORM_FIELD
    return checkpoint, thread


def templates() -> Environment:
    env = Environment(loader=PackageLoader("memcli.ui", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(when=_when, clock=_clock, query=_query, path=lambda text: quote(text, safe=""))
    env.globals["kinds"] = memory_views.KIND_CHOICES
    return env


class Pages:
    def __init__(self, thread: StoreThread):
        self.thread = thread
        self.templates = templates()

    def page(self, name: str, status: int = 200, **values) -> HTMLResponse:
        return HTMLResponse(self.templates.get_template(name).render(**values), status_code=status)

    async def common(self, request: Request) -> dict:
        """What every page says in its header: which store."""
        return await self.thread(lambda mem: {"store": str(mem.store.root)})

    async def memories(self, request: Request) -> HTMLResponse:
        asked = memory_views.Asked.from_params(request.query_params)
        try:
            found = await self.thread(lambda mem: memory_views.memories_page(mem, asked))
            error, status = None, 200
        except InputError as exc:  # a date or filter that does not parse: the form, with what is wrong
            found, error, status = None, str(exc), 400
        return self.page("memories.html", status, **await self.common(request), asked=asked, found=found,
                         error=error, deleted=request.query_params.get("deleted", ""), section="memories")

    async def memory(self, request: Request) -> HTMLResponse:
        handle = request.path_params["handle"]
        try:
            shown = await self.thread(lambda mem: memory_views.memory_page(mem, handle) | {"shared": not mem.store.private})
        except MemError as exc:
            return self.failed(exc, await self.common(request))
        return self.page("memory.html", **await self.common(request), memory=shown, section="memories")

    async def delete(self, request: Request):
        handle = request.path_params["handle"]
        back = BACK.get(_field(request, "back"), "/")
        try:
            ids = await self.thread(lambda mem: [(memory_id, mem.catalog.short_id(memory_id)) for memory_id in
                                                memory_views.delete(mem, handle)])
        except MemError as exc:
            return self.failed(exc, await self.common(request))
        return RedirectResponse(f"{back}?{urlencode({'deleted': ids[0][1]})}", status_code=303)

    async def tags(self, request: Request):
        handle = request.path_params["handle"]
        typed = _field(request, "tags")
        try:
            changed = await self.thread(lambda mem: memory_views.set_tags(mem, handle, typed))
        except MemError as exc:
            return self.failed(exc, await self.common(request))
        return RedirectResponse(f"/memory/{quote(changed.memory.id, safe='')}", status_code=303)

    async def sessions(self, request: Request) -> HTMLResponse:
        offset = memory_views.Asked.from_params(request.query_params).offset
        shown = await self.thread(lambda mem: timeline.sessions_page(mem, offset))
        return self.page("sessions.html", **await self.common(request), shown=shown,
                         deleted=request.query_params.get("deleted", ""), section="sessions")

    async def overview(self, request: Request) -> HTMLResponse:
        shown = await self.thread(overview.store_page)
        return self.page("store.html", **await self.common(request), shown=shown, section="store")

    def failed(self, exc: MemError, common: dict) -> HTMLResponse:
        status = 404 if isinstance(exc, (NotFound, AmbiguousId)) else 400 if isinstance(exc, InputError) else 500
        return self.page("failed.html", status, **common, message=str(exc), section="")


def _field(request: Request, name: str) -> str:
    """The first value of a field of the checked form (memcli.ui.access), or ""."""
    return next((value for key, value in request.scope.get(FORM, []) if key == name), "")


def _when(stamp: str) -> str:
    """A stored UTC time as the local day and minute, as `mem ls` shows it."""
    moment = local(dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc))
    return f"{moment.year:04d}-{moment:%m-%d %H:%M}"


def _clock(seconds: float) -> str:
    """A moment in seconds since the epoch as the local day and minute."""
    try:
        return dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "?"


def _query(params: dict) -> str:
    return urlencode(params)

