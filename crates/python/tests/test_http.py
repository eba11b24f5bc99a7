"""Outbound HTTP from the Python package: the `grants` dict takes the
config's `[modules.grants.http]` keys, against a server on 127.0.0.1."""

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

import toolhost

SECRET = "py-s3cret-5d2e"


class _Recorder(BaseHTTPRequestHandler):
    seen: List[Tuple[str, dict]] = []

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        headers = {name.lower(): value for name, value in self.headers.items()}
        _Recorder.seen.append((self.path, headers))
        body = b"hello from python's server"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    _Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _origin(httpd: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def test_a_granted_origin_gets_the_request_and_the_secret(
    http_path: Path, server: ThreadingHTTPServer
) -> None:
    origin = _origin(server)
    os.environ["TOOLHOST_PY_TEST_TOKEN"] = SECRET
    module = toolhost.load_module(
        http_path,
        name="g",
        grants={
            "http": {
                "allow": [f"{origin}/api/"],
                "secret_headers": [
                    {"origin": origin, "name": "X-Key", "env": "TOOLHOST_PY_TEST_TOKEN"}
                ],
            }
        },
    )
    manager = toolhost.ToolManager([module])
    call = {
        "id": "1",
        "type": "function",
        "function": {"name": "g_http_request", "arguments": json.dumps({"url": f"{origin}/api/x"})},
    }
    answer = json.loads(manager(call))
    assert answer["status"] == 200
    assert answer["body"] == "hello from python's server"
    path, headers = _Recorder.seen[0]
    assert path == "/api/x"
    assert headers.get("x-key") == SECRET
    assert SECRET not in json.dumps(answer["sent_headers"])

    call["function"]["arguments"] = json.dumps({"url": f"{origin}/other"})
    denied = manager(call)
    assert denied.startswith("Error: tool 'g_http_request' failed: http error: HTTP-request-denied")
    assert len(_Recorder.seen) == 1


def test_without_a_grant_every_request_is_denied(
    http_path: Path, server: ThreadingHTTPServer
) -> None:
    manager = toolhost.ToolManager([toolhost.load_module(http_path, name="g")])
    call = {
        "id": "1",
        "type": "function",
        "function": {"name": "g_http_request", "arguments": json.dumps({"url": _origin(server) + "/"})},
    }
    assert "HTTP-request-denied" in manager(call)
    assert _Recorder.seen == []


def test_an_unset_secret_variable_is_a_load_error(http_path: Path) -> None:
    with pytest.raises(toolhost.LoadError, match="TOOLHOST_PY_SURELY_UNSET"):
        toolhost.load_module(
            http_path,
            grants={
                "http": {
                    "allow": ["https://api.example.com"],
                    "secret_headers": [
                        {
                            "origin": "https://api.example.com",
                            "name": "Authorization",
                            "env": "TOOLHOST_PY_SURELY_UNSET",
                        }
                    ],
                }
            },
        )
