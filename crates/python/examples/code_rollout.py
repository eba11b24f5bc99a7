"""A rollout loop in which the model runs the Python it writes.

The loop of an agentic rollout (a chat model, its tool calls answered by a
``toolhost.ToolManager``, until it gives a final answer), with one session
per rollout: every ``run_python`` call of the rollout continues where the
last one left off (its variables, imports and files), and no other rollout
can see them. Each call runs in a sandbox: fresh CPython, no network, no
host files, under fuel, time and memory limits; whatever goes wrong comes
back to the model as an ``Error: ...`` text, and the loop goes on.

Run it against any OpenAI-compatible server (``pip install openai``)::

    cargo xtask build-examples python
    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=... MODEL=... \\
        python crates/python/examples/code_rollout.py

``crates/python/tests/test_code_rollout.py`` drives ``rollout`` with
scripted model turns instead of a model.
"""

import os
from pathlib import Path
from typing import Any, List, Optional, Tuple

import toolhost

SYSTEM = (
    "You solve tasks by running Python with the run_python tool. Variables and "
    "files persist between your calls. Answer with the result when you are done."
)


def as_dict(message: Any) -> dict:
    """An assistant message as the dict to send back (an OpenAI SDK message
    or a dict)."""
    if isinstance(message, dict):
        return message
    return message.model_dump(exclude_none=True)


def rollout(
    client: Any,
    model: str,
    manager: toolhost.ToolManager,
    task: str,
    max_turns: int = 8,
) -> Tuple[Optional[str], List[dict]]:
    """Runs one rollout of `task`: (the final answer or None, the messages)."""
    messages: List[dict] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": task},
    ]
    tools = manager.tool_infos()
    with manager.session() as session:
        for _ in range(max_turns):
            response = client.chat.completions.create(model=model, messages=messages, tools=tools)
            message = response.choices[0].message
            messages.append(as_dict(message))
            if not message.tool_calls:
                return message.content, messages
            # One tool message per call, in order; errors are texts, never raised.
            messages.extend(session.call_message(message))
    return None, messages


def code_tools(config: Path) -> toolhost.ToolManager:
    """The example config's interpreters only: the other tools deactivated."""
    controller = toolhost.ToolController(
        default_mode="deactivate",
        rules=[{"mode": "activate", "pattern": "python-exec_*"}],
    )
    manager = toolhost.ToolManager.from_config(config)
    manager.tool_controller = controller
    return manager


if __name__ == "__main__":
    from openai import OpenAI

    repo = Path(__file__).resolve().parents[3]
    manager = code_tools(repo / "example-tools" / "toolhost.toml")
    answer, _ = rollout(
        OpenAI(),
        os.environ.get("MODEL", "gpt-4o-mini"),
        manager,
        "What is the sum of the 100 first prime numbers? Check your answer by running code.",
    )
    print(answer)
