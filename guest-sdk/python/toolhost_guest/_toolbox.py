"""The tools of one module: declared once, listed by `tool-info`, run by `call`."""

from __future__ import annotations

import inspect
import json
import re
import typing
from dataclasses import dataclass
from typing import Any, Callable

from ._schema import ArgumentError, check, kind, schema_of

_NAME = re.compile(r"[A-Za-z0-9_-]+")

# How many times each warm-up call runs at build time: enough for CPython's
# adaptive interpreter to specialise the bytecode on the call's path.
_WARM_UP_ROUNDS = 16


class ToolError(Exception):
    """Raise it in a tool to answer the model with this error text."""


@dataclass
class _Tool:
    name: str
    description: str
    parameters: dict
    func: Callable[..., Any]
    # Parameter name -> annotation, when derived from the signature; None
    # when the author gave `parameters` and the function takes the raw dict.
    hints: dict[str, Any] | None
    required: list[str]
    # Arguments to run the tool with at build time (see `Toolbox.warm_up`).
    warm_up: list[dict]

    def info(self) -> dict:
        function: dict = {"name": self.name}
        if self.description:
            function["description"] = self.description
        function["parameters"] = self.parameters
        return {"type": "function", "function": function}

    def run(self, arguments: dict) -> Any:
        if self.hints is None:
            return self.func(arguments)
        unknown = [k for k in arguments if k not in self.hints]
        if unknown:
            expected = ", ".join(self.hints) or "none"
            raise ArgumentError("", f"unknown field '{unknown[0]}' (expected: {expected})")
        for name in self.required:
            if name not in arguments:
                raise ArgumentError("", f"missing field '{name}'")
        kwargs = {k: check(self.hints[k], v, k) for k, v in arguments.items()}
        return self.func(**kwargs)


def _describe(func: Callable[..., Any]) -> str:
    """The docstring's first paragraph, its wrapped lines joined."""
    doc = inspect.getdoc(func) or ""
    first = doc.split("\n\n", 1)[0]
    return " ".join(line.strip() for line in first.splitlines()).strip()


def _derive(func: Callable[..., Any]) -> tuple[dict, dict[str, Any], list[str]]:
    """(parameters schema, annotations, required names) from the signature."""
    hints = typing.get_type_hints(func, include_extras=True)
    properties: dict[str, dict] = {}
    annotations: dict[str, Any] = {}
    required: list[str] = []
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise TypeError(
                f"tool {func.__name__}: parameter '{p.name}' must be a plain named "
                "parameter (no *args, **kwargs or positional-only); or give "
                "parameters={...} to take the raw arguments"
            )
        hint = hints.get(p.name, Any)
        schema = schema_of(hint)
        if p.default is p.empty:
            required.append(p.name)
        elif p.default is not None:
            try:
                json.dumps(p.default)
                schema = {**schema, "default": p.default}
            except (TypeError, ValueError):
                pass
        properties[p.name] = schema
        annotations[p.name] = hint
    parameters: dict = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    parameters["additionalProperties"] = False
    return parameters, annotations, required


def _warm_up_list(warm_up: dict | list[dict] | None) -> list[dict]:
    """`warm_up` as a list of argument dicts, each checked to be JSON."""
    if warm_up is None:
        return []
    samples = [warm_up] if isinstance(warm_up, dict) else warm_up
    if not isinstance(samples, list) or not all(isinstance(a, dict) for a in samples):
        raise TypeError("warm_up: give the arguments as a dict, or a list of dicts")
    for arguments in samples:
        try:
            json.dumps(arguments)
        except (TypeError, ValueError) as e:
            raise TypeError(f"warm_up: arguments {arguments!r} are not JSON: {e}") from None
    return samples


