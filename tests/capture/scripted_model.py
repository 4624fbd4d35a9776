"""A model server on the loopback for the real clients' tests: it speaks just enough of each client's API
(Anthropic Messages for Claude Code, OpenAI Responses for Codex CLI, Gemini's streamGenerateContent for
Gemini CLI) to ask for the tool calls a test scripts, one per turn, then answers `answer` ("done" unless
a test says otherwise). With no script it refuses every request (HTTP 400), as a model the client cannot
reach. Every call it asks for has an id of its own, as a real model's has.

The client runs each tool itself and fires its own hooks, so the payloads mem reads are the client's own.
"""

from __future__ import annotations

import http.server
import itertools
import json
import threading


class ScriptedModel:
    def __init__(self):
        self.calls: list[tuple[str, dict]] | None = None  # the tool calls to ask for, in the client's names
        self.asked: list[str] = []
        self.answer = "done"  # the text of a turn's last message
        self._serial = itertools.count(1)
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    request = {}
                model.asked.append(self.path)
                answer = model._answer(self.path, request)
                if answer is None:
                    self._send(400, "application/json", {"error": {"code": 400, "message": "no model here"}})
                else:
                    self._send(200, *answer)

            do_GET = do_POST

            def _send(self, status: int, kind: str, body) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        return Handler

    def _answer(self, path: str, request: dict):
        if self.calls is None or not isinstance(request, dict):
            return None
        if path.startswith("/v1/messages/count_tokens"):
            return "application/json", {"input_tokens": 1}
        if path.startswith("/v1/messages"):
            return _anthropic(self._next(_count(request.get("messages"), "tool_result"), bool(request.get("tools"))),
                              request, self.answer)
        if path.startswith("/v1/responses"):
            done = sum(1 for item in request.get("input", []) if isinstance(item, dict)
                       and str(item.get("type", "")).endswith("_output"))
            return _openai(self._next(done, True), self.answer)
        if "streamGenerateContent" in path:
            return _gemini(self._next(_count(request.get("contents"), "functionResponse"), True), self.answer)
        return None

    def _next(self, done: int, tools_offered: bool):
        """The call to ask for next, with its serial number, or None (then the answer)."""
        if tools_offered and done < len(self.calls):
            return (*self.calls[done], next(self._serial))
        return None


def _count(value, key: str) -> int:
    """How many tool results the conversation holds so far (blocks of type `key`, or parts with that key)."""
    if isinstance(value, list):
        return sum(_count(v, key) for v in value)
    if isinstance(value, dict):
        return int(value.get("type") == key or key in value) + sum(_count(v, key) for v in value.values())
    return 0


def _sse(events: list[dict], named: bool = True) -> tuple[str, bytes]:
    text = "".join((f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events)
    return "text/event-stream", text.encode()


def _anthropic(call, request: dict, answer: str):
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": request.get("model", "m"),
               "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    if not request.get("stream"):
        return "application/json", {**message, "content": [{"type": "text", "text": answer}], "stop_reason": "end_turn"}
    if call:
        block = {"type": "tool_use", "id": f"toolu_{call[2]:08d}", "name": call[0], "input": {}}
        delta, stop = {"type": "input_json_delta", "partial_json": json.dumps(call[1])}, "tool_use"
    else:
        block, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": answer}, "end_turn"
    return _sse([{"type": "message_start", "message": message},
                 {"type": "content_block_start", "index": 0, "content_block": block},
                 {"type": "content_block_delta", "index": 0, "delta": delta},
                 {"type": "content_block_stop", "index": 0},
                 {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                  "usage": {"output_tokens": 1}},
                 {"type": "message_stop"}])


def _openai(call, answer: str):
    if call and call[0] == "apply_patch":  # Codex's apply_patch is a freeform tool: the patch is its input
        item = {"type": "custom_tool_call", "id": f"ctc_{call[2]}", "status": "completed", "call_id": f"call_{call[2]}_patch",
                "name": "apply_patch", "input": call[1]["patch"]}
    elif call:
        item = {"type": "function_call", "id": f"fc_{call[2]}", "status": "completed", "call_id": f"call_{call[2]}_{call[0]}",
                "name": call[0], "arguments": json.dumps(call[1])}
    else:
        item = {"type": "message", "role": "assistant", "id": "msg_1",
                "content": [{"type": "output_text", "text": answer, "annotations": []}]}
    usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1, "output_tokens_details": None,
             "total_tokens": 2}
    return _sse([{"type": "response.created", "response": {"id": "resp_1"}},
                 {"type": "response.output_item.done", "item": item},
                 {"type": "response.completed", "response": {"id": "resp_1", "usage": usage}}])


def _gemini(call, answer: str):
    part = {"functionCall": {"name": call[0], "args": call[1]}} if call else {"text": answer}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
    return _sse([chunk], named=False)
