"""A small OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script, to show how mem
behaves when a compression server fails: 401, 429 with Retry-After, 500, a slow reply, a dropped
connection. It logs every request it receives (the proof of what left mem), and it is bounded:
after `max_requests` it answers 503 to anything more, and its slowest reply is capped.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_DELAY_S = 5.0


def reply(content: str) -> dict:
    return {"id": "x", "object": "chat.completion", "model": "scripted",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


class ScriptServer:
    """`steps` are consumed one per request: ("ok", content), ("status", code, headers), ("slow", seconds,
    content), ("drop",), ("echo", code) (an error quoting the request's key, as some proxies do). When the script runs out, `default` answers."""

    def __init__(self, steps=(), default=("status", 500, {}), max_requests: int = 50):
        self.steps = list(steps)
        self.default = default
        self.max_requests = max_requests
        self.requests: list[dict] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def sent_texts(self) -> list[str]:
        """The user message of every request received: what mem sent out."""
        return [m["content"] for r in self.requests for m in r["body"].get("messages", []) if m["role"] == "user"]

    def __enter__(self) -> "ScriptServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
        if exc[0] is None:
            self.assert_nothing_key_like()
            self.assert_nothing_from_an_excluded_path()

    def assert_nothing_key_like(self) -> None:
        """What every test that uses this server proves on the way out: no text that reached it
        holds anything redaction would still take out."""
        from memcli.privacy.redact import redact

        for text in self.sent_texts():
            found = redact(text)
            assert not found.total, f"the server received a secret ({found.counts}): {text[:200]!r}"

    def assert_nothing_from_an_excluded_path(self) -> None:
        """And none holds the text of a memory whose source the store's denylist names (.memignore,
        .gitignore, the default rules), whenever the test added the rule."""
        from helpers import load_file, memory_files, open_mem, store_root

        from memcli.errors import Refused

        if not self.requests or not (store_root() / "mem.yaml").is_file():
            return
        gate = open_mem().gate
        sent = "\n".join(self.sent_texts())
        for path in memory_files():
            record = load_file(path)
            try:
                gate.refuse_ignored_source(record.get("source"))
            except Refused:
                assert record["raw"][:60] not in sent, f"the server received the text of {record['source']}"

    def _next(self):
        with self.lock:
            if len(self.requests) > self.max_requests:
                return ("status", 503, {})
            return self.steps.pop(0) if self.steps else self.default

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                            "at": time.time()})
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                try:
                    self._answer(server._next())
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, step):
                kind = step[0]
                if kind == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if kind == "slow":
                    time.sleep(min(step[1], MAX_DELAY_S))
                    return self._send(200, reply(step[2]))
                if kind == "ok":
                    return self._send(200, reply(step[1]))
                if kind == "echo":
                    header = self.headers.get("authorization") or ""
                    return self._send(step[1], {"error": {"message": f"key {header.split()[-1]} refused; "
                                                                     f"request had Authorization: {header}"}})
                _, code, headers = step
                self._send(code, {"error": {"message": f"scripted {code}"}}, headers)

            def _send(self, code, payload, headers=None):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to answer

        return Handler
