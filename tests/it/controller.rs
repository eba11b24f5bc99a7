//! ToolController: the documented examples, with a real manager.

use serde_json::json;
use toolhost::{Mode, ToolController};

use crate::common::{bundled_manager, call};

#[test]
fn documented_construction_example() {
    let controller = ToolController::from_json(&json!({
        "default_mode": "deactivate",
        "rules": [
            {"mode": "activate", "pattern": "math_*"},
            {"mode": "deactivate", "pattern": "calc_*"},
        ]
    }))
    .unwrap();
    let rules: Vec<String> = controller
        .rules()
        .iter()
        .map(|r| format!("{r:?}"))
        .collect();
    assert_eq!(
        rules,
        [
            "Rule(mode=\"activate\", pattern=\"math_*\")",
            "Rule(mode=\"deactivate\", pattern=\"calc_*\")"
        ]
    );
    assert!(controller.check_tool_status("math_add"));
    assert!(!controller.check_tool_status("calc_evaluate"));
    assert!(!controller.check_tool_status("text_case"));
}

#[test]
fn documented_priority_example() {
    let controller = ToolController::new(
        Mode::Deactivate,
        [(Mode::Activate, "math_*"), (Mode::Deactivate, "math_add")],
    )
    .unwrap();
    assert!(controller.check_tool_status("math_add"));
}

#[test]
fn documented_dynamic_management_example() {
    let manager = bundled_manager();
    manager.set_controller(ToolController::new(Mode::Deactivate, []).unwrap());
    manager.activate_tool("text_translator").unwrap();
    manager.deactivate_tool("math_complex").unwrap();
    assert!(manager.check_tool_status("text_translator"));
    assert!(!manager.check_tool_status("math_complex"));
}

#[test]
fn documented_filter_example() {
    let controller = ToolController::new(Mode::Deactivate, [(Mode::Activate, "math_*")]).unwrap();
    let all_tools = vec![
        json!({"name": "math_add"}),
        json!({"name": "math_subtract"}),
        json!({"name": "text_translate"}),
    ];
    let active = controller.filter_tool_list(&all_tools);
    let names: Vec<&str> = active.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["math_add", "math_subtract"]);
    // The OpenAI shape works the same.
    let manager = bundled_manager();
    manager.set_controller(
        ToolController::new(Mode::Deactivate, [(Mode::Activate, "text_*")]).unwrap(),
    );
    let all = bundled_manager().tool_infos();
    let filtered = manager.controller().filter_tool_list(&all);
    assert_eq!(filtered, manager.tool_infos());
    assert_eq!(filtered.len(), 3);
}

#[test]
fn manager_lists_only_active_and_refuses_deactivated() {
    let manager = bundled_manager();
    manager.set_controller(
        ToolController::new(
            Mode::Activate,
            [(Mode::Deactivate, "calc_*"), (Mode::Deactivate, "json_f*")],
        )
        .unwrap(),
    );
    let listed: Vec<String> = manager
        .tool_infos()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        listed,
        ["text_word_count", "text_replace", "text_case", "json_query"]
    );
    assert_eq!(
        call(&manager, "calc_evaluate", json!({"expression": "1"})),
        "Error: tool 'calc_evaluate' is deactivated."
    );
    // Deactivated tools are not offered as available either.
    let out = call(&manager, "nope", json!({}));
    assert_eq!(
        out,
        "Error: unknown tool 'nope'. Available: json_query, text_case, text_replace, text_word_count."
    );
    // An emergency switch takes effect at once, ahead of every rule.
    manager.activate_tool("calc_evaluate").unwrap();
    assert_eq!(
        call(&manager, "calc_evaluate", json!({"expression": "1"})),
        "1"
    );
    let decision = manager.explain("calc_evaluate");
    assert_eq!(
        decision.to_string(),
        "active: rule 1 (activate 'calc_evaluate') matched first"
    );
    manager.deactivate_tool("text_*").unwrap();
    assert!(!manager.check_tool_status("text_case"));
    assert_eq!(manager.controller().rules().len(), 4);
}

#[test]
fn controller_from_toml_config() {
    let config = toolhost::config::Config::from_toml(
        "[controller]\ndefault_mode = \"deactivate\"\n[[controller.rules]]\nmode = \"activate\"\npattern = \"json_*\"\n",
    )
    .unwrap();
    assert!(config.controller.check_tool_status("json_query"));
    assert!(!config.controller.check_tool_status("calc_evaluate"));
    let e = toolhost::config::Config::from_toml(
        "[controller]\nrules = [{ mode = \"activate\", pattern = \"[b-a]\" }]\n",
    )
    .unwrap_err();
    assert!(e.contains("invalid pattern '[b-a]'"), "{e}");
}
