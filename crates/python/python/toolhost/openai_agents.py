"""A ``ToolManager``'s tools as OpenAI Agents SDK function tools, called in
this process (no MCP server between the agent and the sandbox).

    from agents import Agent, Runner
    from toolhost import ToolManager
    from toolhost.openai_agents import function_tools

    manager = ToolManager.from_config("toolhost.toml")
    agent = Agent(name="assistant", tools=function_tools(manager))
    result = await Runner.run(agent, "What is 2 * (3 + 4)?")

Each tool is an ``agents.FunctionTool`` made from the tool's own JSON Schema
(``manager.tool_infos()``: the active tools, as the controller decides when
``function_tools`` is called). Its calls go through ``manager.acall``: the
same dispatch, argument checks, sandbox and limits as any other call, with
the SDK's tool call id, and every failure answered to the model as the
``Error: ...`` text (never raised into the agent's run). Pass ``session=`` to
run the calls in a ``toolhost.Session``, so that modules loaded with
``sessions=True`` keep their state through the agent's run.

Needs the ``openai-agents`` package (``pip install openai-agents``); toolhost
itself does not depend on it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, List, Optional, Union

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from agents import FunctionTool

    from ._native import Session, ToolManager

__all__ = ["function_tools"]


def function_tools(
    manager: "ToolManager",
    *,
    session: Optional["Session"] = None,
    strict: bool = False,
) -> List["FunctionTool"]:
    """The active tools of ``manager`` as ``agents.FunctionTool`` objects.

    - ``session``: run every call in this session (from ``manager.session()``)
      instead of a fresh call each.
    - ``strict``: ask the SDK for strict-mode schemas (every property
      required, no others allowed), which OpenAI models follow more closely.
      A tool whose schema cannot be made strict (open objects, for one) is
      given as it is. Off by default: strict mode makes every optional
      argument one the model must send.
    """
    try:
        from agents import FunctionTool
    except ImportError as e:  # pragma: no cover - depends on what is installed
        raise ImportError(
            "toolhost.openai_agents needs the OpenAI Agents SDK: pip install openai-agents"
        ) from e
    caller: Union["ToolManager", "Session"] = session if session is not None else manager
    tools: List[FunctionTool] = []
    for info in manager.tool_infos():
        function = info.get("function", {})
        name = function["name"]
        description = function.get("description") or ""
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        invoke = _invoker(caller, name)
        tool: Optional[FunctionTool] = None
        if strict:
            try:
                tool = FunctionTool(name, description, _copy(parameters), invoke, strict_json_schema=True)
            except Exception:  # noqa: BLE001 - the SDK's refusal of a schema it cannot make strict
                tool = None
        if tool is None:
            tool = FunctionTool(name, description, _copy(parameters), invoke, strict_json_schema=False)
        tools.append(tool)
    return tools


def _copy(schema: Any) -> Any:
    """A deep copy of a JSON value (the SDK changes the schemas it is given)."""
    return json.loads(json.dumps(schema))


def _invoker(caller: Any, name: str) -> Any:
    """The SDK's ``on_invoke_tool`` for tool ``name``: the call as an OpenAI
    tool call, its answer (a result or an ``Error: ...`` text) as the tool's
    output."""

    async def invoke(context: Any, arguments: str) -> str:
        call_id = getattr(context, "tool_call_id", None) or f"call_{name}"
        answer: str = await caller.acall(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments or "{}"}}
        )
        return answer

    return invoke
