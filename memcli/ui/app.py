"""The page's routes on Starlette, its Jinja2 templates (package data under templates/), and the library's
errors as pages.

Pages are GET and change nothing; each action is a POST of a form that memcli.ui.access has checked,
answered by a redirect (303) back to a page, so a reload never repeats it. Templates escape every value
(autoescape): a memory's text is captured tool output and prompts, so it is data, never markup. Nothing
is served from a path the request names: there are no static files, the style is inline.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Callable
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.routing import Route

from memcli.errors import AmbiguousId, InputError, MemError, NotFound, describe
from memcli.index.when import local
from memcli.ui import memory_views, overview, timeline
from memcli.ui.access import FORM, FORM_FIELD, Checkpoint
from memcli.ui.store_thread import StoreThread

log = logging.getLogger("memcli")
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
        Route("/memory/{handle}/share", pages.share, methods=["POST"]),
        Route("/sessions", pages.sessions),
        Route("/store", pages.overview),
    ], exception_handlers={MemError: pages.failed, Exception: pages.failed})
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

    def common(self) -> dict:
        """What every page says in its header: which store (known once the page's own call opened it)."""
        return {"store": str(self.thread.root)}

    async def memories(self, request: Request) -> HTMLResponse:
        asked = memory_views.Asked.from_params(request.query_params)
        try:
            found = await self.thread(lambda mem: memory_views.memories_page(mem, asked))
            error, status = None, 200
        except InputError as exc:  # a date or filter that does not parse: the form, with what is wrong
            found, error, status = None, str(exc), 400
        return self.page("memories.html", status, **self.common(), asked=asked, found=found,
                         error=error, deleted=request.query_params.get("deleted", ""), section="memories")

    async def memory(self, request: Request) -> HTMLResponse:
        handle = request.path_params["handle"]
        shown = await self.thread(lambda mem: memory_views.memory_page(mem, handle) | {"shared": not mem.store.private})
        return self.page("memory.html", **self.common(), memory=shown, section="memories")

    async def delete(self, request: Request) -> RedirectResponse:
        handle = request.path_params["handle"]
        back = BACK.get(_field(request, "back"), "/")
        named, _ = await self.thread(lambda mem: memory_views.delete(mem, handle))
        return RedirectResponse(f"{back}?{urlencode({'deleted': named})}", status_code=303)

    async def tags(self, request: Request) -> RedirectResponse:
        handle = request.path_params["handle"]
        typed = _field(request, "tags")
        changed = await self.thread(lambda mem: memory_views.set_tags(mem, handle, typed))
        return RedirectResponse(f"/memory/{quote(changed.memory.id, safe='')}", status_code=303)

    async def share(self, request: Request) -> RedirectResponse:
        handle = request.path_params["handle"]
        shared = await self.thread(lambda mem: memory_views.share(mem, handle))
        return RedirectResponse(f"/memory/{quote(shared, safe='')}", status_code=303)

    async def sessions(self, request: Request) -> HTMLResponse:
        offset = memory_views.Asked.from_params(request.query_params).offset
        shown = await self.thread(lambda mem: timeline.sessions_page(mem, offset))
        return self.page("sessions.html", **self.common(), shown=shown,
                         deleted=request.query_params.get("deleted", ""), section="sessions")

    async def overview(self, request: Request) -> HTMLResponse:
        shown = await self.thread(overview.store_page)
        return self.page("store.html", **self.common(), shown=shown, section="store")

    async def failed(self, request: Request, exc: Exception) -> HTMLResponse:
        """A library error as a page that says it (a memory that is not there: 404); anything else also
        goes to stderr with its traceback."""
        if isinstance(exc, MemError):
            status = 404 if isinstance(exc, (NotFound, AmbiguousId)) else 400 if isinstance(exc, InputError) else 500
        else:
            log.error("mem ui: %s %s failed", request.method, request.url.path, exc_info=exc)
            status = 500
        return self.page("failed.html", status, **self.common(), message=describe(exc), section="")


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

