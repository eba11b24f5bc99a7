// The bundled example tools behind a controller, and one assistant turn's
// tool calls answered (README.md and docs/library.md show this file).
use serde_json::json;
use toolhost::config::LoadedConfig;
use toolhost::{Mode, Runtime, ToolController};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = Runtime::new()?;
    // The bundled example tools; LoadedConfig::discover(Some(path)) reads a toolhost.toml.
    let manager = LoadedConfig::default().build_manager(&runtime)?;
    manager.set_controller(ToolController::new(
        Mode::Activate,
        [(Mode::Deactivate, "text_*")],
    )?);

    let tools = manager.tool_infos(); // send these as the request's `tools`
    assert!(!tools.is_empty());
    let message = json!({"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "calc_evaluate", "arguments": "{\"expression\": \"6*7\"}"}},
    ]});
    let replies = manager.call_message(&message)?; // run in parallel, answered in order
    assert_eq!(
        replies[0],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "42"})
    );
    Ok(())
}
