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
//! - [`ToolManager::call_async`] and its batch forms serve async code (an
//!   MCP server, say) on the caller's executor, without a thread per call.
//!
//! The crate is in layers, each importing only layers below it:
//! `ARCHITECTURE.md` draws them, and `xtask/tests/layers.rs` keeps it so.
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

#![warn(missing_docs)]

pub mod config;
mod dispatch;
mod engine;
mod escape;
mod module;
pub mod names;
pub mod oci;
mod parallel;
mod policy;
mod registry;
mod sandbox;
mod settings;
mod small_file;
mod tool;
pub mod trust;

/// The OpenAI message shapes: taking a tool call apart, the tool calls of an
/// assistant message, the tool message that answers one; from a parsed
/// `serde_json::Value` or from raw JSON text ([`Json`](openai::Json)).
pub mod openai {
    pub use crate::dispatch::{
        Answer, Json, ParsedCall, is_one_call, parse_tool_call, tool_calls_of, tool_message,
    };
}

pub use dispatch::Session;
pub use engine::{
    ArtifactCache, CompileWorker, Compiled, MemoryReset, PoolConfig, ResetInUse,
    serve_compile_worker,
};
pub use escape::escape_controls;
pub use module::{
    BUNDLED_MODULES, BundledModule, LeftOut, LoadError, LoadErrorKind, ModuleSource, Producers,
    WasmModule, bundled_module,
};
pub use policy::{
    Access, Applies, DirAccess, DirGrant, DirMode, Endpoint, Grants, LimitOverrides, LimitSpec,
    Limits, NetworkGrant, SCRATCH_GUEST_PATH, SessionLimits, Warm,
};

/// The HTTP grant's parts: allow entries, origins, secret headers, and the
/// allow-list decision every `wasi:http` request goes through.
pub mod http {
    pub use crate::policy::{
        AllowEntry, Host, HttpAccess, HttpAllow, HttpGrant, Origin, Scheme, Secret, SecretHeader,
        SecretHeaderGrant, TlsRoots,
    };
}
pub use registry::{
    ControllerError, ControllerSpec, DEFAULT_MAX_PARALLEL, Decision, Mode, RegisterError,
    Registered, Rule, RuleSpec, SharedController, ToolController, ToolManager,
};
pub use sandbox::{Runtime, RuntimeBuilder, open_file_limit};
pub use settings::{Bounds, SettingSpec};
pub use tool::{
    Arguments, MAX_SESSION_ID_BYTES, OUTPUT_SCHEMA_BOUNDS, OutputSchemaBounds, SessionId,
    StderrListener, Tool, ToolError, ToolErrorKind, ToolFuture, ToolInfo,
};

/// docs/library.md, whose Rust blocks are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryPage;