def _encode(value: Any) -> str:
    """A tool's return value as text for the model: strings as they are,
    anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ToolError(f"cannot encode the result as JSON: {e}") from None


class Toolbox:
    """The tools of a module.

    Declare each tool with `@toolbox.tool`, then export the module with
    `WitWorld = toolbox.world()`.
    """

    def __init__(self) -> None:
        self._tools: dict[str, _Tool] = {}
        self._on_prime: list[Callable[[], None]] = []

    def on_prime(self, func: Callable[[], None]) -> Callable[[], None]:
        """Declares a function (a decorator) to run when the host primes a
        fresh instance: a call with an empty tool name, made ahead of the
        instance's one real call (wit/tool.wit), with the grants that call
        will have. Set up there what every call of this instance would
        otherwise do first (look at a granted directory, build a table),
        taking it off the call's path; it must change nothing a call could
        tell apart. A primed instance's answer is still an error; an
        exception in `func` is ignored, and the call then does the setup
        itself."""
        self._on_prime.append(func)
        return func

    def tool(self, func: Callable[..., Any] | None = None, *, name: str | None = None,
             description: str | None = None, parameters: dict | None = None,
             warm_up: dict | list[dict] | None = None):
        """Declares a tool (a decorator, with or without arguments).

        - `name`: the tool's name, default the function's name.
        - `description`: default the docstring's first paragraph.
        - `parameters`: a JSON Schema to use as is; the function is then
          called with the arguments as one dict, unchecked. Without it, the
          schema comes from the function's parameters and their type hints
          (`Annotated[T, "text"]` adds a description), and arguments are
          checked against them before the function runs.
        - `warm_up`: arguments (a dict, or a list of them) to run the tool
          with at build time, so that the component's snapshot holds an
          interpreter already warmed on the tool's path and every call's
          fresh instance starts from it (see `Toolbox.warm_up`). Give
          typical arguments of a call that has no effect outside the tool.
        """
        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            self._add(f, name, description, parameters, _warm_up_list(warm_up))
            return f
        return register(func) if func is not None else register

    def _add(self, func: Callable[..., Any], name: str | None, description: str | None,
             parameters: dict | None, warm_up: list[dict]) -> None:
        tool_name = name or func.__name__
        if not _NAME.fullmatch(tool_name):
            raise ValueError(f"tool name {tool_name!r}: use letters, digits, '_' and '-' only")
        if tool_name in self._tools:
            raise ValueError(f"tool {tool_name!r} is declared twice")
        if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
            raise TypeError(f"tool {tool_name!r}: tools are plain functions, not async ones")
        if parameters is None:
            schema, hints, required = _derive(func)
        else:
            schema, hints, required = parameters, None, []
        self._tools[tool_name] = _Tool(
            tool_name, description if description is not None else _describe(func),
            schema, func, hints, required, warm_up)

    def tool_info(self) -> str:
        """The `tool-info` export: the schemas of every tool, as JSON text."""
        return json.dumps([t.info() for t in self._tools.values()], ensure_ascii=False)

    def run(self, name: str, arguments: str) -> tuple[bool, str]:
        """Runs tool `name`; (True, result) or (False, error text). Never raises
        for anything the tool or the arguments do."""
        if not name:
            self._prime()
        tool = self._tools.get(name)
        if tool is None:
            return False, f"this module has no tool '{name}' (it has: {', '.join(self._tools)})"
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except ValueError as e:
            return False, f"invalid arguments: not valid JSON: {e}"
        if not isinstance(value, dict):
            return False, f"invalid arguments: expected a JSON object, got {kind(value)}"
        try:
            return True, _encode(tool.run(value))
        except (ArgumentError, ToolError) as e:
            return False, str(e)
        except Exception as e:  # noqa: BLE001 - every failure becomes an error text
            return False, f"{type(e).__name__}: {e}"

    def _prime(self) -> None:
        for func in self._on_prime:
            try:
                func()
            except Exception:  # noqa: BLE001 - the call will set itself up instead
                pass

    def warm_up(self, rounds: int = _WARM_UP_ROUNDS) -> int:
        """Runs each tool's `warm_up` arguments `rounds` times, as `call`
        would; returns how many calls ran. `world()` calls it, so it runs
        at build time, when componentize-py imports the module and then
        snapshots its memory: a fresh instance of the component starts from
        an interpreter that has already run (and specialised) those paths,
        which makes its first call cheaper. Raises if a warm-up call fails,
        so that a wrong sample stops the build instead of warming nothing.
        """
        ran = 0
        for tool in self._tools.values():
            for arguments in tool.warm_up:
                text = json.dumps(arguments)
                for _ in range(rounds):
                    ok, answer = self.run(tool.name, text)
                    ran += 1
                    if not ok:
                        raise ValueError(
                            f"tool {tool.name!r}: its warm_up arguments {text} failed: {answer}")
        return ran

    def world(self) -> type:
        """The class componentize-py exports: assign it to `WitWorld` in the
        module you build (`WitWorld = toolbox.world()`). Runs `warm_up()`
        first (at build time)."""
        import wit_world  # generated by componentize-py at build time
        from componentize_py_types import Err

        self.warm_up()
        toolbox = self

        class WitWorld(wit_world.WitWorld):
            def tool_info(self) -> str:
                return toolbox.tool_info()

            def call(self, name: str, arguments: str) -> str:
                ok, text = toolbox.run(name, arguments)
                if not ok:
                    raise Err(text)
                return text

        return WitWorld
