"""Calls from several threads run in parallel (the GIL is released while a
sandboxed call runs), and asyncio code awaits calls without blocking its loop.

The tool here sleeps inside the sandbox, so that the parallelism shown is
the host's and not the machine's core count."""

import asyncio
import threading
import time

from toolhost import Tool, ToolManager

from conftest import call

SLEEP_MS = 200


def sleep_call(i=0):
    return call("hostile_sleep", {"ms": SLEEP_MS}, id=f"s{i}")


def timed(fn):
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def test_eight_threads_run_in_parallel(hostile):
    manager = ToolManager([hostile])
    assert manager(sleep_call()) == "woke up"
    one = timed(lambda: manager(sleep_call()))
    answers = []

    def worker(i):
        answers.append(manager(sleep_call(i)))

    def eight():
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    took = timed(eight)
    assert answers == ["woke up"] * 8
    # Serialised on the GIL they would take 8x one call; in parallel, about 1x.
    assert took < 4 * one, f"8 threads took {took:.3f} s, one call {one:.3f} s"


def test_acall_hundred_concurrent_calls_on_one_loop(hostile, echo):
    manager = ToolManager([hostile, echo])

    async def main():
        ticks = 0
        done = asyncio.Event()

        async def ticker():
            nonlocal ticks
            while not done.is_set():
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(ticker())
        started = time.perf_counter()
        answers = await asyncio.gather(*(manager.acall(sleep_call(i)) for i in range(100)))
        took = time.perf_counter() - started
        done.set()
        await ticking
        return answers, took, ticks

    answers, took, ticks = asyncio.run(main())
    assert answers == ["woke up"] * 100
    # One after another they would take 100 x 200 ms = 20 s.
    assert took < 10, took
    # The loop went on running other tasks while the calls ran.
    assert ticks >= 5, ticks


def test_acall_many_and_errors(echo):
    manager = ToolManager([echo])

    async def main():
        calls = [call("echo_echo", {"text": str(i)}, id=str(i)) for i in range(50)]
        messages = await manager.acall_many(calls)
        missing = await manager.acall(call("missing", {}))
        not_json = await manager.acall({"function": {"name": "echo_echo", "arguments": {"x": {1}}}})
        answered = await manager.acall_message({"role": "assistant", "tool_calls": calls[:2]})
        return messages, missing, not_json, answered

    messages, missing, not_json, answered = asyncio.run(main())
    assert [m["content"] for m in messages] == [str(i) for i in range(50)]
    assert [m["tool_call_id"] for m in messages] == [str(i) for i in range(50)]
    assert missing.startswith("Error: ") and not_json.startswith("Error: ")
    assert answered == messages[:2]


def test_acall_of_a_native_tool():
    class Add(Tool):
        def __call__(self, tool_name, arguments):
            return str(arguments["a"] + arguments["b"])

        def tool_info(self):
            return {"type": "function", "function": {"name": "add"}}

    manager = ToolManager([Add()])
    # Started outside any loop, as `asyncio.run(...)` code does.
    assert asyncio.run(manager.acall(call("add", {"a": 1, "b": 2}))) == "3"
    messages = asyncio.run(manager.acall_many([call("add", {"a": 2, "b": 2})]))
    assert messages == [{"role": "tool", "tool_call_id": "call_1", "content": "4"}]


def test_cancelling_acall_stops_the_call(hostile):
    manager = ToolManager([hostile])

    async def main():
        task = asyncio.ensure_future(manager.acall(call("hostile_sleep", {"ms": 5000})))
        await asyncio.sleep(0.1)
        task.cancel()
        started = time.perf_counter()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return time.perf_counter() - started

    assert asyncio.run(main()) < 2
    assert manager(call("hostile_add", {"a": 1, "b": 1})) == "2"


def test_call_many_runs_in_parallel(hostile):
    manager = ToolManager([hostile])
    calls = [sleep_call(i) for i in range(8)]
    took = timed(lambda: manager.call_many(calls))
    assert took < 8 * SLEEP_MS / 1000 / 2, took
