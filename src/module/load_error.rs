//! [`LoadError`]: why a module could not be loaded.

/// What kind of problem stopped a module from loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// The file could not be read.
    Io,
    /// The module name is not valid.
    InvalidName,
    /// The limits given for the module are zero or too large.
    InvalidLimits,
    /// A grant cannot be given (a missing directory, an unset variable, ...).
    InvalidGrants,
    /// The bytes are not a WebAssembly component (empty, not wasm, a core module).
    NotAComponent,
    /// The component is larger than its `max_component_bytes` limit.
    TooLarge,
    /// wasmtime could not compile the component.
    Compile,
    /// The component does not implement the `toolhost:tool` world.
    WrongWorld,
    /// The component imports something the host does not provide.
    MissingImport,
    /// `tool-info` trapped, ran out of a limit, or could not be run.
    ToolInfoFailed,
    /// `tool-info` returned text that is not a valid list of tool schemas.
    InvalidToolInfo,
    /// An OCI module could not be fetched (registry unreachable, refused,
    /// not found, unauthorized; a blob that does not match its digest).
    Fetch,
    /// An OCI module's digest is not fixed, its pins disagree, or the
    /// `[[trust]]` rule covering it found no valid signature.
    NotVerified,
}

/// A module that could not be loaded: which one, and exactly what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot load module '{module}': {reason}")]
pub struct LoadError {
    /// The module's name (or the file it came from).
    pub module: String,
    /// What kind of problem it is.
    pub kind: LoadErrorKind,
    /// What is wrong, and what to do about it where that is known.
    pub reason: String,
}

impl LoadError {
    pub(crate) fn new(module: &str, kind: LoadErrorKind, reason: impl Into<String>) -> Self {
        Self {
            module: module.to_string(),
            kind,
            reason: reason.into(),
        }
    }
}
