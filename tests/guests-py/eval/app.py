"""A test tool that evaluates one Python expression: toolhost's side of the
code-execution row of `cargo bench --bench isolation`, measured against
pyeryx's `Sandbox.execute` (CPython in wasmtime, from PyPI).

Built with componentize-py for toolhost's `tool` world. Each call runs in a
fresh instance, so nothing one expression leaves behind is seen by the next.
"""

from typing import Annotated

from toolhost_guest import Toolbox, ToolError

tools = Toolbox()


@tools.tool(name="eval", warm_up={"expression": "sum(i * i for i in range(10))"})
def evaluate(expression: Annotated[str, "One Python expression, such as `2 ** 10`."]) -> str:
    """Evaluates a Python expression and returns the `repr` of its value."""
    try:
        return repr(eval(expression, {}))
    except Exception as error:  # the model's code: any error is its answer
        raise ToolError(f"{type(error).__name__}: {error}") from None


WitWorld = tools.world()
