//! [`NetworkPolicy`]: which sockets one call may open, from its module's network grant.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::sockets::SocketAddrUse;

use crate::grants::{Endpoint, NetworkGrant};

/// Outbound TCP to the granted endpoints, and nothing else: no listening,
/// no UDP, no bind but to the unspecified address and port 0 (what `connect`
/// does implicitly), and name lookups only of the granted host names.
#[derive(Debug, Clone, Default)]
pub(crate) struct NetworkPolicy {
    endpoints: Arc<Vec<Endpoint>>,
}

impl NetworkPolicy {
    /// The policy of `grant` (already checked by [`crate::Grants::resolve`];
    /// entries that do not parse grant nothing).
    pub(crate) fn new(grant: &NetworkGrant) -> Self {
        let endpoints = grant
            .allow
            .iter()
            .filter_map(|text| Endpoint::parse(text).ok())
            .collect();
        Self {
            endpoints: Arc::new(endpoints),
        }
    }

    /// Whether the guest may look up `name` (only granted host names).
    pub(crate) fn may_look_up(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.');
        self.endpoints
            .iter()
            .any(|e| matches!(e, Endpoint::Name(host, _) if host.eq_ignore_ascii_case(name)))
    }

    /// Configures `builder`'s sockets: all off unless something is granted.
    pub(crate) fn configure(&self, builder: &mut WasiCtxBuilder) {
        let has_names = self
            .endpoints
            .iter()
            .any(|e| matches!(e, Endpoint::Name(..)));
        builder
            .allow_udp(false)
            .allow_tcp(!self.endpoints.is_empty())
            .allow_ip_name_lookup(has_names);
        let endpoints = Arc::clone(&self.endpoints);
        builder.socket_addr_check(move |addr, usage| check(Arc::clone(&endpoints), addr, usage));
    }
}

type Verdict = Pin<Box<dyn Future<Output = bool> + Send + Sync>>;

/// The socket address check wasmtime-wasi runs before every socket operation.
///
/// wasmtime-wasi checks the implicit bind to the unspecified address and
/// port 0 that precedes an unbound `connect` (and `listen`), so that one
/// bind is allowed; the `listen` after it is not. A connection to a granted
/// host name is allowed when `addr` is one of the name's current addresses.
fn check(endpoints: Arc<Vec<Endpoint>>, addr: SocketAddr, usage: SocketAddrUse) -> Verdict {
    Box::pin(async move {
        match usage {
            SocketAddrUse::TcpBind => addr.ip().is_unspecified() && addr.port() == 0,
            SocketAddrUse::TcpConnect => may_connect(&endpoints, addr).await,
            _ => false,
        }
    })
}

async fn may_connect(endpoints: &[Endpoint], addr: SocketAddr) -> bool {
    for endpoint in endpoints {
        match endpoint {
            Endpoint::Addr(allowed) if *allowed == addr => return true,
            Endpoint::Name(host, port) if *port == addr.port() => {
                let Ok(mut found) = tokio::net::lookup_host((host.as_str(), *port)).await else {
                    continue;
                };
                if found.any(|a| a.ip() == addr.ip()) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}
