"""Every sandbox fault comes back from Python as the Rust library's `Error:`
text, and the next call works."""

import pytest

import toolhost
from toolhost import ToolManager

from conftest import HOSTILE_LIMITS, call


def test_answers_match_the_rust_library(hostile, echo, expected):
    """tests/pytest.rs answered these calls with the Rust library, on the same
    components with the same limits; the package must answer alike."""
    manager = ToolManager([hostile, echo])
    assert expected["limits"] == HOSTILE_LIMITS
    assert len(expected["answers"]) >= 8
    for case in expected["answers"]:
        assert manager(case["call"]) == case["content"], case["call"]


@pytest.mark.parametrize(
    "tool, arguments, text",
    [
        ("hostile_spin", {}, "exceeded its time limit of 300 ms."),
        ("hostile_membomb", {}, "exceeded its memory limit of 64 MiB"),
        ("hostile_panic", {"text": "boom"}, "panicked: boom"),
        ("hostile_trap", {}, "trapped"),
        ("hostile_recurse", {}, "Error: tool 'hostile_recurse'"),
    ],
)
def test_fault_then_a_good_call(hostile, tool, arguments, text):
    manager = ToolManager([hostile])
    answer = manager(call(tool, arguments))
    assert answer.startswith(f"Error: tool '{tool}'"), answer
    assert text in answer, answer
    assert manager(call("hostile_add", {"a": 40, "b": 2})) == "42"


def test_fuel_limit(hostile_path):
    frugal = toolhost.load_module(hostile_path, name="frugal", limits={"fuel": 100_000})
    manager = ToolManager([frugal])
    assert manager(call("frugal_spin", {})) == (
        "Error: tool 'frugal_spin' ran out of fuel (limit 100000)."
    )
    assert manager(call("frugal_add", {"a": 1, "b": 1})) == "2"


def test_every_call_is_a_fresh_instance(hostile):
    manager = ToolManager([hostile])
    # "<calls> <static>": both count from 1 in a fresh instance.
    assert [manager(call("hostile_counter", {})) for _ in range(5)] == ["1 1"] * 5


def test_warm_modules_keep_their_instance(hostile_path):
    warm = toolhost.load_module(hostile_path, name="warm", warm=True, max_calls=3)
    assert warm.warm is True
    manager = ToolManager([warm])
    counts = [manager(call("warm_counter", {})) for _ in range(6)]
    assert counts == ["1 1", "2 2", "3 3", "1 1", "2 2", "3 3"]
    # A fault drops the instance: the next call starts afresh.
    assert manager(call("warm_panic", {"text": "x"})).startswith("Error: ")
    assert manager(call("warm_counter", {})) == "1 1"


def test_no_environment_or_files_unless_granted(hostile_path, tmp_path):
    plain = ToolManager([toolhost.load_module(hostile_path, name="plain")])
    assert plain(call("plain_env", {})) == "0 vars: "
    assert plain(call("plain_list_dir", {"text": "/"})).startswith("Error: tool 'plain_list_dir' failed")
    assert plain(call("plain_read_file", {"text": "/etc/passwd"})).startswith("Error: ")
    (tmp_path / "a.txt").write_text("granted text")
    granted = toolhost.load_module(
        hostile_path,
        name="granted",
        grants={"dirs": [{"host": str(tmp_path), "guest": "/data", "mode": "ro"}], "env": {"UNITS": "metric"}},
    )
    manager = ToolManager([granted])
    assert manager(call("granted_read_file", {"text": "/data/a.txt"})) == "granted text"
    assert manager(call("granted_env", {})) == "1 vars: UNITS=metric"
