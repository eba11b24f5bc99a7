"""Write toolhost tool modules in Python.

A tool is a plain function with type hints; its JSON Schema and
description come from its signature and docstring, its arguments are
checked before it runs, and anything it raises becomes an error text for
the model::

    from typing import Annotated
    from toolhost_guest import Toolbox, ToolError

    tools = Toolbox()

    @tools.tool
    def greet(name: Annotated[str, "Who to greet."]) -> str:
        \"\"\"Greets someone by name.\"\"\"
        return f"Hello, {name}!"

    WitWorld = tools.world()

Build the module with componentize-py (see guest-sdk/python/README.md).
"""

from ._schema import ArgumentError
from ._toolbox import Toolbox, ToolError

__all__ = ["ArgumentError", "Toolbox", "ToolError"]
