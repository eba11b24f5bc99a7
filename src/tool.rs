//! The [`Tool`] trait: anything that provides tools to a [`ToolManager`](crate::ToolManager).

use serde_json::{Map, Value};

use crate::{ToolError, ToolInfo};

/// A provider of one or more tools: a WebAssembly module
/// ([`WasmModule`](crate::WasmModule)) or native Rust code.
///
/// `infos` gives the schemas with the names the model sees (for a WASM
/// module, `<module>_<tool>`); `call` runs one of them. Implementations must
/// not panic: a failure is a [`ToolError`].
///
/// ```
/// use serde_json::{Map, Value, json};
/// use toolhost::{Tool, ToolError, ToolInfo, ToolManager};
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
///     fn call(&self, _name: &str, arguments: &Map<String, Value>) -> Result<String, ToolError> {
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

    /// Runs tool `name` (one of the names from [`Tool::infos`]).
    fn call(&self, name: &str, arguments: &Map<String, Value>) -> Result<String, ToolError>;
}
