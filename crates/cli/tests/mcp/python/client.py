"""Drives `toolhost serve` with the official MCP Python SDK (`mcp`, pinned in
requirements.txt), as the integration tests in ../ ask.

Usage: python client.py PLAN.json

The plan says how to reach the server and what to check:

    {"transport": "stdio" | "http",
     "mode": "legacy" | "2026-07-28",      # legacy: initialize + session (2025-11-25)
     "command": ["toolhost", "--config", "...", "serve"],   # stdio
     "url": "http://127.0.0.1:PORT/mcp", "token": "..." ,    # http
     "urls": ["http://127.0.0.1:P1/mcp", ...],               # http, requests alternate
     "log_level": "info",                  # 2026-07-28: the level every request opts in to
     "checks": [{"kind": ..., ...}, ...]}

Every check either passes or raises; the script prints one `ok KIND` line
per check and exits 0 only if all passed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged

PROTOCOL_VERSIONS = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}


class CheckFailed(AssertionError):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def text_of(result: types.CallToolResult) -> str:
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    expect(len(texts) == 1, f"expected one text content item, got {result.content!r}")
    return texts[0]


class Alternating(httpx2.AsyncBaseTransport):
    """Sends each request to the next of `urls` in turn, as a round-robin
    load balancer in front of replicas would."""

    def __init__(self, urls: list[str]):
        self.targets = [httpx2.URL(u) for u in urls]
        self.sent = [0] * len(urls)
        self.next = 0
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        index = self.next
        self.next = (index + 1) % len(self.targets)
        target = self.targets[index]
        request.url = request.url.copy_with(host=target.host, port=target.port)
        request.headers["Host"] = f"{target.host}:{target.port}"
        self.sent[index] += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Run:
    """One connection to the server, as the plan says."""

    def __init__(self, plan: dict[str, Any]):
        self.plan = plan
        self.changed = anyio.Event()
        self.alternating = Alternating(plan["urls"]) if "urls" in plan else None
        self.logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.changed.set()

    def http_client(self, headers: dict[str, str] | None = None) -> httpx2.AsyncClient:
        all_headers = {}
        if self.plan.get("token"):
            all_headers["Authorization"] = f"Bearer {self.plan['token']}"
        all_headers.update(headers or {})
        return httpx2.AsyncClient(
            headers=all_headers, timeout=httpx2.Timeout(60.0), transport=self.alternating
        )

    def client(self) -> Client:
        mode = self.plan["mode"]
        if self.plan["transport"] == "stdio":
            command = self.plan["command"]
            server: Any = StdioServerParameters(command=command[0], args=command[1:])
        else:
            url = self.plan.get("url") or self.plan["urls"][0]
            server = streamable_http_client(url, http_client=self.http_client())
        return Client(
            server,
            mode=mode,
            message_handler=self.on_message,
            logging_callback=self.on_log,
            log_level=self.plan.get("log_level"),
        )

    async def all_tools(self, client: Client) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor = None
        for _ in range(1000):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools
        raise CheckFailed("tools/list pages never ended")

    async def run(self) -> None:
        async with self.client() as client:
            want = PROTOCOL_VERSIONS[self.plan["mode"]]
            expect(client.protocol_version == want, f"negotiated {client.protocol_version}, wanted {want}")
            for check in self.plan["checks"]:
                await getattr(self, "check_" + check["kind"])(client, check)
                print("ok", check["kind"], flush=True)

    # --- checks -----------------------------------------------------------

    async def check_alternated(self, client: Client, check: dict[str, Any]) -> None:
        """Every replica got at least `min_requests` of the requests."""
        expect(self.alternating is not None, "the plan has no `urls` to alternate between")
        sent = self.alternating.sent
        expect(min(sent) >= check["min_requests"], f"requests per replica: {sent}")

    async def check_list(self, client: Client, check: dict[str, Any]) -> None:
        """The listed tools: exactly `names`, in order, the same twice; for
        each tool in `tools`, the fields it lists (objects may hold more keys
        than given); and none of `absent`."""
        first = await self.all_tools(client)
        second = await self.all_tools(client)
        names = [t.name for t in first]
        expect(names == check["names"], f"listed {names}, wanted {check['names']}")
        expect(names == [t.name for t in second], "two listings differ")
        by_name = {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in first}
        for name, fields in check.get("tools", {}).items():
            listed = by_name[name]
            for key, value in fields.items():
                expect(contains(listed.get(key), value), f"{name}.{key} is {listed.get(key)!r}, wanted {value!r}")
        for name in check.get("absent", []):
            expect(name not in by_name, f"{name} is listed")

    async def call(self, client: Client, call: dict[str, Any]) -> None:
        result = await client.call_tool(call["tool"], call.get("arguments"))
        text = text_of(result)
        if "error" in call:
            expect(result.is_error is True, f"{call['tool']}: wanted isError, got {text!r}")
            expect(text.startswith("Error: "), f"{call['tool']}: {text!r} is not an `Error: ...` text")
            expect(call["error"] in text, f"{call['tool']}: {text!r} does not say {call['error']!r}")
        else:
            expect(not result.is_error, f"{call['tool']}: failed with {text!r}")
            expect(text == call["text"], f"{call['tool']}: answered {text!r}, wanted {call['text']!r}")
            if "structured" in call:
                got = result.structured_content
                expect(got == call["structured"], f"{call['tool']}: structuredContent {got!r}")

    async def check_calls(self, client: Client, check: dict[str, Any]) -> None:
        """Each call in turn, with its answer or its error."""
        for call in check["calls"]:
            await self.call(client, call)

    async def check_concurrent(self, client: Client, check: dict[str, Any]) -> None:
        """All the calls at once; each gets its own answer."""
        failures: list[str] = []

        async def one(call: dict[str, Any]) -> None:
            try:
                await self.call(client, call)
            except CheckFailed as e:
                failures.append(str(e))

        async with anyio.create_task_group() as group:
            for call in check["calls"]:
                group.start_soon(one, call)
        expect(not failures, f"{len(failures)} concurrent calls failed: {failures[:3]}")

    async def check_cancel(self, client: Client, check: dict[str, Any]) -> None:
        """Starts a call that spins, cancels it after `after_ms`, then checks
        that the server's CPU is free again and that it still answers."""
        pid = self.server_pid(check)
        with anyio.move_on_after(check["after_ms"] / 1000):
            await client.call_tool(check["tool"], {})
            raise CheckFailed(f"{check['tool']} answered before it was cancelled")
        await anyio.sleep(0.3)
        before = cpu_seconds(pid)
        await anyio.sleep(1.0)
        used = cpu_seconds(pid) - before
        expect(used < 0.4, f"the server used {used:.2f} s of CPU in the second after the cancel")
        await self.call(client, check["then"])

    def server_pid(self, check: dict[str, Any]) -> int:
        if "pid" in check:
            return int(check["pid"])
        # stdio: the server is this process's child.
        children: list[int] = []
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            text = (task / "children").read_text().split()
            children.extend(int(c) for c in text)
        expect(len(children) == 1, f"expected one child process, found {children}")
        return children[0]

    async def check_logs(self, client: Client, check: dict[str, Any]) -> None:
        """Calls `tool`, which writes `lines` to stderr: they arrive as log
        entries (logger: the tool, level info), and the result is `text`
        alone. Then, with the level at `quiet_level` (`logging/setLevel` on
        a legacy connection, the request's own `_meta` at 2026-07-28), the
        same call sends no entry."""
        self.logs.clear()
        result = await client.call_tool(check["tool"], {})
        expect(text_of(result) == check["text"], f"answered {text_of(result)!r}, wanted {check['text']!r}")
        with anyio.fail_after(10):
            while len(self.logs) < len(check["lines"]):
                await anyio.sleep(0.02)
        got = [(e.level, e.logger, e.data) for e in self.logs]
        wanted = [("info", check["tool"], line) for line in check["lines"]]
        expect(got == wanted, f"log entries {got}, wanted {wanted}")
        self.logs.clear()
        quiet = check["quiet_level"]
        if self.plan["mode"] == "legacy":
            await client.set_logging_level(quiet)
            result = await client.call_tool(check["tool"], {})
        else:
            meta = {"io.modelcontextprotocol/logLevel": quiet}
            result = await client.call_tool(check["tool"], {}, meta=meta)
        expect(text_of(result) == check["text"], f"answered {text_of(result)!r} at level {quiet}")
        await anyio.sleep(0.5)
        expect(not self.logs, f"at level {quiet}, log entries came: {self.logs}")
        if self.plan["mode"] == "legacy":
            await client.set_logging_level("info")

    async def check_progress(self, client: Client, check: dict[str, Any]) -> None:
        """Calls `tool` with a progress token: at least `min_notifications`
        progress notifications arrive, each larger than the one before, and
        the result is `text`."""
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        result = await client.call_tool(check["tool"], {}, progress_callback=on_progress)
        expect(text_of(result) == check["text"], f"answered {text_of(result)!r}, wanted {check['text']!r}")
        expect(len(seen) >= check["min_notifications"], f"progress notifications: {seen}")
        values = [p for p, _, _ in seen]
        expect(all(b > a for a, b in zip(values, values[1:])), f"progress did not grow: {values}")
        expect(all(m and check["tool"] in m for _, _, m in seen), f"messages: {seen}")

    async def check_list_changed(self, client: Client, check: dict[str, Any]) -> None:
        """Writes `text` into the config at `config`; the server reloads and
        tells the client, which then lists `names`."""
        config = Path(check["config"])
        if self.plan["mode"] == "legacy":
            config.write_text(check["text"])
            with anyio.fail_after(20):
                await self.changed.wait()
        else:
            async with client.listen(tools_list_changed=True) as subscription:
                config.write_text(check["text"])
                with anyio.fail_after(20):
                    async for event in subscription:
                        expect(isinstance(event, ToolsListChanged), f"unexpected event {event!r}")
                        break
        names = [t.name for t in await self.all_tools(client)]
        expect(names == check["names"], f"after the change: {names}, wanted {check['names']}")


