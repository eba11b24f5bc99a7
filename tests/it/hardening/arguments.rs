//! Arguments reach the tool as the model wrote them (point 9).

use serde_json::json;
use toolhost::{Limits, ToolManager};

use crate::common::{load_guest, tool_call};

/// A module whose tool answers with its arguments as it received them.
fn echo_manager() -> ToolManager {
    let mut manager = ToolManager::new();
    let echo = load_guest("guest-extra-export", "extra", Limits::default()).unwrap();
    manager.register(echo).unwrap();
    manager
}

#[test]
fn arguments_reach_the_tool_byte_for_byte() {
    let manager = echo_manager();
    let text = r#"{"big":12345678901234567890123,"f":1.10,"e":1e2,"dup":1,"dup":2}"#;
    // Given as JSON text in a parsed call.
    let call = tool_call("1", "extra_echo", json!(text));
    assert_eq!(manager.call(&call), format!("echo:{text}"));
    // Given as an object in a call read from text (as `toolhost dispatch` does).
    let message = format!(r#"{{"id":"1","function":{{"name":"extra_echo","arguments":{text}}}}}"#);
    let replies = manager.call_message_json(&message).unwrap();
    assert_eq!(replies[0]["content"], format!("echo:{text}"));
    // Whitespace and escapes are kept too.
    let spaced = "{ \"a\" : \"\\u00e9\\n\" }";
    assert_eq!(
        manager.call(&tool_call("2", "extra_echo", json!(spaced))),
        format!("echo:{spaced}")
    );
}
