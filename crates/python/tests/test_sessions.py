"""Sessions: `manager.session()` runs its calls in modules loaded with
`sessions=True` in an instance of its own, kept from call to call; other
sessions and calls without one never see its state."""

import asyncio
import threading

import pytest

import toolhost
from conftest import HOSTILE_LIMITS, call


@pytest.fixture(scope="module")
def counting(hostile_path):
    module = toolhost.load_module(hostile_path, name="h", limits=HOSTILE_LIMITS, sessions=True)
    assert module.sessions is True
    return toolhost.ToolManager([module])


COUNTER = call("h_counter", {})


def test_a_session_keeps_its_state_until_closed(counting):
    with counting.session() as a:
        assert [a(COUNTER) for _ in range(3)] == ["1 1", "2 2", "3 3"]
        b = counting.session()
        assert b(COUNTER) == "1 1", "another session has its own instance"
        b.close()
        assert counting(COUNTER) == "1 1", "a call without a session is fresh"
        assert a(COUNTER) == "4 4"
        assert a.call_many([COUNTER, COUNTER])[1]["content"] in ("5 5", "6 6")
        message = {"role": "assistant", "tool_calls": [COUNTER]}
        assert a.call_message(message)[0]["content"] == "7 7"
        assert isinstance(a.id, str) and a.id
        assert repr(a).startswith("Session(id=")
    assert a.closed
    with pytest.raises(RuntimeError, match="this session is closed"):
        a(COUNTER)


def test_async_sessions(counting):
    async def main():
        async with counting.session() as s:
            first = await s.acall(COUNTER)
            second = await s.acall(COUNTER)
            many = await s.acall_many([COUNTER])
            message = await s.acall_message({"role": "assistant", "tool_calls": [COUNTER]})
            return first, second, many[0]["content"], message[0]["content"]

    assert asyncio.run(main()) == ("1 1", "2 2", "3 3", "4 4")


def test_concurrent_sessions_never_see_each_other(counting):
    wrong = []

    def worker(t):
        with counting.session() as s:
            for n in range(1, 21):
                answer = s(COUNTER)
                if answer != f"{n} {n}":
                    wrong.append((t, n, answer))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_a_fault_resets_the_session_and_says_so(counting):
    with counting.session() as s:
        assert s(COUNTER) == "1 1"
        answer = s(call("h_membomb", {}))
        assert answer.startswith("Error: ") and "state was dropped" in answer
        assert s(COUNTER) == "1 1"


def test_a_reset_session_is_told_however_many_sessions_came_after(hostile_path, tmp_path):
    config = tmp_path / "toolhost.toml"
    config.write_text(
        "[sessions]\nmax = 4\n\n"
        f"[[modules]]\nname = \"h\"\npath = {str(hostile_path)!r}\nsessions = true\n"
    )
    manager = toolhost.ToolManager.from_config(str(config))
    waiting = manager.session()
    assert waiting(COUNTER) == "1 1"
    newer = [manager.session() for _ in range(40)]
    assert [s(COUNTER) for s in newer] == ["1 1"] * 40
    told = waiting(COUNTER)
    assert told.startswith("Error: tool 'h_counter' was not run: this session's state was reset")
    assert "at most 4 session instances" in told
    assert waiting(COUNTER) == "1 1", "then it starts afresh"
    with manager.session() as new:
        assert new(COUNTER) == "1 1"
    for s in [waiting, *newer]:
        s.close()


def test_python_exec_sessions(python_exec_path):
    module = toolhost.load_module(
        python_exec_path, sessions=True, grants={"scratch": True}, limits={"timeout_ms": 5000}
    )
    manager = toolhost.ToolManager([module])

    def run(target, code):
        return target(call("python-exec_run_python", {"code": code}))

    with manager.session() as s:
        assert run(s, "x = 41") == "(no output)"
        assert run(s, "print(x + 1)") == "42\n"
        assert "NameError" in run(manager, "x")
    with manager.session() as fresh:
        assert "NameError" in run(fresh, "x")
