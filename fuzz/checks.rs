//! What each fuzz target checks, one function per target. Shared by the fuzz
//! targets (`fuzz_targets/`) and by the regression test that replays the
//! corpus and every input a fuzz run ever found (`tests/it/fuzz_inputs.rs`).

use serde_json::Value;
use toolhost::config::Config;
use toolhost::{Limits, Runtime, ToolManager, WasmModule};

/// Arbitrary bytes through the dispatch path of `manager`: the first byte
/// picks how the rest is used (as one tool's arguments, a tool call, or an
/// assistant message). Every answer must be a string; errors start `Error: `.
pub fn dispatch(manager: &ToolManager, data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let names = manager.names();
    if names.is_empty() {
        return;
    }
    match selector % 4 {
        0 | 1 => {
            let name = &names[usize::from(selector / 4) % names.len()];
            let arguments = Value::String(text.into_owned());
            if let Err(error) = manager.call_tool(name, Some(&arguments)) {
                let message = error.to_string();
                assert!(message.starts_with("Error: "), "{message}");
            }
        }
        2 => {
            if let Ok(call) = serde_json::from_str::<Value>(&text) {
                std::hint::black_box(manager.call(&call));
            }
        }
        _ => {
            if let Ok(message) = serde_json::from_str::<Value>(&text)
                && let Ok(replies) = manager.call_message(&message)
            {
                for reply in replies {
                    assert!(reply["content"].is_string(), "{reply}");
                }
            }
        }
    }
}

/// Arbitrary bytes as a component: a module or a load error naming it.
pub fn loader(runtime: &Runtime, data: &[u8]) {
    // Small limits: a component that loads runs `tool-info` once.
    let limits = Limits {
        tool_info_fuel: 10_000_000,
        tool_info_timeout_ms: 1_000,
        memory_mib: 16,
        ..Limits::default()
    };
    match WasmModule::from_bytes(runtime, "fuzz", data, limits) {
        Ok(module) => {
            std::hint::black_box(module);
        }
        Err(error) => {
            assert_eq!(error.module, "fuzz");
            assert!(!error.reason.is_empty());
        }
    }
}

/// Arbitrary text as `toolhost.toml`: a valid config or an error message.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::from_toml(text) {
        Ok(config) => {
            assert!(config.limits.validate().is_ok());
            for entry in &config.modules {
                assert!(entry.limits.apply(config.limits).validate().is_ok());
                let _ = entry.grants.network.endpoints();
            }
        }
        Err(message) => assert!(!message.is_empty()),
    }
}
