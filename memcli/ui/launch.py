"""`mem ui` running: a socket on 127.0.0.1 (never another address), the address with this run's token,
uvicorn serving the page until it is stopped, and a browser opened on it where there is one.

The socket is bound before uvicorn starts, so the port (any free one unless asked) is known when the
address is printed, and a browser that connects before the server is up waits in the socket's backlog.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
from typing import Callable

from memcli.errors import InputError
from memcli.ui.access import new_token
from memcli.ui.app import build

HOST = "127.0.0.1"


class Served:
    """The page of one store, ready to run: `url` carries the token."""

    def __init__(self, open_mem: Callable[[], object], port: int = 0):
        import uvicorn

        self.socket = bind(port)
        self.port = self.socket.getsockname()[1]
        self.token = new_token()
        app, self.store = build(open_mem, self.token, self.port)
        self.server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False,
                                                    server_header=False, proxy_headers=False, ws="none",
                                                    timeout_graceful_shutdown=3))

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def run(self) -> None:
        """Serve until stopped (Ctrl-C, or `stop` from another thread). uvicorn raises the Ctrl-C again once it
        has shut down; here it is the way to stop, not an interruption."""
        try:
            self.server.run(sockets=[self.socket])
        except KeyboardInterrupt:
            pass
        finally:
            self.store.close()
            self.socket.close()

    def stop(self) -> None:
        self.server.should_exit = True


def bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {HOST} is in use (--port 0 takes any free port)") from None
        raise InputError(f"cannot listen on {HOST}:{port}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


def can_open_browser() -> bool:
    """Whether a graphical browser can be opened here: on Linux only with a display (without one, Python's
    webbrowser would start a text browser in this very terminal)."""
    return sys.platform == "darwin" or bool(os.environ.get("BROWSER") or os.environ.get("DISPLAY")
                                            or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str) -> bool:
    import webbrowser

    try:
        return webbrowser.open(url, new=2)
    except webbrowser.Error:
        return False
