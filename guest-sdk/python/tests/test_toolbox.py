"""Tests of toolhost_guest in plain CPython (no component needed).

Run: python3 guest-sdk/python/tests/test_toolbox.py
(`cargo test` runs them too, with the pinned toolchain's Python).
"""

import json
import sys
import unittest
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolhost_guest import Toolbox, ToolError  # noqa: E402


def infos(tools: Toolbox) -> dict:
    return {i["function"]["name"]: i["function"] for i in json.loads(tools.tool_info())}


class SchemaTest(unittest.TestCase):
    def test_types_become_json_schema(self):
        tools = Toolbox()

        @tools.tool
        def f(
            s: str,
            i: int,
            x: float,
            b: bool,
            items: list[int],
            table: dict[str, float],
            mode: Literal["a", "b"],
            maybe: Optional[str] = None,
            anything: Any = None,
            described: Annotated[int, "How many."] = 3,
        ) -> str:
            """First line
            continued.

            Not part of the description."""
            return "ok"

        f_info = infos(tools)["f"]
        self.assertEqual(f_info["description"], "First line continued.")
        p = f_info["parameters"]
        self.assertEqual(p["required"], ["s", "i", "x", "b", "items", "table", "mode"])
        self.assertFalse(p["additionalProperties"])
        props = p["properties"]
        self.assertEqual(props["s"], {"type": "string"})
        self.assertEqual(props["i"], {"type": "integer"})
        self.assertEqual(props["x"], {"type": "number"})
        self.assertEqual(props["b"], {"type": "boolean"})
        self.assertEqual(props["items"], {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(
            props["table"], {"type": "object", "additionalProperties": {"type": "number"}}
        )
        self.assertEqual(props["mode"], {"enum": ["a", "b"]})
        self.assertEqual(props["maybe"], {"anyOf": [{"type": "string"}, {"type": "null"}]})
        self.assertEqual(props["anything"], {})
        self.assertEqual(
            props["described"], {"type": "integer", "description": "How many.", "default": 3}
        )

    def test_explicit_schema_and_name(self):
        tools = Toolbox()
        schema = {"type": "object", "properties": {"q": {"type": "string"}}}

        @tools.tool(name="find-it", description="Finds.", parameters=schema)
        def search(args: dict) -> list:
            return [args]

        info = infos(tools)["find-it"]
        self.assertEqual(info, {"name": "find-it", "description": "Finds.", "parameters": schema})
        self.assertEqual(tools.run("find-it", '{"q": 1, "z": 2}'), (True, '[{"q": 1, "z": 2}]'))

    def test_bad_declarations_are_refused(self):
        tools = Toolbox()

        def star(*args: int) -> str:
            return ""

        with self.assertRaisesRegex(TypeError, "plain named parameter"):
            tools.tool(star)

        def bad_hint(x: set) -> str:
            return ""

        with self.assertRaisesRegex(TypeError, "unsupported parameter type"):
            tools.tool(bad_hint)
        with self.assertRaisesRegex(ValueError, "letters, digits"):
            tools.tool(name="no spaces")(lambda: "")

        @tools.tool
        def twice() -> str:
            return ""

        with self.assertRaisesRegex(ValueError, "declared twice"):
            tools.tool(name="twice")(lambda: "")

        async def later() -> str:
            return ""

        with self.assertRaisesRegex(TypeError, "not async"):
            tools.tool(later)

    def test_no_parameters(self):
        tools = Toolbox()

        @tools.tool
        def ping() -> str:
            """Answers pong."""
            return "pong"

        self.assertEqual(
            infos(tools)["ping"]["parameters"],
            {"type": "object", "properties": {}, "additionalProperties": False},
        )
        self.assertEqual(tools.run("ping", "{}"), (True, "pong"))
        self.assertEqual(
            tools.run("ping", '{"x": 1}'), (False, "invalid arguments: unknown field 'x' (expected: none)")
        )


class CallTest(unittest.TestCase):
    def setUp(self):
        self.tools = Toolbox()

        @self.tools.tool
        def add(a: int, b: float = 0.5) -> float:
            """Adds."""
            return a + b

        @self.tools.tool
        def fail(kind: str) -> Any:
            """Fails."""
            if kind == "tool":
                raise ToolError("told you")
            if kind == "zero":
                return 1 / 0
            if kind == "set":
                return {1, 2}
            if kind == "nan":
                return float("nan")
            if kind == "deep":
                return deep(0)
            return None

        def deep(n: int) -> int:
            return deep(n + 1)

    def run_(self, name: str, arguments: str):
        return self.tools.run(name, arguments)

    def test_results(self):
        self.assertEqual(self.run_("add", '{"a": 1}'), (True, "1.5"))
        self.assertEqual(self.run_("add", '{"a": 1, "b": 2}'), (True, "3.0"))
        self.assertEqual(self.run_("add", '  {"a": 1}  '), (True, "1.5"))
        self.assertEqual(self.run_("fail", '{"kind": "none"}'), (True, "null"))

    def test_argument_errors(self):
        cases = {
            "": "invalid arguments: missing field 'a'",
            "{}": "invalid arguments: missing field 'a'",
            "[1]": "invalid arguments: expected a JSON object, got an array",
            '"x"': 'invalid arguments: expected a JSON object, got string "x"',
            '{"a": true}': "invalid arguments: field 'a': expected an integer, got boolean true",
            '{"a": 1.5}': "invalid arguments: field 'a': expected an integer, got number 1.5",
            '{"a": 1, "b": "2"}': "invalid arguments: field 'b': expected a number, got string \"2\"",
            '{"a": 1, "c": 2}': "invalid arguments: unknown field 'c' (expected: a, b)",
        }
        for arguments, error in cases.items():
            self.assertEqual(self.run_("add", arguments), (False, error), arguments)
        ok, text = self.run_("add", "{bad")
        self.assertFalse(ok)
        self.assertTrue(text.startswith("invalid arguments: not valid JSON: "), text)

    def test_failures_become_error_texts(self):
        self.assertEqual(self.run_("nope", "{}"), (False, "this module has no tool 'nope' (it has: add, fail)"))
        self.assertEqual(self.run_("fail", '{"kind": "tool"}'), (False, "told you"))
        self.assertEqual(
            self.run_("fail", '{"kind": "zero"}'), (False, "ZeroDivisionError: division by zero")
        )
        ok, text = self.run_("fail", '{"kind": "set"}')
        self.assertEqual((ok, text.split(":")[0]), (False, "cannot encode the result as JSON"))
        ok, text = self.run_("fail", '{"kind": "nan"}')
        self.assertEqual((ok, text.split(":")[0]), (False, "cannot encode the result as JSON"))
        self.assertEqual(
            self.run_("fail", '{"kind": "deep"}'),
            (False, "RecursionError: maximum recursion depth exceeded"),
        )


class WarmUpTest(unittest.TestCase):
    def test_each_sample_runs_as_a_call_would(self):
        tools = Toolbox()
        seen = []

        @tools.tool(warm_up=[{"x": 1}, {"x": 2.5, "tag": "t"}])
        def record(x: float, tag: str = "") -> float:
            seen.append((x, tag))
            return x

        @tools.tool(warm_up={"n": 3})
        def single(n: int) -> int:
            seen.append(("single", n))
            return n

        @tools.tool
        def cold() -> str:
            raise AssertionError("a tool without warm_up is never run")

        self.assertEqual(tools.warm_up(rounds=3), 9)
        self.assertEqual(
            seen,
            [(1.0, "")] * 3 + [(2.5, "t")] * 3 + [("single", 3)] * 3,
        )

    def test_bad_samples_are_refused(self):
        tools = Toolbox()
        with self.assertRaisesRegex(TypeError, "a dict, or a list of dicts"):
            @tools.tool(warm_up=[1, 2])
            def f(x: int) -> int:
                return x
        with self.assertRaisesRegex(TypeError, "are not JSON"):
            @tools.tool(warm_up={"x": {1, 2}})
            def g(x: Any) -> int:
                return 1

        @tools.tool(warm_up={"x": "not a number"})
        def h(x: int) -> int:
            return x
        with self.assertRaisesRegex(
            ValueError, r"tool 'h': its warm_up arguments .* failed: invalid arguments"
        ):
            tools.warm_up()


class PrimeTest(unittest.TestCase):
    def test_an_empty_name_runs_the_prime_hooks_and_answers_an_error(self):
        tools = Toolbox()
        seen = []

        @tools.tool
        def echo(x: int) -> int:
            return x

        @tools.on_prime
        def first() -> None:
            seen.append("first")

        @tools.on_prime
        def broken() -> None:
            raise OSError("no such directory")

        @tools.on_prime
        def last() -> None:
            seen.append("last")

        ok, text = tools.run("", "")
        self.assertFalse(ok)
        self.assertIn("no tool ''", text)
        self.assertEqual(seen, ["first", "last"], "a failing hook leaves the others running")
        self.assertEqual(tools.run("echo", '{"x": 2}'), (True, "2"))
        self.assertEqual(seen, ["first", "last"], "a real call runs no hook")


if __name__ == "__main__":
    unittest.main()
