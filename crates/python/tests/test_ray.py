"""Rollouts on a local Ray cluster: a pool of 2 actors, each holding a
ToolManager made from a config (pickled into the actor, rebuilt there from
the config), runs the 2,000 tool calls of 250 simulated rollouts; one actor
is killed in the middle and Ray restarts it (max_restarts), retrying the
calls it lost (max_task_retries): every answer arrives once, in order."""

import asyncio
import json
import os

import pytest

# Ray reports usage to its servers unless told not to; the cluster keeps to
# 127.0.0.1 (`_node_ip_address`), and has no dashboard.
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

import ray  # noqa: E402

import toolhost  # noqa: E402

ROLLOUTS = 250
TURNS = 4
CALLS_PER_TURN = 2


@pytest.fixture(scope="module")
def cluster():
    ray.init(
        num_cpus=2,
        _node_ip_address="127.0.0.1",
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield
    finally:
        ray.shutdown()


@ray.remote(max_restarts=2, max_task_retries=-1)
class ToolActor:
    """Holds one manager; answers an assistant message's tool calls."""

    def __init__(self, manager: toolhost.ToolManager) -> None:
        self.manager = manager

    async def call_message(self, message: dict) -> tuple:
        """The tool messages, and this process's id (which changes when
        Ray starts the actor again)."""
        return os.getpid(), await self.manager.acall_message(message)

    def pid(self) -> int:
        return os.getpid()


def turn_calls(rollout: int, turn: int) -> list:
    """The model's tool calls of one turn: arithmetic whose answer the test
    knows, and every few turns a sandbox fault or a deactivated tool."""
    calls = [("calc_evaluate", {"expression": f"{rollout} * 10 + {turn}"})]
    kind = (rollout + turn) % 4
    if kind == 0:
        calls.append(("h_membomb", {}))
    elif kind == 1:
        calls.append(("h_spin", {}))
    elif kind == 2:
        calls.append(("h_env", {}))
    else:
        calls.append(("calc_evaluate", {"expression": f"{rollout} / 0"}))
    return [
        {"id": f"r{rollout}t{turn}c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)
    ]


def expected(rollout: int, turn: int, index: int, name: str, content: str) -> None:
    if index == 0:
        assert content == str(rollout * 10 + turn), (rollout, turn, content)
    elif name == "h_membomb":
        assert content.startswith("Error: tool 'h_membomb' ") and "memory" in content, content
    elif name == "h_spin":
        # Fuel ends a spin; on a machine this busy (2 cores, 2 actors, each
        # with up to 125 rollouts' calls at once), its 10 s time limit can
        # come first: either is the sandbox's answer.
        assert content.startswith(("Error: tool 'h_spin' ran out of fuel",
                                   "Error: tool 'h_spin' exceeded its time limit")), content
    elif name == "h_env":
        assert content.startswith("Error: ") and "h_env" in content, content
    else:
        assert content == f"Error: tool 'calc_evaluate' failed: division by zero at position {len(str(rollout)) + 2}", content


def test_a_pool_of_two_actors_survives_one_killed(cluster, calc_and_hostile_config):
    manager = toolhost.ToolManager.from_config(calc_and_hostile_config)
    actors = [ToolActor.remote(manager) for _ in range(2)]
    first_pids = ray.get([a.pid.remote() for a in actors], timeout=180)
    answered = []  # (rollout, turn, call index, tool, content)
    served_by = set()  # (actor, pid) pairs that answered turns
    done = {"calls": 0}
    killed = asyncio.Event()

    async def rollout(r: int) -> None:
        actor = actors[r % 2]
        for turn in range(TURNS):
            calls = turn_calls(r, turn)
            message = {"role": "assistant", "content": None, "tool_calls": calls}
            pid, replies = await actor.call_message.remote(message)
            served_by.add((r % 2, pid))
            assert [m["tool_call_id"] for m in replies] == [c["id"] for c in calls], "in order"
            for i, (call, reply) in enumerate(zip(calls, replies)):
                answered.append((r, turn, i, call["function"]["name"], reply["content"]))
            done["calls"] += len(calls)
            if not killed.is_set() and done["calls"] >= ROLLOUTS * TURNS * CALLS_PER_TURN // 2:
                killed.set()
                # A crash in the middle, calls of its rollouts in flight.
                ray.kill(actors[0], no_restart=False)

    async def all_rollouts() -> None:
        await asyncio.gather(*(rollout(r) for r in range(ROLLOUTS)))

    asyncio.run(asyncio.wait_for(all_rollouts(), timeout=600))

    assert killed.is_set()
    assert len(answered) == ROLLOUTS * TURNS * CALLS_PER_TURN, "nothing lost or duplicated"
    keys = {(r, t, i) for r, t, i, _, _ in answered}
    assert len(keys) == len(answered), "each call answered once"
    for r, t, i, name, content in answered:
        expected(r, t, i, name, content)
    pids = ray.get([a.pid.remote() for a in actors], timeout=180)
    assert pids[0] != first_pids[0], "Ray started the killed actor again"
    assert pids[1] == first_pids[1], "the other actor went on"
    assert {(0, first_pids[0]), (0, pids[0])} <= served_by, "actor 0 answered before and after its restart"


def test_a_trapping_tool_in_a_ray_driver_is_an_error_text(cluster, hostile_path):
    """Ray's crash handler is not installed over wasmtime's (toolhost asks
    Ray not to, RAY_DISABLE_FAILURE_SIGNAL_HANDLER): a tool that traps in
    the driver, after ray.init, is an `Error:` text, not a dead process."""
    assert os.environ["RAY_DISABLE_FAILURE_SIGNAL_HANDLER"] == "1"
    module = toolhost.load_module(hostile_path, name="h", limits={"memory_mib": 16})
    for tool in ["h_panic", "h_membomb", "h_panic"]:
        answer = module(tool)
        assert answer.startswith(f"Error: tool '{tool}' "), answer
