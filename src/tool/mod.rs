//! What a tool is, to everything above the sandbox: the [`Tool`] trait, its
//! schema ([`ToolInfo`]), its [`Arguments`] and its errors ([`ToolError`]).

mod arguments;
mod error;
mod schema;
mod session;
mod stderr;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use arguments::Arguments;
pub(crate) use error::json_type_name;
pub use error::{ToolError, ToolErrorKind};
pub use schema::{OUTPUT_SCHEMA_BOUNDS, OutputSchemaBounds, ToolInfo};
pub(crate) use session::SessionReset;
pub use session::{MAX_SESSION_ID_BYTES, SessionId};
pub use stderr::StderrListener;

/// The future of an asynchronous tool call ([`Tool::call_async`]).
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<String, ToolError>> + Send + 'static>>;

/// A provider of one or more tools: a WebAssembly module
/// ([`WasmModule`](crate::WasmModule)) or native Rust code.
///
/// `infos` gives the schemas with the names the model sees (for a WASM
/// module, `<module>_<tool>`); `call` runs one of them. Implementations must
/// not panic: a failure is a [`ToolError`].
///
/// ```
/// use serde_json::{Value, json};
/// use toolhost::{Arguments, Tool, ToolError, ToolInfo, ToolManager};
///
/// struct Search;
///
/// impl Tool for Search {
///     fn infos(&self) -> Vec<ToolInfo> {
///         vec![ToolInfo::new(
///             "search",
///             "Searches the web.",
///             json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
///         )]
///     }
///
///     fn call(&self, _name: &str, arguments: &Arguments) -> Result<String, ToolError> {
///         let arguments = arguments.object()?;
///         let query = arguments.get("query").and_then(Value::as_str).unwrap_or("");
///         Ok(format!("results for: {query}"))
///     }
/// }
///
/// let mut manager = ToolManager::new();
/// manager.register(Search).unwrap();
/// let call = json!({"id": "call_1", "type": "function",
///     "function": {"name": "search", "arguments": "{\"query\": \"rust\"}"}});
/// assert_eq!(manager.call(&call), "results for: rust");
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The schemas of the tools this provides, with their exposed names.
    fn infos(&self) -> Vec<ToolInfo>;

    /// The largest arguments (JSON text, in bytes) this provider accepts;
    /// the manager refuses larger ones before reading them. `None` (the
    /// default): no limit of its own.
    fn max_arguments_bytes(&self) -> Option<u64> {
        None
    }

    /// The wall-clock time one call may take, if this provider has a time
    /// limit (a [`WasmModule`](crate::WasmModule)'s `timeout_ms`). `None`
    /// (the default): none of its own.
    fn time_limit(&self) -> Option<std::time::Duration> {
        None
    }

    /// Runs tool `name` (one of the names from [`Tool::infos`]), blocking
    /// the calling thread until it is done.
    fn call(&self, name: &str, arguments: &Arguments) -> Result<String, ToolError>;

    /// Runs tool `name` as a future that owns what it needs.
    ///
    /// The default runs [`Tool::call`] when the future is first polled, on
    /// the polling thread: right for quick native tools. A
    /// [`WasmModule`](crate::WasmModule) runs its call on the caller's
    /// executor instead, yielding while the guest waits or spins, and stops
    /// the call when the future is dropped.
    fn call_async(self: Arc<Self>, name: String, arguments: Arguments) -> ToolFuture {
        Box::pin(async move { self.call(&name, &arguments) })
    }

    /// Runs tool `name` in `session`: a provider that keeps state per
    /// session (a [`WasmModule`](crate::WasmModule) with sessions on) runs
    /// it where the session's previous calls left off. The default ignores
    /// the session: [`Tool::call`].
    fn call_in_session(
        &self,
        session: &SessionId,
        name: &str,
        arguments: &Arguments,
    ) -> Result<String, ToolError> {
        let _ = session;
        self.call(name, arguments)
    }

    /// [`Tool::call_in_session`] as a future (see [`Tool::call_async`]).
    /// The default ignores the session: [`Tool::call_async`].
    fn call_in_session_async(
        self: Arc<Self>,
        session: SessionId,
        name: String,
        arguments: Arguments,
    ) -> ToolFuture {
        let _ = session;
        self.call_async(name, arguments)
    }

    /// [`Tool::call_async`] (or, with a session, [`Tool::call_in_session_async`])
    /// that passes what the tool writes to stderr to `stderr` while the
    /// call runs. The default has no stderr to pass on: it ignores `stderr`.
    fn call_listened_async(
        self: Arc<Self>,
        session: Option<SessionId>,
        name: String,
        arguments: Arguments,
        stderr: StderrListener,
    ) -> ToolFuture {
        let _ = stderr;
        match session {
            Some(session) => self.call_in_session_async(session, name, arguments),
            None => self.call_async(name, arguments),
        }
    }

    /// Drops what this provider keeps for `session`; its next call starts
    /// afresh. The default keeps nothing, so does nothing.
    fn end_session(&self, session: &SessionId) {
        let _ = session;
    }
}
