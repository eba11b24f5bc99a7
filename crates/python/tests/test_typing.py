"""The type stubs: mypy accepts typical use, and catches misuse."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null", *args],
        capture_output=True,
        text=True,
        cwd=HERE,
    )


def test_stubs_accept_typical_use():
    result = mypy(str(HERE / "typed_usage.py"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_stubs_catch_misuse(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import toolhost\nx: int = toolhost.ToolManager().names()\n")
    result = mypy(str(bad))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "incompatible types in assignment" in result.stdout.lower()


def test_package_is_typed():
    import toolhost

    package = Path(toolhost.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_native.pyi").is_file()


def test_every_public_item_has_a_docstring():
    import toolhost

    for name in toolhost.__all__:
        item = getattr(toolhost, name)
        if name.startswith("__"):
            continue
        assert item.__doc__, name
        for attr, member in vars(item).items() if isinstance(item, type) else []:
            if attr.startswith("_") or not callable(member):
                continue
            assert getattr(member, "__doc__", None), f"{name}.{attr}"
