//! The HTTP grant: which origins a module's `wasi:http` requests may reach,
//! with which methods, and which headers the host adds for it; as written
//! ([`HttpGrant`]) and resolved ([`HttpAccess`]), with the one decision every
//! request goes through ([`HttpAccess::decide`]).
//!
//! ```toml
//! [modules.grants.http]
//! allow = ["https://api.example.com/v1/", "http://127.0.0.1:8080"]
//! methods = ["GET", "POST"]
//!
//! [[modules.grants.http.secret_headers]]
//! origin = "https://api.example.com"
//! name = "Authorization"
//! env = "EXAMPLE_TOKEN"
//! prefix = "Bearer "
//! ```
//!
//! The parts: `grant.rs` (the config's form and its resolution), `origin.rs`
//! (schemes, hosts, origins and the URLs they are read from), `access.rs`
//! (the resolved form and the allow-list decision), `internal.rs` (which
//! addresses the SSRF guard refuses).

mod access;
mod grant;
mod internal;
mod origin;

pub(crate) use access::RequestTarget;
pub use access::{HttpAccess, HttpAllow, Secret, SecretHeader, TlsRoots};
pub use grant::{AllowEntry, HttpGrant, SecretHeaderGrant};
pub(crate) use internal::is_internal;
pub use origin::{Host, Origin, Scheme};
