"""Runs one agent, built with one agent framework, against `toolhost serve`
and a scripted model; `frameworks.rs` runs it and checks what it wrote.

    python agent.py PLAN.json

PLAN: {"framework": "openai-agents" | "langchain" | "pydantic-ai",
       "transport": "stdio" | "http",
       "command": [...] (stdio) | "url": ..., "token": ... (http),
       "turns": [...] (the scripted model's turns, see scripted_model.py),
       "task": "...", "out": "record.json"}

Writes to `out`: {"requests": the requests the model got, in order,
"final": the agent's final answer}. The agent is built the way each
framework documents it, with its own MCP client and its own validation of
the tools' names and schemas; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "testkit" / "python"))

from scripted_model import ScriptedModel  # noqa: E402

INSTRUCTIONS = "Answer with the tools; give the final answer in one sentence."
# Seconds a framework waits for the server (the first call of a module may compile it).
TIMEOUT_S = 120.0


async def openai_agents(plan: dict[str, Any], model: ScriptedModel) -> str:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
    from openai import AsyncOpenAI

    # The SDK's traces go to OpenAI's servers unless turned off.
    set_tracing_disabled(True)
    if plan["transport"] == "stdio":
        command = plan["command"]
        server: Any = MCPServerStdio(
            params={"command": command[0], "args": command[1:]},
            client_session_timeout_seconds=TIMEOUT_S,
        )
    else:
        server = MCPServerStreamableHttp(
            params={"url": plan["url"], "headers": {"Authorization": f"Bearer {plan['token']}"}, "timeout": TIMEOUT_S},
            client_session_timeout_seconds=TIMEOUT_S,
        )
    client = AsyncOpenAI(base_url=model.url, api_key="scripted", max_retries=0)
    async with server:
        agent = Agent(
            name="toolhost agent",
            instructions=INSTRUCTIONS,
            model=OpenAIChatCompletionsModel(model="scripted", openai_client=client),
            mcp_servers=[server],
            # The SDK's strict mode: each schema made strict where it can be.
            mcp_config={"convert_schemas_to_strict": True},
        )
        result = await Runner.run(agent, plan["task"], max_turns=10)
    return str(result.final_output)


async def langchain(plan: dict[str, Any], model: ScriptedModel) -> str:
    from langchain.agents import create_agent
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langchain_mcp_adapters.tools import load_mcp_tools
    from langchain_openai import ChatOpenAI

    if plan["transport"] == "stdio":
        command = plan["command"]
        connection: dict[str, Any] = {"transport": "stdio", "command": command[0], "args": command[1:]}
    else:
        connection = {
            "transport": "streamable_http",
            "url": plan["url"],
            "headers": {"Authorization": f"Bearer {plan['token']}"},
            "timeout": TIMEOUT_S,
        }
    client = MultiServerMCPClient({"toolhost": connection})
    # One session for the whole run (without it, each call opens its own).
    async with client.session("toolhost") as session:
        tools = await load_mcp_tools(session)
        llm = ChatOpenAI(model="scripted", base_url=model.url, api_key="scripted", max_retries=0)
        agent = create_agent(llm, tools, system_prompt=INSTRUCTIONS)
        result = await agent.ainvoke({"messages": [{"role": "user", "content": plan["task"]}]})
    return str(result["messages"][-1].content)


async def pydantic_ai(plan: dict[str, Any], model: ScriptedModel) -> str:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    if plan["transport"] == "stdio":
        command = plan["command"]
        toolset = MCPToolset(StdioTransport(command[0], command[1:]), read_timeout=TIMEOUT_S)
    else:
        toolset = MCPToolset(
            plan["url"], headers={"Authorization": f"Bearer {plan['token']}"}, read_timeout=TIMEOUT_S
        )
    chat = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=model.url, api_key="scripted"))
    agent = Agent(chat, toolsets=[toolset], instructions=INSTRUCTIONS)
    async with agent:
        result = await agent.run(plan["task"])
    return str(result.output)


FRAMEWORKS = {"openai-agents": openai_agents, "langchain": langchain, "pydantic-ai": pydantic_ai}


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text())
    run = FRAMEWORKS[plan["framework"]]
    with ScriptedModel(plan["turns"]) as model:
        try:
            final = asyncio.run(run(plan, model))
        finally:
            # What the model got is written even when the run failed: the
            # test shows it.
            record = {"requests": model.requests}
            Path(plan["out"]).write_text(json.dumps(record))
    record["final"] = final
    Path(plan["out"]).write_text(json.dumps(record))
    print("agent finished:", final)


if __name__ == "__main__":
    main()
