//! The errors a tool call can end in, as text for a model and as a kind for code.

use std::fmt;

/// What went wrong in a tool call. Every kind renders as an `Error: ...` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The tool call itself is malformed (not an object, no `function`, no name).
    MalformedCall,
    /// The arguments are not a JSON object (or text that parses to one).
    InvalidArguments,
    /// No registered tool has this name.
    UnknownTool,
    /// The tool is registered but deactivated by the controller.
    Deactivated,
    /// The tool ran and returned its own error text.
    Failed,
    /// The tool used up its fuel.
    OutOfFuel,
    /// The tool ran past its wall-clock time limit.
    Timeout,
    /// The tool tried to grow its memory past the limit.
    MemoryLimit,
    /// The tool exceeded another limit: instances, tables, memories or table elements.
    ResourceLimit,
    /// The tool panicked (a Rust guest's panic, reported from its stderr).
    Panicked,
    /// The tool trapped for another reason (unreachable, stack overflow, ...).
    Trapped,
    /// The tool returned a result larger than the output limit.
    OutputTooLarge,
    /// The tool called `exit` before returning a result.
    Exited,
    /// The host could not run the tool (for example, it could not instantiate it).
    Host,
    /// The call's session had lost its state (evicted, idle too long, or
    /// renewed after `max_calls`); the call was not run, and the next one
    /// starts the session afresh.
    SessionReset,
}

/// A failed tool call: its kind and the message a model reads.
///
/// `Display` gives the full text, always starting with `Error: `, which is
/// what [`ToolManager::call`](crate::ToolManager::call) returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    kind: ToolErrorKind,
    message: String,
}

impl ToolError {
    /// An error of `kind`; `message` is the text after `Error: `.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// A tool's own error text, as `Error: tool '<name>' failed: <text>`.
    pub fn failed(tool: &str, text: &str) -> Self {
        Self::new(
            ToolErrorKind::Failed,
            format!("tool '{tool}' failed: {text}"),
        )
    }

    /// Arguments of `len` bytes given to tool `tool`, whose limit is `max`.
    pub fn arguments_too_large(tool: &str, len: usize, max: u64) -> Self {
        Self::new(
            ToolErrorKind::InvalidArguments,
            format!(
                "tool '{tool}' was given {len} bytes of arguments, more than its limit of {max} bytes."
            ),
        )
    }

    /// This error with `note` after its message, in parentheses.
    pub(crate) fn with_note(mut self, note: &str) -> Self {
        self.message = format!("{} ({note})", self.message);
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The message after `Error: `.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error: {}", self.message)
    }
}

impl std::error::Error for ToolError {}

/// The JSON type name of `value`, as used in error messages.
pub(crate) fn json_type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}
