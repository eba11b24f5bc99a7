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
//! - Every call runs in a fresh sandboxed instance under [`Limits`].
//!
//! ```no_run
//! use serde_json::json;
//! use toolhost::{Limits, Runtime, ToolManager, WasmModule};
//!
//! let runtime = Runtime::new()?;
//! let module = WasmModule::from_file(&runtime, "calc.wasm".as_ref(), None, Limits::default())?;
//! let mut manager = ToolManager::new();
//! manager.register(module)?;
//! let call = json!({"id": "call_1", "type": "function",
//!     "function": {"name": "calc_evaluate", "arguments": "{\"expression\": \"2 * (3 + 4)\"}"}});
//! assert_eq!(manager.call(&call), "14");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bundled;
mod capture;
pub mod config;
mod controller;
mod dispatch;
mod error;
mod info;
mod limits;
mod load_error;
mod manager;
mod module;
pub mod names;
mod rollout;
mod runtime;
mod sandbox;
mod tool;

pub use bundled::{BUNDLED_MODULES, BundledModule, bundled_module};
pub use capture::Captured;
pub use controller::{
    ControllerError, ControllerSpec, Decision, Mode, Rule, RuleSpec, ToolController,
};
pub use dispatch::{ParsedCall, parse_arguments, parse_tool_call};
pub use error::{ToolError, ToolErrorKind};
pub use info::ToolInfo;
pub use limits::{LimitOverrides, Limits};
pub use load_error::{LoadError, LoadErrorKind};
pub use manager::{DEFAULT_MAX_PARALLEL, RegisterError, Registered, ToolManager};
pub use module::{MAX_COMPONENT_BYTES, MAX_TOOLS_PER_MODULE, WasmModule};
pub use rollout::{tool_calls_of, tool_message};
pub use runtime::Runtime;
pub use sandbox::CAPTURED_OUTPUT_BYTES;
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
