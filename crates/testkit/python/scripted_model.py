"""A scripted model for tests: an OpenAI-compatible chat completions server
on 127.0.0.1 that answers each request with the next turn of a script and
records every request it got.

A turn is `{"content": "text"}` (a final answer) or `{"tool_calls": [{"name":
..., "arguments": {...}}, ...]}` (the model calling tools, in parallel when
there are several; the calls get ids `call_<turn>_<index>`), or both. Streamed
requests (`"stream": true`) get the same turn as server-sent chunks. A
request past the end of the script is answered 400 with a text saying so, and
recorded like any other.

    with ScriptedModel(turns) as model:
        client = AsyncOpenAI(base_url=model.url, api_key="scripted")
        ...
    model.requests  # the JSON bodies, in order

Standard library only: the agent frameworks' tests and the toolhost
package's tests both use it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ScriptedModel", "call_id"]

# The longest request body read; a bigger one is answered 413.
MAX_BODY_BYTES = 16 * 1024 * 1024


def call_id(turn: int, index: int) -> str:
    """The id the scripted model gives the `index`th tool call of turn `turn`."""
    return f"call_{turn}_{index}"


class ScriptedModel:
    """The server (see the module's text). Start it with `with` or `start()`."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes (`.../v1`)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "ScriptedModel":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ScriptedModel":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Records `body`; the status and the completion of the next turn."""
        with self._lock:
            turn = len(self.requests)
            self.requests.append(body)
        if turn >= len(self.turns):
            return 400, {"error": {
                "message": f"the scripted model has {len(self.turns)} turns; request {turn + 1} was not in the script",
                "type": "invalid_request_error",
            }}
        return 200, _completion(turn, self.turns[turn], body.get("model") or "scripted")


def _message(turn: int, script: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": script.get("content")}
    calls = script.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [
            {
                "id": call_id(turn, i),
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
            }
            for i, c in enumerate(calls)
        ]
    return message


def _completion(turn: int, script: dict[str, Any], model: str) -> dict[str, Any]:
    message = _message(turn, script)
    return {
        "id": f"chatcmpl-scripted-{turn}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
            "logprobs": None,
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def _chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """The completion as streamed chunks: the whole message as one delta,
    then the finish reason, then the usage."""
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if "tool_calls" in message:
        delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(message["tool_calls"])]
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    return [
        dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]),
        dict(base, choices=[], usage=completion["usage"]),
    ]


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, value: dict[str, Any]) -> None:
            self._send(status, json.dumps(value).encode(), "application/json")

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "test"}]})
            else:
                self._json(404, {"error": {"message": f"no {self.path} here: POST /v1/chat/completions"}})

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": f"no {self.path} here: POST /v1/chat/completions"}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._json(413, {"error": {"message": f"a request body over {MAX_BODY_BYTES} bytes"}})
                return
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError as e:
                self._json(400, {"error": {"message": f"the body is not JSON: {e}"}})
                return
            status, completion = model.answer(body)
            if status != 200 or not body.get("stream"):
                self._json(status, completion)
                return
            events = "".join(f"data: {json.dumps(c)}\n\n" for c in _chunks(completion)) + "data: [DONE]\n\n"
            self._send(200, events.encode(), "text/event-stream")

    return Handler
