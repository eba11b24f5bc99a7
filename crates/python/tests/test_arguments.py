"""Arguments on their way in from Python: JSON text reaches the tool byte for
byte (the table shared with the command line and the MCP server's tests),
Python objects become exact JSON or a clear error (never a crash), and
Ctrl-C stops a blocking call."""

import math
import os
import subprocess
import sys
import textwrap

import pytest

import toolhost
from toolhost import ToolManager

from conftest import call


@pytest.fixture(scope="module")
def verbatim(verbatim_path):
    return toolhost.load_module(verbatim_path, name="v")


def test_arguments_text_reaches_the_tool_byte_for_byte(verbatim, arguments_table):
    manager = ToolManager([verbatim])
    assert len(arguments_table) >= 10
    for row in arguments_table:
        text, name = row["text"], row["name"]
        assert verbatim("v_verbatim", text) == text, name
        assert manager(call("v_verbatim", text)) == text, name
        [message] = manager.call_many([call("v_verbatim", text)])
        assert message["content"] == text, name
        [message] = manager.call_message({"role": "assistant", "tool_calls": [call("v_verbatim", text)]})
        assert message["content"] == text, name


def test_python_values_become_exact_json(verbatim):
    big = 12345678901234567890123
    answer = verbatim("v_verbatim", {"big": big, "neg": -big, "f": 1.1, "t": True, "n": None})
    assert answer == '{"big":12345678901234567890123,"neg":-12345678901234567890123,"f":1.1,"t":true,"n":null}'
    assert verbatim("v_verbatim", {"s": "\ud800 é", "tuple": (1, 2)}) == '{"s":"\\ud800 é","tuple":[1,2]}'
    manager = ToolManager([verbatim])
    tool_call = {"function": {"name": "v_verbatim", "arguments": {"big": big}}}
    assert manager(tool_call) == '{"big":12345678901234567890123}'
    [message] = manager.call_many([tool_call])
    assert message["content"] == '{"big":12345678901234567890123}'


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_not_turned_into_null(verbatim, bad):
    answer = verbatim("v_verbatim", {"x": [1, bad]})
    assert answer.startswith("Error: arguments are not JSON: at [\"x\"][1]: "), answer
    assert "JSON has no NaN or infinity" in answer
    manager = ToolManager([verbatim])
    tool_call = {"function": {"name": "v_verbatim", "arguments": {"x": bad}}}
    answer = manager(tool_call)
    assert answer.startswith("Error: the tool call is not JSON: ") and "NaN or infinity" in answer, answer
    with pytest.raises(ValueError, match="NaN or infinity"):
        manager.call_message({"role": "assistant", "tool_calls": [tool_call]})


def cyclic_dict():
    d = {"a": 1}
    d["self"] = d
    return d


def cyclic_list():
    items = [1]
    items.append({"back": items})
    return items


def deep(levels):
    value = {}
    for _ in range(levels):
        value = {"d": value}
    return value


class SelfDump:
    """A pydantic-like object whose model_dump() returns itself."""

    def model_dump(self):
        return self


class DumpsADictHoldingItself:
    def model_dump(self):
        d = {}
        d["me"] = d
        return d


@pytest.mark.parametrize(
    "arguments, problem",
    [
        (cyclic_dict(), "reference cycle"),
        (cyclic_list(), "reference cycle"),
        (deep(10_000), "nesting deeper than 512"),
        (SelfDump(), "reference cycle"),
        (DumpsADictHoldingItself(), "reference cycle"),
        ({1: "int key"}, "keys must be str"),
        ({"s": {1, 2}}, "a set is not JSON"),
    ],
)
def test_values_json_cannot_hold_are_errors_never_crashes(verbatim, arguments, problem):
    answer = verbatim("v_verbatim", arguments)
    assert answer.startswith("Error: arguments are not JSON: "), answer
    assert problem in answer, answer
    manager = ToolManager([verbatim])
    # As a call's arguments, and as the whole call.
    assert problem in manager({"function": {"name": "v_verbatim", "arguments": arguments}})
    assert problem in manager(arguments)
    [message] = manager.call_many([arguments])
    assert message["content"].startswith("Error: the tool call is not JSON: "), message
    assert problem in message["content"]
    with pytest.raises(ValueError, match=problem):
        manager.call_message(arguments)


def test_the_depth_bound_is_what_it_says(verbatim):
    # 512 nested dicts convert (the call's own dict is not counted here).
    assert verbatim("v_verbatim", deep(511)).startswith('{"d":{"d":')
    assert "nesting deeper than 512" in verbatim("v_verbatim", deep(512))


CTRL_C = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    import toolhost

    hostile = toolhost.load_module(sys.argv[1], name="hostile", limits={"timeout_ms": 30000, "fuel": 10**15})
    way = sys.argv[2]
    manager = toolhost.ToolManager([hostile])
    call = {"function": {"name": "hostile_spin", "arguments": "{}"}}
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    started = time.monotonic()
    try:
        if way == "module":
            hostile("hostile_spin", {})
        elif way == "manager":
            manager(call)
        elif way == "call_many":
            manager.call_many([call, call])
        else:
            manager.call_message({"role": "assistant", "tool_calls": [call]})
    except KeyboardInterrupt:
        print("interrupted after %.1f s" % (time.monotonic() - started))
        # The interpreter goes on: another call still works.
        print(hostile("hostile_add", {"a": 2, "b": 3}))
        sys.exit(0)
    print("not interrupted: the call ran %.1f s" % (time.monotonic() - started))
    sys.exit(1)
    """
)


@pytest.mark.parametrize("way", ["module", "manager", "call_many", "call_message"])
def test_ctrl_c_stops_a_blocking_call_and_raises_keyboard_interrupt(hostile_path, way):
    # A spin of 30 s at most; SIGINT comes after 0.5 s.
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C, str(hostile_path), way],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first, second = done.stdout.split("\n")[:2]
    seconds = float(first.split()[2])
    # Stopped at the signal, not at the end of the 30 s call.
    assert seconds < 15, first
    assert second == "5"
