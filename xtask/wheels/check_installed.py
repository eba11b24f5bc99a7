"""Checks an installed toolhost wheel as a user meets it: run by
`cargo xtask wheels --test` with the Python of a fresh virtual environment
that has only the wheel installed, from a folder outside the repository,
with no Rust toolchain on PATH.

    python check_installed.py package   # the `toolhost` Python package
    python check_installed.py command   # the `toolhost` command (toolhost-cli)

The current folder holds `toolhost.toml`, which loads the bundled `calc`
and the file module `hostile.wasm` (a test guest whose `trap` tool traps).
Prints one JSON object of what it saw; exits non-zero with the reason on
the first check that fails.
"""

import json
import os
import queue
import shutil
import subprocess
import sys
import threading

CALL = {"expression": "2 * (3 + 4)"}


def fail(message):
    print(f"check failed: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def no_rust():
    for program in ("cargo", "rustc", "rustup"):
        found = shutil.which(program)
        check(found is None, f"{program} is on PATH ({found}); the check runs without Rust")


def check_metadata(distribution, version):
    """The wheel's metadata is complete, and its version is the one the
    package or command says."""
    from importlib import metadata

    meta = metadata.metadata(distribution)
    check(meta["Version"] == version, f"{distribution} {meta['Version']} says it is {version}")
    check(meta["Summary"], f"{distribution} has no summary")
    check(meta["License-Expression"] == "Apache-2.0", f"licence: {meta['License-Expression']!r}")
    check(meta["Requires-Python"] == ">=3.9", f"Requires-Python: {meta['Requires-Python']!r}")
    urls = meta.get_all("Project-URL") or []
    check(any(u.startswith("Repository, ") for u in urls), f"no Repository URL: {urls}")
    content_type = meta.get("Description-Content-Type") or ""
    check(content_type.startswith("text/markdown"), "no README as its description")
    return len(urls)


def tool_call(name, arguments):
    return {
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def check_package():
    import toolhost

    where = os.path.dirname(toolhost.__file__)
    check(where.startswith(sys.prefix), f"toolhost was imported from {where}, not the environment")
    for name in ("py.typed", "_native.pyi", "__init__.py"):
        check(os.path.isfile(os.path.join(where, name)), f"the package has no {name}")
    manager = toolhost.ToolManager.from_config("toolhost.toml")
    names = sorted(manager.names())
    check("calc_evaluate" in names, f"the bundled calc is not loaded: {names}")
    check("hostile_trap" in names, f"the file module is not loaded: {names}")
    answer = manager(tool_call("calc_evaluate", CALL))
    check(answer == "14", f"calc_evaluate answered {answer!r}")
    trapped = manager(tool_call("hostile_trap", {}))
    check(trapped.startswith("Error: "), f"a trap answered {trapped!r}")
    urls = check_metadata("toolhost", toolhost.__version__)
    return {"version": toolhost.__version__, "tools": len(names), "urls": urls, "trap": trapped}


def run(*args):
    done = subprocess.run(["toolhost", *args], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout.strip(), done.stderr.strip()


def mcp_tools_list():
    """`toolhost serve` on stdio: initialize, then tools/list."""
    server = subprocess.Popen(
        ["toolhost", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in server.stdout], daemon=True).start()

    def send(message):
        server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        server.stdin.flush()

    def answer(id):
        while True:
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                fail(f"toolhost serve did not answer request {id} within 60 s")
            message = json.loads(line)
            if message.get("id") == id:
                check("result" in message, f"request {id} was answered {message}")
                return message["result"]

    try:
        send({
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "wheel-check", "version": "1"},
            },
        })
        answer(1)
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/list"})
        return sorted(tool["name"] for tool in answer(2)["tools"])
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def check_command():
    found = shutil.which("toolhost")
    check(found is not None and found.startswith(sys.prefix), f"toolhost on PATH is {found}")
    code, version, _ = run("--version")
    check(code == 0 and version.startswith("toolhost "), f"--version printed {version!r}")
    code, listed, _ = run("list")
    check(code == 0 and "calc_evaluate" in listed, f"list printed {listed!r}")
    code, answer, _ = run("call", "calc_evaluate", json.dumps(CALL))
    check(code == 0 and answer == "14", f"call answered {answer!r} (exit {code})")
    code, trapped, _ = run("--config", "toolhost.toml", "call", "hostile_trap", "{}")
    check(code == 1 and trapped.startswith("Error: "), f"a trap answered {trapped!r} (exit {code})")
    tools = mcp_tools_list()
    check("calc_evaluate" in tools, f"tools/list gave {tools}")
    version = version.split()[-1]
    urls = check_metadata("toolhost-cli", version)
    return {"version": version, "mcp_tools": len(tools), "urls": urls, "trap": trapped}


if __name__ == "__main__":
    no_rust()
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    checks = {"package": check_package, "command": check_command}
    check(which in checks, f"say which: {' or '.join(checks)}")
    print(json.dumps(checks[which]()))
