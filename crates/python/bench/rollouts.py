"""Rollout-shaped load: many concurrent agent rollouts, each a few turns of
parallel tool calls against the example tools, as an RL training step
makes them.

    python crates/python/bench/rollouts.py [--rollouts 1000] [--ray]

(after `cargo xtask build-examples`, with the toolhost package importable:
`pip install ./crates/python`, and `pip install ray` for `--ray`). Each
rollout runs 4 turns; each turn is an assistant message with 1-3 tool calls
answered by `acall_message` (the calls of a turn in parallel), the next turn
sent once the answers are back. Prints one run's figures: total time, tool
calls per second, p50/p99 of a turn and of a tool call (the time until its
answer is back: its turn's), and peak RSS. With `--ray` the same rollouts go
through 2 Ray actors (each holding a manager made from the same config,
pickled into it), half of the rollouts each; the RSS is then each actor's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import toolhost

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "target" / "example-tools"
# The bundled modules as files (what `cargo build` builds them into): a
# package built on its own has them only with the `bundled` feature.
BUNDLED = REPO / "target" / "guests" / "wasm32-wasip2" / "guest"
TURNS = 4


def config_text() -> str:
    """The example tools (example-tools/toolhost.toml's modules and pool),
    from their built files."""
    text = "[pool]\nkeep_resident_kib = 8192\n\n"
    modules = [(BUNDLED, "calc", ""), (BUNDLED, "text", ""), (BUNDLED, "json", ""),
               (EXAMPLES, "stats", ""), (EXAMPLES, "url", ""), (EXAMPLES, "hash", ""),
               (EXAMPLES, "python-exec", "sessions = true\ngrants = { scratch = true }\n")]
    for folder, name, extra in modules:
        path = folder / f"{name}.wasm"
        if not path.is_file():
            sys.exit(f"{path} is missing: build the examples first (cargo build; cargo xtask build-examples)")
        text += f'[[modules]]\nname = "{name}"\npath = "{path}"\n{extra}\n'
    return text


# The calls a turn picks from: (tool, arguments, what the answer starts with).
CALLS: List[Tuple[str, Dict[str, Any], str]] = [
    ("calc_evaluate", {"expression": "2 * (3 + 4)"}, "14"),
    ("calc_evaluate", {"expression": "1/0"}, "Error: "),
    ("text_word_count", {"text": "the quick brown fox"}, "{"),
    ("json_query", {"document": '{"a": [1, 2, 3]}', "path": "$.a[1]"}, "[2]"),
    ("stats_mean", {"numbers": [1, 2, 3, 4]}, "2.5"),
    ("url_parse", {"url": "https://example.com/a?b=c"}, "{"),
    ("hash_sha256", {"text": "toolhost"}, ""),
    ("python-exec_run_python", {"code": "print(sum(range(100)))"}, "4950"),
]


def turn(rollout: int, number: int) -> Dict[str, Any]:
    """Rollout `rollout`'s turn `number`: an assistant message with 1-3 calls."""
    count = 1 + (rollout + number) % 3
    calls = []
    for i in range(count):
        name, arguments, _ = CALLS[(rollout * 7 + number * 3 + i) % len(CALLS)]
        calls.append({"id": f"r{rollout}t{number}c{i}", "type": "function",
                      "function": {"name": name, "arguments": json.dumps(arguments)}})
    return {"role": "assistant", "content": None, "tool_calls": calls}


def check(message: Dict[str, Any], replies: List[Dict[str, Any]]) -> None:
    """Every call answered, in order, as expected."""
    calls = message["tool_calls"]
    assert [r["tool_call_id"] for r in replies] == [c["id"] for c in calls]
    for call, reply in zip(calls, replies):
        name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"])
        start = next(s for n, a, s in CALLS if n == name and a == arguments)
        assert reply["content"].startswith(start), (name, reply["content"])


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def run_rollouts(count: int, answer) -> Tuple[float, List[float], List[float]]:
    """Runs `count` rollouts at once through `answer(rollout, message)`;
    the total seconds, each turn's seconds, each call's seconds."""
    turns: List[float] = []
    calls: List[float] = []

    async def rollout(r: int) -> None:
        for n in range(TURNS):
            message = turn(r, n)
            started = time.perf_counter()
            replies = await answer(r, message)
            took = time.perf_counter() - started
            check(message, replies)
            turns.append(took)
            calls.extend([took] * len(replies))

    started = time.perf_counter()
    await asyncio.gather(*(rollout(r) for r in range(count)))
    return time.perf_counter() - started, turns, calls


def report(label: str, total: float, turns: List[float], calls: List[float], rss: str) -> None:
    def pct(values: List[float], p: float) -> str:
        values = sorted(values)
        return f"{values[min(len(values) - 1, round((len(values) - 1) * p))] * 1000:.1f} ms"

    print(f"| {label} | {total:.2f} s | {len(calls)} | {len(calls) / total:.0f} | "
          f"{pct(turns, 0.5)} / {pct(turns, 0.99)} | {pct(calls, 0.5)} / {pct(calls, 0.99)} | {rss} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rollouts", type=int, default=1000)
    parser.add_argument("--ray", action="store_true", help="also through 2 Ray actors")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="toolhost-rollouts-"))
    config = work / "toolhost.toml"
    config.write_text(config_text())
    manager = toolhost.ToolManager.from_config(config)
    # One untimed rollout each way first: modules compiled or loaded from the cache.
    asyncio.run(run_rollouts(8, lambda r, m: manager.acall_message(m)))
    print(f"{args.rollouts} rollouts at once, {TURNS} turns each, 1-3 parallel tool calls a turn, "
          f"{os.cpu_count()} cores\n")
    print("| where | total | tool calls | calls/s | turn p50 / p99 | tool call p50 / p99 | peak RSS |")
    print("|---|---|---|---|---|---|---|")
    total, turns, calls = asyncio.run(run_rollouts(args.rollouts, lambda r, m: manager.acall_message(m)))
    report("one process", total, turns, calls, f"{peak_rss_mib():.0f} MiB")
    if args.ray:
        run_on_ray(manager, args.rollouts)


def run_on_ray(manager: "toolhost.ToolManager", rollouts: int) -> None:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    ray.init(num_cpus=2, _node_ip_address="127.0.0.1", include_dashboard=False,
             log_to_driver=False, configure_logging=False)

    @ray.remote(max_restarts=1, max_task_retries=-1)
    class ToolActor:
        def __init__(self, manager: "toolhost.ToolManager") -> None:
            self.manager = manager

        async def call_message(self, message: Dict[str, Any]) -> List[Dict[str, Any]]:
            return await self.manager.acall_message(message)

        def peak_rss_mib(self) -> float:
            return peak_rss_mib()

    try:
        actors = [ToolActor.remote(manager) for _ in range(2)]

        async def answer(r: int, message: Dict[str, Any]) -> List[Dict[str, Any]]:
            return await actors[r % 2].call_message.remote(message)

        asyncio.run(run_rollouts(8, answer))
        total, turns, calls = asyncio.run(run_rollouts(rollouts, answer))
        rss = " + ".join(f"{v:.0f}" for v in ray.get([a.peak_rss_mib.remote() for a in actors]))
        report("2 Ray actors", total, turns, calls, f"{rss} MiB (each actor)")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
