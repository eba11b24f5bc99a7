"""toolhost: OpenAI tool-call dispatch for Python agents, with tools that run
sandboxed as WebAssembly components.

``ToolManager`` and ``ToolController`` follow the API agent frameworks
already use; a tool is either a native Python ``Tool`` (run in this process,
unsandboxed) or a ``WasmModule`` loaded with ``load_module`` (every call in a
fresh sandbox, under fuel, time and memory limits, with no files, network or
environment unless granted).
"""

import os
from abc import ABC, abstractmethod
from typing import Any, Dict

# Ray installs a crash handler for SIGSEGV and SIGILL when a driver or a
# worker starts (absl's failure signal handler). In a process where toolhost
# has already run a tool, that handler takes the signals wasmtime catches a
# tool's traps with, and a trapping tool kills the process. Unless the user
# says otherwise, Ray is asked not to install it (this package's README.md,
# "Rollouts on a Ray cluster").
os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")

from ._errors import ConfigError, LoadError, ToolhostError
from ._native import (
    Session,
    ToolControlPattern,
    ToolController,
    ToolManager,
    WasmModule,
    __version__,
    load_module,
)

__all__ = [
    "ConfigError",
    "LoadError",
    "Session",
    "Tool",
    "ToolControlPattern",
    "ToolController",
    "ToolManager",
    "ToolhostError",
    "WasmModule",
    "__version__",
    "load_module",
]


class Tool(ABC):
    """A native Python tool, as agent frameworks define it.

    Subclasses implement ``__call__`` and ``tool_info``. A native tool runs
    in the Python process, with the process's rights: it is *not*
    sandboxed. Load untrusted tools as WebAssembly modules instead
    (``load_module``).
    """

    @abstractmethod
    def __call__(self, tool_name: str, arguments: Dict[str, Any]) -> str:
        """Runs the tool and returns its result as a string."""
        raise NotImplementedError

    @abstractmethod
    def tool_info(self) -> Dict[str, Any]:
        """The tool's OpenAI function schema:
        ``{"type": "function", "function": {"name", "description", "parameters"}}``."""
        raise NotImplementedError
