"""A test tool of outbound HTTP from Python: one GET through wasi:http.

Built by `xtask::build_python_http_component` against the world
`tool-http` (`wit/world.wit` here: the toolhost:tool world plus
`wasi:http/outgoing-handler`), so componentize-py generates the bindings
`wit_world.imports.*` this module uses.
"""

import json
from urllib.parse import urlsplit

from componentize_py_types import Err
from toolhost_guest import Toolbox, ToolError
from wit_world.imports import outgoing_handler, types
from wit_world.imports.streams import StreamError_Closed, StreamError_LastOperationFailed

tools = Toolbox()

# How much of the body is read at a time.
CHUNK = 64 * 1024


def _name(code) -> str:
    """An `error-code` as its case name (`ErrorCode_HttpRequestDenied` ->
    `HttpRequestDenied`), with its payload when it has one."""
    name = type(code).__name__.removeprefix("ErrorCode_")
    value = getattr(code, "value", None)
    return name if value is None else f"{name} ({value})"


def _request(url: str) -> types.OutgoingRequest:
    parts = urlsplit(url)
    if parts.scheme == "http":
        scheme = types.Scheme_Http()
    elif parts.scheme == "https":
        scheme = types.Scheme_Https()
    else:
        raise ToolError(f"'{url}' is not an http or https URL")
    if not parts.netloc:
        raise ToolError(f"'{url}' has no host")
    request = types.OutgoingRequest(types.Fields())
    request.set_method(types.Method_Get())
    request.set_scheme(scheme)
    request.set_authority(parts.netloc)
    request.set_path_with_query((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
    return request


def _response(url: str) -> types.IncomingResponse:
    """Sends a GET of `url` and blocks until its response's head arrives."""
    try:
        future = outgoing_handler.handle(_request(url), None)
    except Err as e:
        raise ToolError(_name(e.value)) from None
    with future:
        while (answer := future.get()) is None:
            with future.subscribe() as ready:
                ready.block()
    if isinstance(answer, Err):  # the response was already taken: cannot happen here
        raise ToolError("the response was already taken")
    if isinstance(answer.value, Err):
        raise ToolError(_name(answer.value.value))
    return answer.value.value


def _read_body(response: types.IncomingResponse) -> bytes:
    chunks = []
    with response.consume() as body:
        with body.stream() as stream:
            while True:
                try:
                    chunks.append(stream.blocking_read(CHUNK))
                except Err as e:
                    if isinstance(e.value, StreamError_Closed):
                        break
                    assert isinstance(e.value, StreamError_LastOperationFailed)
                    with e.value.value as error:
                        code = types.http_error_code(error)
                        text = _name(code) if code is not None else error.to_debug_string()
                    raise ToolError(text) from None
    return b"".join(chunks)


@tools.tool
def py_http_get(url: str) -> str:
    """GETs a URL through wasi:http; answers {"status", "body"} as JSON."""
    with _response(url) as response:
        status = response.status()
        body = _read_body(response)
    return json.dumps({"status": status, "body": body.decode("utf-8", errors="replace")})


# componentize-py exports the class named WitWorld.
WitWorld = tools.world()
