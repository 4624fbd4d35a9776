"""Who may ask `mem ui` anything, checked before any page or action runs (an ASGI middleware).

A server on 127.0.0.1 is within reach of every local user and of every web page the user's browser
opens, and the store it serves holds captured tool output and prompts. So:

- the token: a random secret made at each start goes in the URL the command prints and opens (as
  Jupyter does). The first request carrying it gets it back as a cookie (HttpOnly, SameSite=Strict,
  named after the port, since cookies do not tell the ports of one host apart) and is sent on to the
  same address without it; any request with neither a valid token in its address nor the cookie is
  refused, whatever it asks for;
- the Host header must name this server (127.0.0.1:PORT or localhost:PORT): a site whose name a DNS
  rebinding points at 127.0.0.1 sends its own name, and is refused;
- a change (POST, the only method besides GET and HEAD) must carry the form token (derived from the
  token, so the page never shows the token itself) in its url-encoded form, and is refused when its
  Origin, or its Sec-Fetch-Site, says another site sent it; the SameSite cookie is not sent with
  another site's request anyway;
- every answer is not to be cached or framed, names itself as referrer to this page only (with none
  at all, a browser sends `Origin: null` with the page's own forms), and its content security policy
  lets no script run at all and forms post to this page only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import parse_qsl, urlencode

MAX_FORM_BYTES = 64 * 1024
FORM_FIELD = "form_token"
FORM = "mem.form"  # where the checked form of a POST waits for its endpoint, in the ASGI scope
POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
          "frame-ancestors 'none'; base-uri 'none'")
HEADERS = [(b"content-security-policy", POLICY.encode()), (b"x-content-type-options", b"nosniff"),
           (b"x-frame-options", b"DENY"), (b"referrer-policy", b"same-origin"), (b"cache-control", b"no-store")]


def new_token() -> str:
    return secrets.token_urlsafe(32)


def form_token(token: str) -> str:
    """What every form of the page carries (a cross-site form cannot know it)."""
    return hmac.new(token.encode(), b"mem ui form", hashlib.sha256).hexdigest()


class Refused(Exception):
    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status = status


class Checkpoint:
    """Wraps the page's ASGI app: a request reaches it only past every check above."""

    def __init__(self, app, token: str, port: int):
        self.app, self.token = app, token
        self.form_token = form_token(token)
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}
        self.cookie = f"mem_ui_{port}"

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            return await self.app(scope, receive, send)
        if scope["type"] != "http":
            return await send({"type": "websocket.close", "code": 1008})

        async def secured(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        try:
            moved = self._check(scope)
            if moved is not None:
                return await _answer(secured, 303, "", [(b"location", moved.encode()), self._set_cookie()])
            if scope["method"] == "POST":
                scope[FORM] = await self._form(scope, receive)
        except Refused as exc:
            return await _answer(secured, exc.status, f"mem ui refused this request: {exc}\n")
        await self.app(scope, _replay(receive) if scope["method"] == "POST" else receive, secured)

    def _check(self, scope) -> str | None:
        """Refused, or where a request that brought the token in its address goes on (None: it may go in)."""
        headers = _headers(scope)
        hosts = headers.get("host", [])
        if len(hosts) != 1 or hosts[0] not in self.hosts:
            raise Refused(403, "this page answers to 127.0.0.1 and localhost at its own port only")
        if scope["method"] not in ("GET", "HEAD", "POST"):
            raise Refused(405, "only GET and POST")
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [value for name, value in query if name == "token"]
        if given and self._valid(given[0]) and scope["method"] != "POST":
            rest = urlencode([(name, value) for name, value in query if name != "token"])
            path = scope.get("raw_path", scope["path"].encode()).decode("latin-1")
            path = path if path.startswith("/") and not path.startswith("//") else "/"  # never another host
            return path + (f"?{rest}" if rest else "")
        if not any(self._valid(value) for value in _cookies(headers).get(self.cookie, [])):
            raise Refused(403, "open the address `mem ui` printed: it carries this run's token")
        if scope["method"] == "POST":
            origin = headers.get("origin", [])
            if origin and origin[0] not in self.origins:
                raise Refused(403, "a change sent from another site")
            site = headers.get("sec-fetch-site", [])
            if site and site[0] not in ("same-origin", "none"):
                raise Refused(403, "a change sent from another site")
        return None

    def _valid(self, value: str) -> bool:
        return hmac.compare_digest(value.encode(), self.token.encode())

    def _set_cookie(self) -> tuple[bytes, bytes]:
        return b"set-cookie", f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode()

    async def _form(self, scope, receive) -> list[tuple[str, str]]:
        """The url-encoded form of a POST, once its form token is checked."""
        kind = _headers(scope).get("content-type", [""])[0].split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise Refused(415, "a change is a form (application/x-www-form-urlencoded)")
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_FORM_BYTES:
                raise Refused(413, "the form is too large")
            if not message.get("more_body"):
                break
        try:
            form = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
        except UnicodeDecodeError:
            raise Refused(400, "the form is not UTF-8") from None
        tokens = [value for name, value in form if name == FORM_FIELD]
        if len(tokens) != 1 or not hmac.compare_digest(tokens[0].encode(), self.form_token.encode()):
            raise Refused(403, "a change without this page's form token")
        return form


def _headers(scope) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, value in scope.get("headers", []):
        found.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return found


def _cookies(headers: dict[str, list[str]]) -> dict[str, list[str]]:
    """Every name=value of the Cookie headers (a name may come more than once: all are looked at)."""
    found: dict[str, list[str]] = {}
    for line in headers.get("cookie", []):
        for pair in line.split(";"):
            name, sign, value = pair.strip().partition("=")
            if sign:
                found.setdefault(name, []).append(value.strip().strip('"'))
    return found


def _replay(receive):
    """The body was read to check the form: the app gets an empty one, and the form from the scope."""
    sent = False

    async def again():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return await receive()

    return again


async def _answer(send, status: int, text: str, headers: list[tuple[bytes, bytes]] = ()) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})
