//! toolhost runs LLM tools compiled to WebAssembly components, so that an
//! agent can use tools nobody has to trust.
//!
//! - A **tool module** is one component implementing `wit/tool.wit`: it
//!   exports `tool-info` (OpenAI function schemas as JSON) and
//!   `call(name, arguments)`. [`WasmModule`] loads and checks one.
//! - A [`ToolManager`] registers tools (WASM modules and native [`Tool`]s),
//!   lists their schemas and dispatches OpenAI tool calls, answering every
//!   failure with an `Error: ...` text instead of failing.
//! - A [`ToolController`] decides from ordered glob rules which tools are active.
//! - Every call runs in a fresh sandboxed instance under [`Limits`], and
//!   reaches nothing outside it (files, environment, network) unless its
//!   module's [`Grants`] allow it. `SECURITY.md` gives the threat model.
//!
//! ```
//! use serde_json::json;
//! use toolhost::config::LoadedConfig;
//! use toolhost::{Mode, Runtime, ToolController};
//!
//! let runtime = Runtime::new()?;
//! // The bundled example tools; LoadedConfig::discover(Some(path)) reads a toolhost.toml.
//! let manager = LoadedConfig::default().build_manager(&runtime)?;
//! manager.set_controller(ToolController::new(Mode::Activate, [(Mode::Deactivate, "text_*")])?);
//!
//! let tools = manager.tool_infos(); // send these as the request's `tools`
//! assert_eq!(tools.len(), 3);
//! let message = json!({"role": "assistant", "tool_calls": [
//!     {"id": "call_1", "type": "function",
//!      "function": {"name": "calc_evaluate", "arguments": "{\"expression\": \"6*7\"}"}},
//! ]});
//! let replies = manager.call_message(&message)?; // run in parallel, answered in order
//! assert_eq!(replies[0], json!({"role": "tool", "tool_call_id": "call_1", "content": "42"}));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod artifact_cache;
mod bundled;
mod capture;
pub mod config;
mod controller;
mod dispatch;
mod error;
mod grants;
mod info;
mod limits;
mod load_error;
mod manager;
mod module;
pub mod names;
mod network;
mod producers;
mod rollout;
mod runtime;
mod sandbox;
mod shadow;
mod tool;

pub use artifact_cache::{ArtifactCache, Compiled};
pub use bundled::{BUNDLED_MODULES, BundledModule, bundled_module};
pub use capture::Captured;
pub use controller::{
    ControllerError, ControllerSpec, Decision, Mode, Rule, RuleSpec, ToolController,
};
pub use dispatch::{ParsedCall, parse_arguments, parse_tool_call};
pub use error::{ToolError, ToolErrorKind};
pub use grants::{DirGrant, DirMode, Endpoint, Grants, NetworkGrant};
pub use info::ToolInfo;
pub use limits::{LimitOverrides, LimitSpec, Limits};
pub use load_error::{LoadError, LoadErrorKind};
pub use manager::{DEFAULT_MAX_PARALLEL, RegisterError, Registered, ToolManager};
pub use module::WasmModule;
pub use producers::Producers;
pub use rollout::{tool_calls_of, tool_message};
pub use runtime::Runtime;
pub use tool::Tool;

/// A wasmtime error as one line: its causes joined by `: `, without the wasm backtrace.
pub(crate) fn describe_error(error: &wasmtime::Error) -> String {
    let parts: Vec<String> = error
        .chain()
        .map(|cause| cause.to_string())
        .filter(|text| !text.starts_with("error while executing at wasm backtrace"))
        .collect();
    parts.join(": ")
}
