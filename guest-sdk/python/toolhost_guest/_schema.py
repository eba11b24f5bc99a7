"""JSON Schemas from Python type hints, and checking arguments against them.

A tool's parameters are its function's parameters. Each annotation becomes
a JSON Schema (`str` -> string, `int` -> integer, `float` -> number,
`bool` -> boolean, `list[T]` -> array, `dict[str, T]` -> object,
`Literal[...]` -> enum, `Optional[T]` / `T | None` -> T or null), and the
same annotation checks the value the model sends, so a tool function only
ever sees arguments of the types it declared.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Annotated, Literal, Union

_NONE = type(None)


class ArgumentError(Exception):
    """Arguments that do not match the tool's parameters."""

    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path
        self.message = message

    def __str__(self) -> str:
        if self.path:
            return f"invalid arguments: field '{self.path}': {self.message}"
        return f"invalid arguments: {self.message}"


def _unwrap_annotated(hint: Any) -> tuple[Any, str | None]:
    """`Annotated[T, "description"]` -> (T, "description")."""
    if typing.get_origin(hint) is Annotated:
        base, *extras = typing.get_args(hint)
        description = next((e for e in extras if isinstance(e, str)), None)
        return base, description
    return hint, None


def _is_union(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    # `X | Y` (types.UnionType) exists from Python 3.10.
    return origin is Union or origin is getattr(types, "UnionType", Union)


def schema_of(hint: Any) -> dict:
    """The JSON Schema of one annotation."""
    hint, description = _unwrap_annotated(hint)
    schema = _schema_of_type(hint)
    if description:
        schema = {**schema, "description": description}
    return schema


def _schema_of_type(hint: Any) -> dict:
    if hint is Any or hint is typing.Any:
        return {}
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if hint is _NONE or hint is None:
        return {"type": "null"}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is list or origin is list:
        return {"type": "array", "items": schema_of(args[0])} if args else {"type": "array"}
    if hint is dict or origin is dict:
        if len(args) == 2:
            if args[0] is not str:
                raise TypeError(f"dict keys must be str (JSON object keys), not {args[0]!r}")
            return {"type": "object", "additionalProperties": schema_of(args[1])}
        return {"type": "object"}
    if origin is Literal:
        return {"enum": list(args)}
    if _is_union(hint):
        return {"anyOf": [schema_of(a) for a in args]}
    raise TypeError(
        f"unsupported parameter type {hint!r}: use str, int, float, bool, list[...], "
        "dict[str, ...], Literal[...], Optional[...] or Any"
    )


def kind(value: Any) -> str:
    """How a JSON value is named in error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"number {json.dumps(value)}"
    if isinstance(value, str):
        text = json.dumps(value)
        return f"string {text if len(text) <= 40 else text[:37] + '...'}"
    if isinstance(value, list):
        return "an array"
    return "an object"


def check(hint: Any, value: Any, path: str) -> Any:
    """`value` converted to `hint`'s type, or `ArgumentError` saying why not."""
    hint, _ = _unwrap_annotated(hint)
    if hint is Any or hint is typing.Any:
        return value
    if hint is str:
        if isinstance(value, str):
            return value
        raise ArgumentError(path, f"expected a string, got {kind(value)}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ArgumentError(path, f"expected a boolean, got {kind(value)}")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ArgumentError(path, f"expected an integer, got {kind(value)}")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ArgumentError(path, f"expected a number, got {kind(value)}")
    if hint is _NONE or hint is None:
        if value is None:
            return None
        raise ArgumentError(path, f"expected null, got {kind(value)}")
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is list or origin is list:
        if not isinstance(value, list):
            raise ArgumentError(path, f"expected an array, got {kind(value)}")
        if not args:
            return value
        return [check(args[0], item, f"{path}[{i}]") for i, item in enumerate(value)]
    if hint is dict or origin is dict:
        if not isinstance(value, dict):
            raise ArgumentError(path, f"expected an object, got {kind(value)}")
        if len(args) != 2:
            return value
        return {k: check(args[1], v, f"{path}.{k}") for k, v in value.items()}
    if origin is Literal:
        if any(value == a and type(value) is type(a) for a in args):
            return value
        allowed = ", ".join(json.dumps(a) for a in args)
        raise ArgumentError(path, f"expected one of {allowed}, got {kind(value)}")
    if _is_union(hint):
        errors = []
        for option in args:
            try:
                return check(option, value, path)
            except ArgumentError as e:
                if option is not _NONE:
                    errors.append(e.message)
        if len(errors) == 1:
            raise ArgumentError(path, errors[0])
        raise ArgumentError(path, "; or ".join(errors))
    raise ArgumentError(path, f"cannot check a value against {hint!r}")
