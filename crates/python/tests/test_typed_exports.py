"""A component written for another host, from Python: each exported function
is a tool with a schema from its WIT types, and arguments are checked before
the component runs."""

import asyncio

import toolhost
from toolhost import ToolManager

from conftest import call


def test_plain_exports_are_tools(plain_path):
    plain = toolhost.load_module(plain_path, name="plain")
    assert "plain_echo" in plain.tools
    assert "plain_text_reverse" in plain.tools
    infos = {i["function"]["name"]: i["function"] for i in plain.tool_infos()}
    params = infos["plain_scalars"]["parameters"]
    assert params["properties"]["u64v"] == {"type": "integer", "minimum": 0, "maximum": 2**64 - 1}
    assert "outputSchema" not in infos["plain_echo"]  # OpenAI's shape: no MCP-only keys


def test_calls_checked_and_converted(plain_path):
    manager = ToolManager([toolhost.load_module(plain_path, name="plain")])
    assert manager(call("plain_echo", {"text": "from python"})) == "from python"
    assert manager(call("plain_text_reverse", {"s": "abc"})) == "cba"
    assert manager(call("plain_next-color", {"c": "red"})) == '"green"'
    assert manager(call("plain_echo", {"text": 5})) == (
        "Error: tool 'plain_echo' was given invalid arguments: "
        "field 'text': expected a string, got integer 5"
    )
    assert manager(call("plain_fallible", {"ok": False, "text": "no"})) == (
        "Error: tool 'plain_fallible' failed: no"
    )
    big = 2**64 - 1
    answer = manager(call("plain_scalars", {
        "b": False, "i8v": 0, "u8v": 0, "i16v": 0, "u16v": 0, "i32v": 0, "u32v": 0,
        "i64v": -(2**63), "u64v": big, "f32v": 1.5, "f64v": "Infinity", "c": "x", "s": "",
    }))
    assert f'"u64v":{big}' in answer
    assert '"f64v":"Infinity"' in answer
    assert asyncio.run(manager.acall(call("plain_echo", {"text": "async"}))) == "async"
