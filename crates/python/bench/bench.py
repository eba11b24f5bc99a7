"""How much a sandboxed call through the toolhost package costs, next to the
frameworks' own pure-Python dispatch of the same echo tool.

    python crates/python/bench/bench.py target/wasm32-wasip2/guest/guest_echo.wasm

(after `pip install ./crates/python` and
`cargo build --profile guest --target wasm32-wasip2 -p guest-echo`).
Prints one run's table: median and p99 per call, calls/s on 1 and 2
threads, and the ratios. Plain `time.perf_counter_ns` loops; `--calls N`
sets how many calls each row makes.
"""

import argparse
import json
import statistics
import sys
import threading
import time
from typing import Callable, Dict, List

import toolhost


class PythonEcho:
    """The echo tool as a native Python tool."""

    def __call__(self, tool_name: str, arguments: dict) -> str:
        return arguments["text"]

    def tool_info(self) -> dict:
        return {"type": "function", "function": {"name": "echo"}}


class PurePythonManager:
    """The frameworks' dispatch, as they write it: a dict lookup, json.loads
    and the call, with the error handling that keeps a rollout going."""

    def __init__(self, tools: Dict[str, PythonEcho]):
        self.tools = tools

    def __call__(self, tool_call: dict) -> str:
        function = tool_call["function"]
        name = function["name"]
        tool = self.tools.get(name)
        if tool is None:
            return f"Error: unknown tool {name}"
        try:
            arguments = json.loads(function.get("arguments") or "{}")
            return tool(name, arguments)
        except Exception as e:  # noqa: BLE001 - the frameworks' behaviour
            return f"Error: {e}"


def per_call(fn: Callable[[], str], calls: int) -> List[float]:
    """Each call's time in microseconds."""
    times = []
    for _ in range(calls):
        started = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - started) / 1000)
    return times


def throughput(fn: Callable[[], str], calls: int, threads: int) -> float:
    """Calls per second with `threads` threads sharing `calls` calls."""
    each = calls // threads

    def work() -> None:
        for _ in range(each):
            fn()

    pool = [threading.Thread(target=work) for _ in range(threads)]
    started = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return each * threads / (time.perf_counter() - started)


def p99(times: List[float]) -> float:
    return sorted(times)[int(len(times) * 0.99)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("echo_wasm", help="the echo component (guest_echo.wasm)")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()

    sandboxed = toolhost.ToolManager([toolhost.load_module(args.echo_wasm, name="echo")])
    warm = toolhost.ToolManager([toolhost.load_module(args.echo_wasm, name="echo", warm=True)])
    native = toolhost.ToolManager([PythonEcho()])
    pure = PurePythonManager({"echo": PythonEcho()})
    text = json.dumps({"text": "hello"})
    rows = {
        "pure-Python dispatch (dict lookup + json.loads + call)": lambda: pure(
            {"id": "c", "type": "function", "function": {"name": "echo", "arguments": text}}
        ),
        "toolhost, native Python tool (unsandboxed)": lambda: native(
            {"id": "c", "type": "function", "function": {"name": "echo", "arguments": text}}
        ),
        "toolhost, WASM echo (fresh sandbox per call)": lambda: sandboxed(
            {"id": "c", "type": "function", "function": {"name": "echo_echo", "arguments": text}}
        ),
        "toolhost, WASM echo, warm module (`warm=True`: instances reused)": lambda: warm(
            {"id": "c", "type": "function", "function": {"name": "echo_echo", "arguments": text}}
        ),
    }
    for fn in rows.values():
        assert fn() == "hello"
    results = {}
    for label, fn in rows.items():
        per_call(fn, args.calls // 10)  # warm up
        times = per_call(fn, args.calls)
        results[label] = (
            statistics.median(times),
            p99(times),
            throughput(fn, args.calls, 1),
            throughput(fn, args.calls, 2),
        )
    sandboxed_call = rows["toolhost, WASM echo (fresh sandbox per call)"]
    spaced = []
    for _ in range(max(args.calls // 20, 10)):
        time.sleep(0.001)
        spaced.extend(per_call(sandboxed_call, 1))
    base = results[next(iter(rows))][0]
    print(f"toolhost Python package, {args.calls} calls per row, Python {sys.version.split()[0]}")
    print()
    print("| dispatch | median | p99 | median vs pure Python | calls/s, 1 thread | calls/s, 2 threads |")
    print("|---|---|---|---|---|---|")
    for label, (median, tail, one, two) in results.items():
        print(
            f"| {label} | {median:.2f} us | {tail:.2f} us | {median / base:.2f}x "
            f"| {one:,.0f} | {two:,.0f} ({two / one:.2f}x) |"
        )
    print()
    print(
        f"Fresh sandbox per call, calls 1 ms apart (an instance made ahead is ready): "
        f"median {statistics.median(spaced):.2f} us, p99 {p99(spaced):.2f} us, "
        f"{statistics.median(spaced) / base:.2f}x the pure-Python dispatch."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
