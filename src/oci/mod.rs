//! Modules from OCI registries: references, registry access (HTTPS with
//! the bundled roots, `[[registries]]`, Docker config credentials), the
//! component layout, the pull store, signatures found in the registry,
//! fetching a module by digest and pushing one. `trust` checks the
//! signatures this layer finds.

mod client;
mod credentials;
mod fetch;
mod http;
mod layout;
mod push;
mod reference;
mod registries;
mod signatures;
mod store;
mod token;

pub use fetch::{OciContext, OciRequest, PinSource, Pulled};
pub use layout::{WASM_CONFIG, WASM_LAYER, WASM_LAYER_TYPES};
pub use push::Pushed;
pub use reference::OciReference;
pub use registries::{DEFAULT_REGISTRY_TIMEOUT_MS, RegistryConfig, check_registries};
pub use store::PullStore;

/// What went wrong fetching, verifying or pushing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciError {
    /// The kind.
    pub kind: OciErrorKind,
    /// What happened and what to do, in words.
    pub message: String,
}

impl OciError {
    pub(crate) fn new(kind: OciErrorKind, message: String) -> Self {
        Self { kind, message }
    }
}

impl std::fmt::Display for OciError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OciError {}

/// The kinds of [`OciError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OciErrorKind {
    /// Settings that cannot work (a bad CA file, Docker config, key).
    Config,
    /// The registry could not be reached.
    Unreachable,
    /// The registry has no such manifest or blob.
    NotFound,
    /// The registry wants credentials it was not given (401/403).
    Unauthorized,
    /// What the registry sent was refused (size, digest, layout, status).
    Refused,
    /// No pin and no rule, pins that disagree, or no valid signature.
    NotVerified,
    /// The pull store could not be written.
    Store,
}
