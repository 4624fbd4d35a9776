"""The hook server's socket, both ends: how a hook hands its payload to the warm server of its store
(memcli.capture.serve) and gets the answer back.

`.capture/hook.sock`, in a folder only this user can enter. One connection per hook: the request is a
JSON object {data, event, client} (the payload as the client sent it, not yet redacted: the server
redacts before anything is written), the client shuts its side down, the server answers {answer} and
closes. Standard library only, the C socket module on the client's side: the hook pays for nothing else.
"""

from __future__ import annotations

import _socket
import json
import os
import stat

SOCKET = os.path.join(".capture", "hook.sock")  # relative to the store: a unix socket path is short
TIMEOUT_S = 5.0


def ask(root: str, data: str, event: str | None, client: str | None) -> str | None:
    """The server's answer for this payload, or None when no server of this user's listens for the store
    at `root` (the caller then does the work itself). Once the payload may have reached a server, a
    timeout or a broken connection answers "" (nothing to print): the server has the event, and doing
    the work again here would only double its cost."""
    if not _own_socket(root):
        return None
    request = json.dumps({"data": data, "event": event, "client": client}).encode("utf-8", "surrogatepass")
    here = os.getcwd()
    sent = False
    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(TIMEOUT_S)
            os.chdir(root)  # a unix socket's path is limited to about 100 bytes: connect relative
            try:
                conn.connect(SOCKET)
            finally:
                os.chdir(here)
            sent = True
            conn.sendall(request)
            conn.shutdown(_socket.SHUT_WR)
            reply = json.loads(_read_all(conn) or b"null")
        finally:
            conn.close()
    except TimeoutError:
        return ""
    except (OSError, ValueError):
        return "" if sent else None
    return reply.get("answer", "") if isinstance(reply, dict) else ""


def _own_socket(root: str) -> bool:
    """Whether `.capture/hook.sock` is a socket this user made, in the capture folder of this user's (no
    link on the way): a committed link, or a socket another user planted, is never handed a payload."""
    try:
        folder = os.lstat(os.path.join(root, os.path.dirname(SOCKET)))
        sock = os.lstat(os.path.join(root, SOCKET))
    except OSError:
        return False
    uid = os.geteuid()
    return (stat.S_ISDIR(folder.st_mode) and folder.st_uid == uid and stat.S_ISSOCK(sock.st_mode)
            and sock.st_uid == uid)


def read_request(conn) -> dict:
    """The server's side: one request, whole; ValueError (or KeyError) when it is not one."""
    conn.settimeout(TIMEOUT_S)
    request = json.loads(_read_all(conn))
    if not isinstance(request, dict) or not isinstance(request["data"], str):
        raise ValueError("not a hook request")
    return request


def answer(conn, text: str) -> None:
    conn.sendall(json.dumps({"answer": text}).encode("utf-8", "surrogatepass"))


def _read_all(conn) -> bytes:
    chunks = []
    while chunk := conn.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)
