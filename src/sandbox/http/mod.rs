//! Outbound HTTP for guests (`wasi:http` 0.2 and 0.3), decided and sent by
//! the host.
//!
//! wasmtime-wasi-http hands every request a guest makes to
//! [`Hooks::send_request`](hooks): toolhost checks it against the module's
//! [`HttpAccess`](crate::policy::HttpAccess) before any lookup or
//! connection, counts it against the call's HTTP limits, adds the grant's
//! secret headers, resolves the host name itself, refuses internal
//! addresses (the SSRF guard) and connects to exactly the address it
//! checked, over TLS with the module's roots where the URL says `https`.
//! The host never follows a redirect: the guest gets the 3xx and each hop
//! it makes is checked again.

mod body;
mod connect;
mod hooks;
mod problem;
mod shared;
mod tls;

pub(super) use hooks::CallHttp;
pub(super) use shared::HttpCallParts;
pub(crate) use tls::HttpClient;
