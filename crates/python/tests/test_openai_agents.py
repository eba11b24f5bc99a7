"""toolhost.openai_agents: a ToolManager's tools handed to the OpenAI Agents
SDK in-process, run by `Runner.run` against a scripted OpenAI-compatible
model (crates/testkit/python/scripted_model.py) whose recorded requests
show what the model was offered and answered."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "testkit" / "python"))

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from scripted_model import ScriptedModel  # noqa: E402

import toolhost  # noqa: E402
from toolhost.openai_agents import function_tools  # noqa: E402

set_tracing_disabled(True)


def manager_of(calc_path, hostile_path, python_exec_path=None):
    manager = toolhost.ToolManager(
        tool_controller=toolhost.ToolController(rules=[{"mode": "deactivate", "pattern": "h_spin"}])
    )
    manager.register(toolhost.load_module(calc_path, name="calc"))
    manager.register(toolhost.load_module(hostile_path, name="h", limits={"fuel": 50_000_000, "memory_mib": 16}))
    if python_exec_path is not None:
        manager.register(toolhost.load_module(python_exec_path, name="py", sessions=True))
    return manager


def run(agent, task, turns):
    with ScriptedModel(turns) as model:
        client = AsyncOpenAI(base_url=model.url, api_key="scripted", max_retries=0)
        agent.model = OpenAIChatCompletionsModel(model="scripted", openai_client=client)
        result = asyncio.run(Runner.run(agent, task, max_turns=10))
    return result, model.requests


def tool_answer(request, call_id):
    for message in request["messages"]:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            content = message["content"]
            return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
    raise AssertionError(f"no answer to {call_id} in {json.dumps(request['messages'], indent=1)}")


def test_function_tools_follow_the_manager_and_its_controller(calc_path, hostile_path):
    manager = manager_of(calc_path, hostile_path)
    tools = function_tools(manager)
    names = [t.name for t in tools]
    assert names == [i["function"]["name"] for i in manager.tool_infos()]
    assert "calc_evaluate" in names and "h_spin" not in names, names
    calc = tools[names.index("calc_evaluate")]
    assert calc.params_json_schema == manager.tool_infos()[names.index("calc_evaluate")]["function"]["parameters"]
    assert calc.strict_json_schema is False
    strict = {t.name: t for t in function_tools(manager, strict=True)}
    assert strict["calc_evaluate"].strict_json_schema is True
    assert strict["calc_evaluate"].params_json_schema["additionalProperties"] is False
    assert [t.name for t in strict.values()] == names, "a schema that cannot be strict is given as it is"


def test_an_agent_runs_the_sandboxed_tools_in_process(calc_path, hostile_path):
    manager = manager_of(calc_path, hostile_path)
    agent = Agent(name="toolhost", instructions="Use the tools.", tools=function_tools(manager, strict=True))
    final = "14, and the membomb ran out of memory."
    result, requests = run(agent, "What is 2 * (3 + 4)? Then try the membomb.", [
        {"tool_calls": [{"name": "calc_evaluate", "arguments": {"expression": "2 * (3 + 4)"}}]},
        {"tool_calls": [
            {"name": "h_membomb", "arguments": {}},
            {"name": "calc_evaluate", "arguments": {"expression": "1/0"}},
        ]},
        {"content": final},
    ])
    assert result.final_output == final
    assert len(requests) == 3
    offered = [t["function"]["name"] for t in requests[0]["tools"]]
    assert "calc_evaluate" in offered and "h_spin" not in offered, offered
    assert tool_answer(requests[1], "call_0_0") == "14"
    bomb = tool_answer(requests[2], "call_1_0")
    assert bomb.startswith("Error: ") and "memory" in bomb, bomb
    assert tool_answer(requests[2], "call_1_1") == "Error: tool 'calc_evaluate' failed: division by zero at position 2"
    assert all("h_spin" not in [t["function"]["name"] for t in r["tools"]] for r in requests)
    # The manager goes on serving after the sandbox's faults.
    assert manager({"id": "c", "type": "function", "function": {"name": "calc_evaluate", "arguments": '{"expression": "1+1"}'}}) == "2"


def test_a_session_keeps_state_through_the_agents_run(calc_path, hostile_path, python_exec_path):
    manager = manager_of(calc_path, hostile_path, python_exec_path)
    with manager.session() as session:
        agent = Agent(name="coder", instructions="Run code.", tools=function_tools(manager, session=session))
        result, requests = run(agent, "Keep x.", [
            {"tool_calls": [{"name": "py_run_python", "arguments": {"code": "x = 41"}}]},
            {"tool_calls": [{"name": "py_run_python", "arguments": {"code": "print(x + 1)"}}]},
            {"content": "42"},
        ])
    assert result.final_output == "42"
    assert tool_answer(requests[2], "call_1_0") == "42\n"
    # Without the session each call is fresh.
    fresh = Agent(name="coder", instructions="Run code.", tools=function_tools(manager))
    _, requests = run(fresh, "Forget x.", [
        {"tool_calls": [{"name": "py_run_python", "arguments": {"code": "x = 41"}}]},
        {"tool_calls": [{"name": "py_run_python", "arguments": {"code": "print(x + 1)"}}]},
        {"content": "gone"},
    ])
    assert "NameError: name 'x' is not defined" in tool_answer(requests[2], "call_1_0")


def test_without_the_sdk_the_error_says_what_to_install(monkeypatch, calc_path, hostile_path):
    monkeypatch.setitem(sys.modules, "agents", None)
    with pytest.raises(ImportError, match="pip install openai-agents"):
        function_tools(manager_of(calc_path, hostile_path))
