//! The socket policy of one call: outbound TCP to the granted endpoints,
//! and nothing else.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::sockets::SocketAddrUse;

use crate::policy::{Access, Endpoint};

/// Configures `builder`'s sockets from `access`: all off unless an endpoint
/// is granted; then TCP only, no listening, no UDP, no bind but to the
/// unspecified address and port 0 (what `connect` does implicitly), and name
/// lookups only when a host name is granted (the linker's override of
/// `resolve-addresses` then allows only those names).
pub(super) fn configure(access: &Arc<Access>, builder: &mut WasiCtxBuilder) {
    builder
        .allow_udp(false)
        .allow_tcp(!access.endpoints.is_empty())
        .allow_ip_name_lookup(access.grants_names());
    let access = Arc::clone(access);
    builder.socket_addr_check(move |addr, usage| check(Arc::clone(&access), addr, usage));
}

type Verdict = Pin<Box<dyn Future<Output = bool> + Send + Sync>>;

/// The socket address check wasmtime-wasi runs before every socket operation.
///
/// wasmtime-wasi checks the implicit bind to the unspecified address and
/// port 0 that precedes an unbound `connect` (and `listen`), so that one
/// bind is allowed; the `listen` after it is not. A connection to a granted
/// host name is allowed when `addr` is one of the name's current addresses.
fn check(access: Arc<Access>, addr: SocketAddr, usage: SocketAddrUse) -> Verdict {
    Box::pin(async move {
        match usage {
            SocketAddrUse::TcpBind => addr.ip().is_unspecified() && addr.port() == 0,
            SocketAddrUse::TcpConnect => may_connect(&access.endpoints, addr).await,
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
