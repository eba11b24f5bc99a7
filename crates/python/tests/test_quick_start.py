"""README.md's Python example (a copy of examples/quick_start.py, which a
test of the workspace keeps equal) runs as written, next to calc.wasm."""

import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "quick_start.py"


def test_the_readme_example_runs(calc_path, monkeypatch):
    monkeypatch.chdir(calc_path.parent)
    assert calc_path.name == "calc.wasm"
    namespace = runpy.run_path(str(EXAMPLE))
    assert namespace["answer"] == "42"
