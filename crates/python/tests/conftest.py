"""Fixtures for the toolhost package's tests.

`cargo test -p toolhost-python` (and `cargo test --workspace`) runs this
suite through tests/pytest.rs, which builds the package and the test
components and passes their paths in TOOLHOST_TEST_* variables.
"""

import json
import os
from pathlib import Path

import pytest

import toolhost


def _path(var: str) -> Path:
    value = os.environ.get(var)
    if not value:
        raise RuntimeError(
            f"{var} is not set: run this suite with `cargo test -p toolhost-python`, "
            "which builds the package and the components it uses"
        )
    return Path(value)


@pytest.fixture(scope="session")
def echo_path() -> Path:
    """The echo component (tool `echo`, arguments `{"text"}`)."""
    return _path("TOOLHOST_TEST_ECHO")


@pytest.fixture(scope="session")
def hostile_path() -> Path:
    """The hostile test component: spin, membomb, panic, sleep, counter..."""
    return _path("TOOLHOST_TEST_HOSTILE")


@pytest.fixture(scope="session")
def http_path() -> Path:
    """The HTTP test component (tools `http_request`, `http_many`, `http_env`)."""
    return _path("TOOLHOST_TEST_HTTP")


@pytest.fixture(scope="session")
def plain_path() -> Path:
    """A component written for no host in particular (tests/guests/guest-plain):
    typed exports such as `echo(text)`, `compound(c)`, `fallible(ok, text)`."""
    return _path("TOOLHOST_TEST_PLAIN")


@pytest.fixture(scope="session")
def verbatim_path() -> Path:
    """The verbatim test component (tool `verbatim`: answers its arguments text)."""
    return _path("TOOLHOST_TEST_VERBATIM")


@pytest.fixture(scope="session")
def arguments_table() -> list:
    """The rows of tests/data/verbatim_arguments.json: arguments texts that
    must reach a tool byte for byte on every way in."""
    return json.loads(_path("TOOLHOST_TEST_ARGUMENTS_TABLE").read_text(encoding="utf-8"))["rows"]


@pytest.fixture(scope="session")
def python_exec_path() -> Path:
    """The code interpreter example (example-tools/python-exec, tool `run_python`)."""
    return _path("TOOLHOST_TEST_PYTHON_EXEC")


@pytest.fixture(scope="session")
def calc_path() -> Path:
    """The calc example component (tool `evaluate`)."""
    return _path("TOOLHOST_TEST_CALC")


@pytest.fixture(scope="session")
def expected() -> dict:
    """What the Rust library answers to the calls in expected.json (see tests/pytest.rs)."""
    return json.loads(_path("TOOLHOST_TEST_EXPECTED").read_text())


# The limits the hostile module is loaded with, here and in tests/pytest.rs.
HOSTILE_LIMITS = {"timeout_ms": 300, "memory_mib": 64}


@pytest.fixture(scope="session")
def echo(echo_path: Path) -> toolhost.WasmModule:
    return toolhost.load_module(echo_path, name="echo")


@pytest.fixture(scope="session")
def hostile(hostile_path: Path) -> toolhost.WasmModule:
    return toolhost.load_module(hostile_path, name="hostile", limits=HOSTILE_LIMITS)


@pytest.fixture(scope="session")
def calc(calc_path: Path) -> toolhost.WasmModule:
    return toolhost.load_module(calc_path, name="calc")


@pytest.fixture
def calc_and_hostile_config(tmp_path: Path, calc_path: Path, hostile_path: Path) -> Path:
    """A config file: calc, and the hostile module as `h` with small limits
    (its tools fail fast), `h_env` deactivated by a rule."""
    path = tmp_path / "toolhost.toml"
    path.write_text(f"""
[controller]
rules = [{{ mode = "deactivate", pattern = "h_env" }}]

[[modules]]
name = "calc"
path = "{calc_path}"

[[modules]]
name = "h"
path = "{hostile_path}"
limits = {{ memory_mib = 16, fuel = 50000000 }}
""")
    return path


def call(name: str, arguments=None, id: str = "call_1") -> dict:
    """An OpenAI tool call."""
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}
