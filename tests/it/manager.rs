//! ToolManager: the documented examples, registry operations and dispatch errors.

use std::sync::Arc;

use serde_json::{Value, json};
use toolhost::{Arguments, RegisterError, Tool, ToolError, ToolErrorKind, ToolInfo, ToolManager};

use crate::common::{bundled_manager, call, tool_call};

/// The documented SearchTool, as a native Rust tool.
struct SearchTool;

impl Tool for SearchTool {
    fn infos(&self) -> Vec<ToolInfo> {
        vec![ToolInfo::new(
            "search",
            "搜索网络信息。",
            json!({"type": "object", "properties": {"query": {"type": "string", "description": "搜索查询。"}}, "required": ["query"]}),
        )]
    }

    fn call(&self, _name: &str, arguments: &Arguments) -> Result<String, ToolError> {
        let arguments = arguments.object()?;
        let query = arguments.get("query").and_then(Value::as_str).unwrap_or("");
        Ok(format!("搜索结果：{query}"))
    }
}

#[test]
fn documented_dispatch_example() {
    let mut manager = ToolManager::new();
    manager.register(SearchTool).unwrap();
    let call = json!({
        "id": "call_1",
        "type": "function",
        "function": {"name": "search", "arguments": "{\"query\": \"Python 教程\"}"},
    });
    assert_eq!(manager.call(&call), "搜索结果：Python 教程");
}

#[test]
fn documented_error_cases_return_strings() {
    let mut manager = bundled_manager();
    manager.register(SearchTool).unwrap();
    // Unknown tool.
    let out = manager.call(&tool_call("1", "nope", json!("{}")));
    assert_eq!(
        out,
        "Error: unknown tool 'nope'. Available: calc_evaluate, json_format, json_query, search, text_case, text_replace, text_word_count."
    );
    // Invalid JSON in arguments.
    let out = manager.call(&tool_call("2", "search", json!("{\"query\": ")));
    assert!(
        out.starts_with("Error: invalid JSON in arguments: EOF while parsing"),
        "{out}"
    );
    // The tool's own failure.
    let out = call(&manager, "calc_evaluate", json!({"expression": "1/0"}));
    assert!(
        out.starts_with("Error: tool 'calc_evaluate' failed: "),
        "{out}"
    );
    assert!(out.contains("division by zero"), "{out}");
}

#[test]
fn malformed_calls_and_arguments_get_the_documented_errors() {
    let manager = bundled_manager();
    let cases = [
        (json!([]), "Error: tool_call must be an object, got array."),
        (json!(null), "Error: tool_call must be an object, got null."),
        (
            json!({"id": "x"}),
            "Error: tool_call missing \"function\" object.",
        ),
        (
            json!({"function": {"arguments": "{}"}}),
            "Error: tool_call missing \"function.name\".",
        ),
        (
            tool_call("1", "calc_evaluate", json!("[1, 2]")),
            "Error: \"arguments\" JSON must be an object.",
        ),
        (
            tool_call("1", "calc_evaluate", json!(true)),
            "Error: \"arguments\" must be a JSON string or object, got boolean.",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(manager.call(&input), expected, "for {input}");
    }
}

#[test]
fn arguments_as_text_object_null_or_blank() {
    let manager = bundled_manager();
    let expr = json!({"expression": "1+2"});
    assert_eq!(
        manager.call(&tool_call("1", "calc_evaluate", json!(expr.to_string()))),
        "3"
    );
    assert_eq!(manager.call(&tool_call("1", "calc_evaluate", expr)), "3");
    // null and blank mean {}: the tool then reports its missing field.
    for empty in [json!(null), json!("  ")] {
        let out = manager.call(&tool_call("1", "calc_evaluate", empty));
        assert!(out.contains("missing field `expression`"), "{out}");
    }
}

#[test]
fn did_you_mean_hint_for_a_dropped_prefix() {
    let manager = bundled_manager();
    let out = call(&manager, "evaluate", json!({"expression": "1"}));
    assert!(
        out.starts_with("Error: unknown tool 'evaluate'. Available: "),
        "{out}"
    );
    assert!(out.ends_with(" Did you mean 'calc_evaluate'?"), "{out}");
    // No hint when nothing (or more than one tool) matches.
    let out = call(&manager, "evaluat", json!({}));
    assert!(!out.contains("Did you mean"), "{out}");
}

#[test]
fn structured_errors_carry_a_kind() {
    let manager = bundled_manager();
    let err = manager.try_call(&json!(1)).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::MalformedCall);
    let err = manager.call_tool("x", None).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::UnknownTool);
    let err = manager
        .call_tool("calc_evaluate", Some(&json!({"expression": "("})))
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed);
    assert_eq!(
        manager
            .call_tool("calc_evaluate", Some(&json!({"expression": "2^10"})))
            .unwrap(),
        "1024"
    );
}

