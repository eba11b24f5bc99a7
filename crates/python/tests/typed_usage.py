"""Checked by mypy in test_typing.py: the package's stubs cover its API."""

import asyncio
from typing import Any, Dict, List, Optional

import toolhost
from toolhost import Tool, ToolController, ToolManager


class Search(Tool):
    def __call__(self, tool_name: str, arguments: Dict[str, Any]) -> str:
        return str(arguments.get("query", ""))

    def tool_info(self) -> Dict[str, Any]:
        return {"type": "function", "function": {"name": "search"}}


def build(path: str) -> ToolManager:
    module: toolhost.WasmModule = toolhost.load_module(path, name="echo", limits={"timeout_ms": 100})
    names: List[str] = module.tools
    controller = ToolController(default_mode="deactivate", rules=[{"mode": "activate", "pattern": "echo_*"}])
    active: bool = controller.check_tool_status(names[0])
    manager = ToolManager([Search(), module], tool_controller=controller)
    result: str = manager({"function": {"name": "search", "arguments": "{}"}})
    removed: Optional[Any] = manager.unregister("search")
    messages: List[Dict[str, Any]] = manager.call_many([])
    pattern: str = controller.rules[0].pattern
    print(active, result, removed, messages, pattern)
    return manager.copy()


async def later(manager: ToolManager) -> str:
    return await manager.acall({"function": {"name": "search"}})


def run(manager: ToolManager) -> str:
    return asyncio.run(later(manager))
