"""ToolManager, WasmModule and ToolController pickle: rebuilt on the other
side from the component's bytes or the config, with their limits, grants
and rules, and the same answers; compiled code is never shipped."""

import multiprocessing
import pickle
import shutil

import pytest

import toolhost


def call(name, arguments):
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}


class Upper(toolhost.Tool):
    """A native tool (pickled as any Python object)."""

    def __call__(self, tool_name, arguments):
        return arguments["text"].upper()

    def tool_info(self):
        return {"type": "function", "function": {"name": "upper", "description": "Upper-cases text.",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}


def test_a_module_is_rebuilt_from_its_bytes_and_arguments(hostile_path, tmp_path):
    path = tmp_path / "hostile.wasm"
    shutil.copy(hostile_path, path)
    module = toolhost.load_module(path, name="h", limits={"fuel": 40_000_000, "memory_mib": 16}, warm=True, max_calls=7)
    data = pickle.dumps(module)
    # The component's bytes and the arguments, not the compiled code.
    assert path.stat().st_size < len(data) < path.stat().st_size + 4096
    again = pickle.loads(data)
    assert (again.name, again.tools, again.warm, again.sessions) == (module.name, module.tools, True, False)
    assert again.limits == module.limits
    assert dict(again.limits)["fuel"] == 40_000_000
    assert again.tool_infos() == module.tool_infos()
    assert again("h_spin").startswith("Error: tool 'h_spin' ran out of fuel (limit 40000000"), again("h_spin")
    # A changed file is not shipped in its place.
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(toolhost.LoadError, match="changed since it was loaded"):
        pickle.dumps(module)
    path.unlink()
    with pytest.raises(toolhost.LoadError, match="cannot read its component"):
        pickle.dumps(module)
    # The rebuilt module kept its bytes.
    assert pickle.loads(pickle.dumps(again)).tools == module.tools


def test_a_module_from_bytes_keeps_its_grants(echo_path, tmp_path):
    module = toolhost.load_module(echo_path.read_bytes(), grants={"env": {"GREETING": "hi"}}, sessions=True)
    again = pickle.loads(pickle.dumps(module))
    assert (again.name, again.sessions) == ("module", True)
    assert again("module_echo", {"text": "x"}) == module("module_echo", {"text": "x"}) == "x"


def test_a_controller_keeps_its_rules(tmp_path):
    controller = toolhost.ToolController("deactivate", [{"mode": "activate", "pattern": "calc_*"}])
    controller.deactivate_tool("calc_secret")
    again = pickle.loads(pickle.dumps(controller))
    assert again.default_mode == "deactivate"
    assert [(r.mode, r.pattern) for r in again.rules] == [(r.mode, r.pattern) for r in controller.rules]
    assert again.check_tool_status("calc_evaluate") and not again.check_tool_status("calc_secret")
    assert not again.check_tool_status("other")


def test_a_manager_is_rebuilt_from_its_tools(calc_path, hostile_path):
    controller = toolhost.ToolController(rules=[{"mode": "deactivate", "pattern": "h_spin"}])
    manager = toolhost.ToolManager(tool_controller=controller)
    manager.register(toolhost.load_module(calc_path, name="calc"))
    manager.register(Upper())
    manager.register(toolhost.load_module(hostile_path, name="h", limits={"memory_mib": 16}))
    manager.unregister("h_panic")
    again = pickle.loads(pickle.dumps(manager))
    assert again.names() == manager.names()
    assert "h_panic" not in again.names()
    assert again.tool_infos() == manager.tool_infos()
    for tool_call in [
        call("calc_evaluate", '{"expression": "2 * (3 + 4)"}'),
        call("upper", '{"text": "abc"}'),
        call("h_membomb", "{}"),
        call("h_spin", "{}"),
        call("calc_evaluate", '{"expression": "1/0"}'),
    ]:
        assert again(tool_call) == manager(tool_call), tool_call
    assert again(call("h_spin", "{}")).startswith("Error:")
    # The rebuilt manager shares its own rebuilt controller.
    again.tool_controller.deactivate_tool("upper")
    assert "upper" not in [i["function"]["name"] for i in again.tool_infos()]
    assert "upper" in [i["function"]["name"] for i in manager.tool_infos()]


def test_a_manager_from_a_config_is_rebuilt_from_the_config(calc_and_hostile_config):
    config = calc_and_hostile_config
    manager = toolhost.ToolManager.from_config(config)
    manager.tool_controller.deactivate_tool("h_sleep")
    data = pickle.dumps(manager)
    assert len(data) < 4096, "the config's path and text, not its modules"
    again = pickle.loads(data)
    assert again.names() == manager.names()
    assert again.tool_infos() == manager.tool_infos()
    assert "h_sleep" not in [i["function"]["name"] for i in again.tool_infos()]
    assert again(call("h_membomb", "{}")) == manager(call("h_membomb", "{}"))
    # A module of the config pickles on its own too, with the limits the
    # config gave it ([limits] and its own), and so does the manager once
    # changed (from its tools, no longer from the config).
    hostile = manager.unregister("h_membomb")
    alone = pickle.loads(pickle.dumps(hostile))
    assert (alone.name, alone.tools, alone.limits) == (hostile.name, hostile.tools, hostile.limits)
    assert dict(alone.limits)["fuel"] == 50_000_000
    assert alone("h_membomb") == hostile("h_membomb")
    changed = pickle.loads(pickle.dumps(manager))
    assert changed.names() == manager.names() and "h_membomb" not in changed.names()
    assert changed(call("calc_evaluate", '{"expression": "6*7"}')) == "42"
    config.write_text(config.read_text() + "\n# edited\n")
    with pytest.raises(toolhost.ConfigError, match="is not the one it was made from"):
        pickle.loads(data)
    config.unlink()
    with pytest.raises(toolhost.ConfigError, match="cannot be read here"):
        pickle.loads(data)


def _answer_in_child(manager, tool_call, queue):
    queue.put(manager(tool_call))


def test_a_manager_crosses_into_another_process(calc_path, hostile_path):
    manager = toolhost.ToolManager([toolhost.load_module(calc_path, name="calc")])
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_answer_in_child, args=(manager, call("calc_evaluate", '{"expression": "6*7"}'), queue))
    child.start()
    try:
        assert queue.get(timeout=120) == "42"
    finally:
        child.join(timeout=60)
    assert child.exitcode == 0
