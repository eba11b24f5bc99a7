"""ToolController: rules, overrides, filtering, errors."""

import pytest

from toolhost import ToolControlPattern, ToolController


def test_defaults_activate_everything():
    controller = ToolController()
    assert controller.default_mode == "activate"
    assert controller.rules == []
    assert controller.check_tool_status("anything")


def test_bad_modes_and_patterns_raise_value_error():
    with pytest.raises(ValueError, match="mode"):
        ToolController(default_mode="enable")
    with pytest.raises(ValueError):
        ToolController(rules=[{"mode": "on", "pattern": "x"}])
    with pytest.raises(ValueError):
        ToolController(rules=[{"mode": "activate", "pattern": "[z-a]"}])
    with pytest.raises(ValueError):
        ToolController(rules=[{"mode": "activate"}])
    with pytest.raises(ValueError):
        ToolController(rules=[{"mode": "activate", "pattern": "x", "extra": 1}])
    with pytest.raises(ValueError):
        ToolController(rules="math_*")
    with pytest.raises(ValueError):
        ToolControlPattern("sometimes", "x")
    controller = ToolController()
    with pytest.raises(ValueError):
        controller.activate_tool("[z-a]")
    assert controller.rules == []


def test_rules_read_back_as_patterns_and_can_be_passed_again():
    rules = [{"mode": "activate", "pattern": "math_*"}, {"mode": "deactivate", "pattern": "*_calculator"}]
    controller = ToolController(default_mode="deactivate", rules=rules)
    patterns = controller.rules
    assert patterns == [ToolControlPattern("activate", "math_*"), ToolControlPattern("deactivate", "*_calculator")]
    assert len({*patterns, ToolControlPattern("activate", "math_*")}) == 2
    again = ToolController(default_mode="deactivate", rules=patterns)
    assert again.rules == patterns
    assert repr(again) == (
        "ToolController(default_mode='deactivate', rules=[ToolControlPattern(mode='activate', "
        "pattern='math_*'), ToolControlPattern(mode='deactivate', pattern='*_calculator')])"
    )


def test_overrides_come_first_and_replace_their_own_rule():
    controller = ToolController(default_mode="deactivate", rules=[{"mode": "activate", "pattern": "math_*"}])
    controller.deactivate_tool("math_add")
    assert not controller.check_tool_status("math_add")
    assert controller.check_tool_status("math_sub")
    controller.activate_tool("math_add")
    assert controller.check_tool_status("math_add")
    assert [(r.mode, r.pattern) for r in controller.rules] == [("activate", "math_add"), ("activate", "math_*")]


def test_globs_follow_the_shell():
    controller = ToolController(default_mode="deactivate", rules=[
        {"mode": "activate", "pattern": "upload_*"},
        {"mode": "activate", "pattern": "*_calculator"},
        {"mode": "activate", "pattern": "text_?"},
    ])
    assert controller.check_tool_status("upload_file")
    assert controller.check_tool_status("sci_calculator")
    assert controller.check_tool_status("text_a")
    assert not controller.check_tool_status("text_ab")
    assert not controller.check_tool_status("download_file")


def test_filter_tool_list_takes_both_shapes_and_returns_the_same_objects():
    controller = ToolController(default_mode="deactivate", rules=[{"mode": "activate", "pattern": "math_*"}])
    plain = {"name": "math_add"}
    schema = {"type": "function", "function": {"name": "math_mul", "parameters": {"type": "object"}}}
    other = {"type": "function", "function": {"name": "text_translate"}}
    nameless = {"description": "no name"}
    kept = controller.filter_tool_list([plain, schema, other, nameless])
    assert kept == [plain, schema]
    assert kept[0] is plain and kept[1] is schema


def test_explain_names_the_rule():
    controller = ToolController(default_mode="deactivate", rules=[{"mode": "activate", "pattern": "math_*"}])
    assert "math_*" in controller.explain("math_add")
    assert controller.explain("text_x").startswith("inactive")
