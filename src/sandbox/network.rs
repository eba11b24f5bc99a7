//! The socket policy of one call: outbound TCP to the granted endpoints,
//! and nothing else.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::Semaphore;
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::sockets::SocketAddrUse;

use super::deadline::Deadline;
use super::resolver::NameResolver;
use crate::policy::{Access, Endpoint};

/// What the connect check needs to look up a granted host name: the
/// resolver, the call's deadline and its lookup slots.
#[derive(Clone)]
pub(super) struct ConnectChecks {
    pub resolver: NameResolver,
    pub deadline: Deadline,
    pub lookups: Arc<Semaphore>,
}

/// Configures `builder`'s sockets from `access`: all off unless an endpoint
/// is granted; then TCP only, no listening, no UDP, no bind but to the
/// unspecified address and port 0 (what `connect` does implicitly), and name
/// lookups only when a host name is granted (the linker's override of
/// `resolve-addresses` then allows only those names).
pub(super) fn configure(access: &Arc<Access>, checks: ConnectChecks, builder: &mut WasiCtxBuilder) {
    builder
        .allow_udp(false)
        .allow_tcp(!access.endpoints.is_empty())
        .allow_ip_name_lookup(access.grants_names());
    let access = Arc::clone(access);
    builder.socket_addr_check(move |addr, usage| {
        check(Arc::clone(&access), checks.clone(), addr, usage)
    });
}

type Verdict = Pin<Box<dyn Future<Output = bool> + Send + Sync>>;

/// The socket address check wasmtime-wasi runs before every socket operation.
///
/// wasmtime-wasi checks the implicit bind to the unspecified address and
/// port 0 that precedes an unbound `connect` (and `listen`), so that one
/// bind is allowed; the `listen` after it is not. A connection to a granted
/// host name is allowed when `addr` is one of the name's current addresses.
fn check(
    access: Arc<Access>,
    checks: ConnectChecks,
    addr: SocketAddr,
    usage: SocketAddrUse,
) -> Verdict {
    Box::pin(async move {
        match usage {
            SocketAddrUse::TcpBind => addr.ip().is_unspecified() && addr.port() == 0,
            SocketAddrUse::TcpConnect => may_connect(&access.endpoints, &checks, addr).await,
            _ => false,
        }
    })
}

async fn may_connect(endpoints: &[Endpoint], checks: &ConnectChecks, addr: SocketAddr) -> bool {
    for endpoint in endpoints {
        match endpoint {
            Endpoint::Addr(allowed) if *allowed == addr => return true,
            Endpoint::Name(host, port) if *port == addr.port() => {
                let found = checks
                    .resolver
                    .lookup(host, checks.deadline.get(), &checks.lookups)
                    .await;
                if found.is_ok_and(|found| found.contains(&addr.ip())) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}
