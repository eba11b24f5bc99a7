"""The rollout loop of examples/code_rollout.py, driven by scripted model
turns: the model's run_python calls reach the sandbox, their answers (and
errors) come back to it, state lives across the turns of one rollout and
never across rollouts."""

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import toolhost

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "code_rollout.py"


def load_example():
    spec = importlib.util.spec_from_file_location("code_rollout", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["code_rollout"] = module
    spec.loader.exec_module(module)
    return module


class Message:
    """An assistant message shaped as the OpenAI SDK's."""

    def __init__(self, content=None, tool_calls=None):
        self.content = content
        self.tool_calls = tool_calls

    def model_dump(self, exclude_none=False):
        out = {"role": "assistant", "content": self.content, "tool_calls": self.tool_calls}
        return {k: v for k, v in out.items() if not (exclude_none and v is None)}


class ScriptedClient:
    """An OpenAI-compatible client that answers from a script and records
    the requests it got."""

    def __init__(self, turns):
        self.turns = list(turns)
        self.requests = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **request):
        self.requests.append(json.loads(json.dumps(request)))
        message = self.turns.pop(0)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)])


def code(call_id, text):
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "python-exec_run_python", "arguments": json.dumps({"code": text})},
    }


def test_a_scripted_rollout(python_exec_path, tmp_path):
    example = load_example()
    config = tmp_path / "toolhost.toml"
    config.write_text(
        f'[[modules]]\npath = "{python_exec_path}"\nsessions = true\ngrants = {{ scratch = true }}\n'
        '[[modules]]\nbundled = "calc"\n'
    )
    manager = example.code_tools(config)
    client = ScriptedClient(
        [
            Message(tool_calls=[code("c1", "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)")]),
            Message(tool_calls=[code("c2", "fib(20)"), code("c3", "fib(-1) / 0")]),
            Message(tool_calls=[code("c4", "open('out.txt', 'w').write(str(fib(10)))")]),
            Message(content="fib(20) is 6765."),
        ]
    )
    answer, messages = example.rollout(client, "scripted", manager, "What is fib(20)?")
    assert answer == "fib(20) is 6765."
    # The model was offered the interpreter only (calc is deactivated).
    offered = [t["function"]["name"] for t in client.requests[0]["tools"]]
    assert offered == ["python-exec_run_python"]
    # Each later request carries the answers to the calls before it.
    tool_answers = {m["tool_call_id"]: m["content"] for m in client.requests[-1]["messages"] if m["role"] == "tool"}
    assert tool_answers["c1"] == "(no output)"
    assert tool_answers["c2"] == "6765\n", "fib from the turn before is still defined"
    assert tool_answers["c3"].startswith("Error: tool 'python-exec_run_python' failed: Traceback")
    assert "ZeroDivisionError: division by zero" in tool_answers["c3"]
    assert tool_answers["c4"] == "2\n[files created or changed in /scratch: out.txt (2 bytes)]\n"
    assert [m["role"] for m in messages] == ["system", "user"] + ["assistant", "tool"] + ["assistant", "tool", "tool"] + ["assistant", "tool"] + ["assistant"]
    # Another rollout starts from nothing.
    again = ScriptedClient([Message(tool_calls=[code("d1", "fib(3)")]), Message(content="done")])
    example.rollout(again, "scripted", manager, "again")
    second = {m["tool_call_id"]: m["content"] for m in again.requests[-1]["messages"] if m["role"] == "tool"}
    assert "NameError: name 'fib' is not defined" in second["d1"]
