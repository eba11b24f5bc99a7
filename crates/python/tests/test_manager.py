"""ToolManager as the frameworks' users rely on it, with native and WASM tools."""

import copy
import json

import pytest

import toolhost
from toolhost import Tool, ToolController, ToolManager

from conftest import call


class Echo(Tool):
    def __init__(self, name="py_echo"):
        self.name = name
        self.seen = []

    def __call__(self, tool_name, arguments):
        self.seen.append((tool_name, arguments))
        return arguments.get("text", "")

    def tool_info(self):
        return {"type": "function", "function": {
            "name": self.name, "description": "Returns its text.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}


class Broken(Tool):
    def __call__(self, tool_name, arguments):
        raise RuntimeError("the database is down")

    def tool_info(self):
        return {"function": {"name": "broken"}}  # no "type": allowed


def test_mixing_native_and_wasm_tools(echo, calc):
    native = Echo()
    manager = ToolManager([native, echo, calc])
    assert manager.names() == ["py_echo", "echo_echo", "calc_evaluate"]
    assert manager(call("py_echo", {"text": "native"})) == "native"
    assert manager(call("echo_echo", {"text": "sandboxed"})) == "sandboxed"
    assert manager(call("calc_evaluate", {"expression": "6 * 7"})) == "42"
    infos = manager.tool_infos()
    assert [i["function"]["name"] for i in infos] == ["py_echo", "echo_echo", "calc_evaluate"]
    assert infos[0] == native.tool_info()
    assert infos[1] == echo.tool_infos()[0]


def test_module_properties(echo):
    assert echo.name == "echo"
    assert echo.tools == ["echo_echo"]
    assert echo.warm is False
    info = echo.tool_infos()[0]
    assert info["type"] == "function"
    assert info["function"]["parameters"]["properties"]["text"]["type"] == "string"
    assert echo("echo_echo", {"text": "direct"}) == "direct"
    assert dict(echo.limits)["timeout_ms"] > 0
    assert "echo_echo" in repr(echo)


def test_load_from_bytes_and_pathlike(echo_path):
    from_bytes = toolhost.load_module(echo_path.read_bytes(), name="bytes")
    assert from_bytes.tools == ["bytes_echo"]
    assert toolhost.load_module(bytearray(echo_path.read_bytes()), name="ba").tools == ["ba_echo"]
    # Named from the file as the config does: lowercase, `_` becomes `-`.
    assert toolhost.load_module(echo_path).name == "guest-echo"
    assert toolhost.load_module(echo_path).tools == ["guest-echo_echo"]
    assert toolhost.load_module(str(echo_path), name="s").tools == ["s_echo"]


def test_dict_keys_are_names_verbatim():
    native = Echo("declared")
    manager = ToolManager({"my-key": native})
    assert manager.names() == ["my-key"]
    assert manager(call("my-key", {"text": "hi"})) == "hi"
    assert native.seen == [("my-key", {"text": "hi"})]
    assert manager(call("declared", {})).startswith("Error: ")


def test_constructor_type_errors():
    for bad in (42, "search", Echo(), 3.5):
        with pytest.raises(TypeError, match=r"ToolManager expects dict \| Iterable\[Tool\] \| None"):
            ToolManager(bad)
    with pytest.raises(TypeError):
        ToolManager([object()])
    with pytest.raises(TypeError):
        ToolManager([], tool_controller="not a controller")


def test_empty_function_name_is_a_value_error():
    class Nameless(Echo):
        def tool_info(self):
            return {"type": "function", "function": {"name": ""}}

    class NoFunction(Echo):
        def tool_info(self):
            return {"type": "function"}

    for tool in (Nameless(), NoFunction()):
        with pytest.raises(ValueError, match="non-empty"):
            ToolManager([tool])
        with pytest.raises(ValueError, match="non-empty"):
            ToolManager().register(tool)


def test_duplicates_raise_and_register_nothing(echo):
    manager = ToolManager([Echo()])
    with pytest.raises(ValueError, match="already registered"):
        manager.register(Echo())
    with pytest.raises(ValueError, match="already registered"):
        ToolManager([echo, echo])
    assert manager.names() == ["py_echo"]


def test_unregister_returns_the_same_object(echo):
    native = Echo()
    manager = ToolManager([native, echo])
    assert manager.unregister("py_echo") is native
    assert manager.unregister("py_echo") is None
    assert manager.unregister("echo_echo") is echo
    assert manager.names() == []
    assert manager(call("py_echo", {})).startswith("Error: ")


def test_insertion_order_is_kept():
    tools = [Echo(f"t{i}") for i in (5, 1, 4, 2, 3)]
    manager = ToolManager()
    for tool in tools:
        manager.register(tool)
    assert manager.names() == ["t5", "t1", "t4", "t2", "t3"]
    assert [i["function"]["name"] for i in manager.tool_infos()] == manager.names()
    manager.unregister("t4")
    manager.register(Echo("t4"))
    assert manager.names() == ["t5", "t1", "t2", "t3", "t4"]


def test_call_shapes():
    manager = ToolManager([Echo()])
    fn = {"name": "py_echo"}
    assert manager({"function": {**fn, "arguments": '{"text": "no id or type"}'}}) == "no id or type"
    assert manager({"function": {**fn, "arguments": {"text": "dict"}}}) == "dict"
    for empty in (None, "", "   "):
        assert manager({"function": {**fn, "arguments": empty}}) == ""
    assert manager({"function": fn}) == ""


def test_dispatch_never_raises():
    manager = ToolManager([Echo(), Broken()])
    answers = [
        manager(call("missing", {})),
        manager(call("py_echo", "{not json")),
        manager(call("py_echo", "[1, 2]")),
        manager(call("broken", {})),
        manager({"function": {}}),
        manager("not a call"),
        manager(42),
        manager({"function": {"name": "py_echo", "arguments": {"bad": object()}}}),
        manager(None),
    ]
    for answer in answers:
        assert isinstance(answer, str) and answer.startswith("Error: "), answer
    assert "missing" in answers[0]
    assert "RuntimeError: the database is down" in answers[3]


def test_python_tool_errors_name_the_exception():
    class Picky(Echo):
        def __call__(self, tool_name, arguments):
            raise KeyError("query")

    manager = ToolManager([Picky()])
    answer = manager(call("py_echo", {}))
    assert answer.startswith("Error: ") and "KeyError" in answer and "query" in answer


def test_non_str_results_are_made_text():
    class Number(Echo):
        def __call__(self, tool_name, arguments):
            return 7

    assert ToolManager([Number()])(call("py_echo", {})) == "7"


def test_copy_is_shallow(echo):
    native = Echo()
    controller = ToolController()
    manager = ToolManager([native], tool_controller=controller)
    duplicate = manager.copy()
    also = copy.copy(manager)
    duplicate.register(echo)
    assert manager.names() == ["py_echo"]
    assert duplicate.names() == ["py_echo", "echo_echo"]
    assert also.names() == ["py_echo"]
    assert duplicate.unregister("py_echo") is native
    assert manager.names() == ["py_echo"]
    # The controller is the same object, in both.
    assert duplicate.tool_controller is controller
    controller.deactivate_tool("py_echo")
    assert manager(call("py_echo", {})).startswith("Error: ")
    assert also(call("py_echo", {})).startswith("Error: ")


def test_controller_is_shared_with_the_manager(echo):
    controller = ToolController(default_mode="deactivate")
    manager = ToolManager(tools=[Echo(), echo], tool_controller=controller)
    assert manager.tool_infos() == []
    assert manager(call("echo_echo", {"text": "x"})).startswith("Error: ")
    controller.activate_tool("echo_*")
    assert [i["function"]["name"] for i in manager.tool_infos()] == ["echo_echo"]
    assert manager(call("echo_echo", {"text": "x"})) == "x"
    controller.deactivate_tool("echo_echo")
    assert manager(call("echo_echo", {"text": "x"})).startswith("Error: ")
    manager.tool_controller = None
    assert manager(call("echo_echo", {"text": "x"})) == "x"


def test_call_many_and_call_message(echo):
    manager = ToolManager([Echo(), echo])
    calls = [call("echo_echo", {"text": str(i)}, id=f"c{i}") for i in range(20)]
    calls.append(call("missing", {}, id="bad"))
    messages = manager.call_many(calls)
    assert [m["tool_call_id"] for m in messages] == [f"c{i}" for i in range(20)] + ["bad"]
    assert [m["content"] for m in messages[:20]] == [str(i) for i in range(20)]
    assert all(m["role"] == "tool" for m in messages)
    assert messages[20]["content"].startswith("Error: ")
    answered = manager.call_message({"role": "assistant", "tool_calls": calls[:3]})
    assert answered == messages[:3]
    assert manager.call_message({"role": "assistant", "tool_calls": None}) == []
    with pytest.raises(ValueError):
        manager.call_message({"role": "assistant", "content": "no calls"})


def test_len_contains_repr(echo):
    manager = ToolManager([echo])
    assert len(manager) == 1 and "echo_echo" in manager and "x" not in manager
    assert "echo_echo" in repr(manager)


def test_from_config(tmp_path, echo_path, hostile_path):
    config = tmp_path / "toolhost.toml"
    config.write_text(
        f"""
[controller]
default_mode = "activate"
rules = [{{ mode = "deactivate", pattern = "hostile_*" }}]

[[modules]]
path = {json.dumps(str(echo_path))}
name = "echo"

[[modules]]
path = {json.dumps(str(hostile_path))}
name = "hostile"
limits = {{ timeout_ms = 200 }}
"""
    )
    manager = ToolManager.from_config(str(config))
    assert "echo_echo" in manager.names() and "hostile_spin" in manager.names()
    assert [i["function"]["name"] for i in manager.tool_infos()] == ["echo_echo"]
    assert manager(call("echo_echo", {"text": "configured"})) == "configured"
    manager.tool_controller.activate_tool("hostile_add")
    assert manager(call("hostile_add", {"a": 2, "b": 3})) == "5"
    assert isinstance(manager.unregister("echo_echo"), toolhost.WasmModule)


def test_from_config_errors(tmp_path):
    with pytest.raises(toolhost.ConfigError, match="cannot read config"):
        ToolManager.from_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[limits]\nfuell = 3\n")
    with pytest.raises(toolhost.ConfigError, match="fuell"):
        ToolManager.from_config(bad)
    broken = tmp_path / "broken.toml"
    (tmp_path / "junk.wasm").write_bytes(b"not wasm")
    broken.write_text('[[modules]]\npath = "junk.wasm"\n')
    with pytest.raises(toolhost.ConfigError, match="junk"):
        ToolManager.from_config(broken)
    assert issubclass(toolhost.ConfigError, ValueError)
    assert issubclass(toolhost.ConfigError, toolhost.ToolhostError)


def test_load_errors(tmp_path, echo_path):
    with pytest.raises(toolhost.LoadError):
        toolhost.load_module(tmp_path / "missing.wasm")
    with pytest.raises(toolhost.LoadError):
        toolhost.load_module(b"\0asm garbage", name="junk")
    with pytest.raises(toolhost.LoadError, match="fuell"):
        toolhost.load_module(echo_path, limits={"fuell": 1})
    with pytest.raises(toolhost.LoadError, match="invalid `grants`: unknown field `everything`"):
        toolhost.load_module(echo_path, grants={"everything": True})
    with pytest.raises(toolhost.LoadError, match="invalid `limits`"):
        toolhost.load_module(echo_path, limits={"timeout_ms": "soon"})
    with pytest.raises(toolhost.LoadError, match="batch"):
        toolhost.load_module(echo_path, limits={"batch_timeout_ms": 5})
    with pytest.raises(toolhost.LoadError, match="memory_mib"):
        toolhost.load_module(echo_path, limits={"memory_mib": 1 << 20})
    with pytest.raises(toolhost.LoadError, match="max_calls"):
        toolhost.load_module(echo_path, max_calls=3)
    with pytest.raises(toolhost.LoadError):
        toolhost.load_module(echo_path, name="bad name")
    with pytest.raises(TypeError):
        toolhost.load_module(42)
