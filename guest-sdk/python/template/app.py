"""A toolhost tool module in Python: copy this file and make it yours."""

from typing import Annotated

from toolhost_guest import Toolbox, ToolError

tools = Toolbox()


@tools.tool
def greet(name: Annotated[str, "Who to greet."]) -> str:
    """Greets someone by name."""
    if not name.strip():
        raise ToolError("name is empty: give the name of who to greet")
    return f"Hello, {name}!"


# componentize-py exports the class named WitWorld.
WitWorld = tools.world()