#[test]
fn registry_keeps_order_and_refuses_duplicates() {
    let mut manager = bundled_manager();
    let names = manager.names();
    assert_eq!(
        names,
        [
            "calc_evaluate",
            "text_word_count",
            "text_replace",
            "text_case",
            "json_query",
            "json_format"
        ]
    );
    manager.register(SearchTool).unwrap();
    assert_eq!(manager.names().last().map(String::as_str), Some("search"));
    assert_eq!(
        manager.register(SearchTool),
        Err(RegisterError::Duplicate("search".into()))
    );
    let schemas = manager.tool_infos();
    assert_eq!(schemas.len(), 7);
    assert_eq!(schemas[0]["type"], "function");
    assert_eq!(schemas[0]["function"]["name"], "calc_evaluate");
    assert_eq!(schemas[0]["function"]["parameters"]["type"], "object");
}

#[test]
fn replace_is_on_purpose() {
    struct OtherSearch;
    impl Tool for OtherSearch {
        fn infos(&self) -> Vec<ToolInfo> {
            vec![ToolInfo::new(
                "search",
                "other",
                ToolInfo::empty_parameters(),
            )]
        }
        fn call(&self, _: &str, _: &Arguments) -> Result<String, ToolError> {
            Ok("other".into())
        }
    }
    let mut manager = ToolManager::new();
    manager.register(SearchTool).unwrap();
    let replaced = manager.replace(OtherSearch).unwrap();
    assert_eq!(replaced.len(), 1);
    assert_eq!(replaced[0].info.description, "搜索网络信息。");
    assert_eq!(manager.call(&tool_call("1", "search", json!({}))), "other");
}

#[test]
fn unregister_by_name_and_by_module() {
    let mut manager = bundled_manager();
    let removed = manager.unregister("calc_evaluate").expect("was registered");
    assert_eq!(removed.info.name, "calc_evaluate");
    assert!(manager.unregister("calc_evaluate").is_none());
    let removed = manager.unregister_module("text");
    let names: Vec<&str> = removed.iter().map(|r| r.info.name.as_str()).collect();
    assert_eq!(names, ["text_word_count", "text_replace", "text_case"]);
    assert_eq!(manager.names(), ["json_query", "json_format"]);
    let out = call(&manager, "calc_evaluate", json!({"expression": "1"}));
    assert!(
        out.starts_with("Error: unknown tool 'calc_evaluate'"),
        "{out}"
    );
}

#[test]
fn copy_is_shallow_and_independent() {
    let original = bundled_manager();
    let mut copy = original.copy();
    copy.register(SearchTool).unwrap();
    copy.unregister("json_query");
    copy.deactivate_tool("calc_evaluate").unwrap();
    assert!(!original.names().contains(&"search".to_string()));
    assert!(original.names().contains(&"json_query".to_string()));
    assert!(original.check_tool_status("calc_evaluate"));
    // Both share the compiled module and both still call it.
    let a = original.get("json_format").unwrap();
    let b = copy.get("json_format").unwrap();
    assert!(Arc::ptr_eq(&a.provider, &b.provider));
    assert_eq!(
        call(&original, "calc_evaluate", json!({"expression": "6*7"})),
        "42"
    );
}

#[test]
fn call_many_answers_in_order_with_tool_messages() {
    let manager = bundled_manager();
    let message = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [
            tool_call("a", "calc_evaluate", json!("{\"expression\": \"1+1\"}")),
            tool_call("b", "nope", json!("{}")),
            {"id": "c", "type": "function"},
            tool_call("d", "text_case", json!({"text": "hello world", "to": "upper"})),
            tool_call("e", "calc_evaluate", json!("{bad")),
        ]
    });
    let out = manager.call_message(&message).unwrap();
    assert_eq!(out.len(), 5);
    let ids: Vec<&str> = out
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b", "c", "d", "e"]);
    assert!(
        out.iter()
            .all(|m| m["role"] == "tool" && m.as_object().unwrap().len() == 3)
    );
    assert_eq!(out[0]["content"], "2");
    assert!(
        out[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("Error: unknown tool 'nope'")
    );
    assert_eq!(
        out[2]["content"],
        "Error: tool_call missing \"function\" object."
    );
    assert_eq!(out[3]["content"], "HELLO WORLD");
    assert!(
        out[4]["content"]
            .as_str()
            .unwrap()
            .starts_with("Error: invalid JSON in arguments")
    );
    let err = manager
        .call_message(&json!({"tool_calls": "x"}))
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::MalformedCall);
}

#[test]
fn native_and_wasm_tools_mix() {
    let mut manager = bundled_manager();
    manager.register(SearchTool).unwrap();
    let out = manager.call_many(&[
        tool_call("1", "search", json!({"query": "q"})),
        tool_call("2", "calc_evaluate", json!({"expression": "sqrt(16)"})),
    ]);
    assert_eq!(out[0]["content"], "搜索结果：q");
    assert_eq!(out[1]["content"], "4");
}

#[test]
fn manager_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ToolManager>();
    assert_send_sync::<toolhost::WasmModule>();
}