async def check_refused(plan: dict[str, Any], check: dict[str, Any]) -> None:
    """A request with `headers` gets HTTP `status` (and, for 401, a
    WWW-Authenticate header); the SDK's client fails to connect with them."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    headers.update(check.get("headers", {}))
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http:
        response = await http.post(plan["url"], json=body, headers=headers)
    expect(response.status_code == check["status"], f"status {response.status_code}, wanted {check['status']}")
    if check["status"] == 401:
        expect("Bearer" in response.headers.get("www-authenticate", ""), "no WWW-Authenticate: Bearer")
    connected = False
    try:
        async with httpx2.AsyncClient(headers=check.get("headers", {}), timeout=httpx2.Timeout(30.0)) as http:
            async with Client(streamable_http_client(plan["url"], http_client=http), mode=plan["mode"]) as client:
                await client.list_tools()
                connected = True
    except Exception:  # the SDK raises its own error types for HTTP errors
        pass
    expect(not connected, "the SDK's client got an answer")


def contains(got: Any, wanted: Any) -> bool:
    """`got` equals `wanted`, except that objects may have more keys."""
    if isinstance(wanted, dict):
        return isinstance(got, dict) and all(k in got and contains(got[k], v) for k, v in wanted.items())
    return bool(got == wanted)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


async def main(plan_path: str) -> None:
    plan = json.loads(Path(plan_path).read_text())
    refused = [c for c in plan["checks"] if c["kind"] == "refused"]
    plan["checks"] = [c for c in plan["checks"] if c["kind"] != "refused"]
    for check in refused:
        await check_refused(plan, check)
        print("ok refused", check["status"], flush=True)
    if plan["checks"]:
        await Run(plan).run()


if __name__ == "__main__":
    started = time.monotonic()
    anyio.run(main, sys.argv[1])
    print(f"all checks passed in {time.monotonic() - started:.1f} s", flush=True)
