//! [`NameResolver`]: how the host names of network grants are looked up.
//!
//! Lookups are asynchronous (hickory's resolver: no thread per lookup, no
//! pool shared with other calls), each is cut at the call's deadline (and
//! at most [`MAX_LOOKUP`]), and a call has at most [`LOOKUPS_AT_ONCE`] in
//! flight: a resolver that never answers delays only the calls that ask it,
//! and only until their deadlines.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{NameServerConfig, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use tokio::sync::Semaphore;

/// The longest one lookup may take, even with time left in its call.
pub(crate) const MAX_LOOKUP: Duration = Duration::from_secs(5);
/// How many lookups one call may have in flight at once.
pub(crate) const LOOKUPS_AT_ONCE: usize = 8;

/// Why a lookup gave no addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LookupFailure {
    /// The name has no addresses, or the resolver said so.
    Unresolvable,
    /// No answer in time (the call's deadline, or [`MAX_LOOKUP`]).
    TimedOut,
}

/// A spawned lookup, stopped when dropped.
struct Aborting<T>(tokio::task::JoinHandle<T>);

impl<T> std::future::Future for Aborting<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for Aborting<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Looks up host names: the system's resolver configuration, or the name
/// servers the operator gives.
#[derive(Clone)]
pub(crate) struct NameResolver {
    resolver: Option<Arc<TokioResolver>>,
}

impl std::fmt::Debug for NameResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NameResolver").finish_non_exhaustive()
    }
}

impl NameResolver {
    /// The system's configuration (`/etc/resolv.conf` and `/etc/hosts`);
    /// if it cannot be read, every lookup fails (and that is logged).
    pub(crate) fn system() -> Self {
        let resolver = TokioResolver::builder_tokio()
            .and_then(|builder| builder.build())
            .map_err(|e| tracing::warn!("cannot read the system's resolver configuration, so host names of network grants will not resolve: {e}"))
            .ok();
        Self {
            resolver: resolver.map(Arc::new),
        }
    }

    /// Name servers `servers` (UDP, then TCP), and `/etc/hosts`.
    pub(crate) fn with_servers(servers: &[SocketAddr]) -> Self {
        let name_servers = servers
            .iter()
            .map(|server| {
                let mut config = NameServerConfig::udp_and_tcp(server.ip());
                for connection in &mut config.connections {
                    connection.port = server.port();
                }
                config
            })
            .collect();
        let config = ResolverConfig::from_parts(None, Vec::new(), name_servers);
        let resolver = TokioResolver::builder_with_config(config, TokioRuntimeProvider::default())
            .build()
            .map_err(|e| tracing::warn!("cannot set up the name servers {servers:?}: {e}"))
            .ok();
        Self {
            resolver: resolver.map(Arc::new),
        }
    }

    /// The addresses of `name`, looked up by `deadline` at the latest,
    /// taking one of `slots` while it runs.
    ///
    /// The lookup runs as a task of the clock's runtime, stopped when this
    /// future is dropped (so when its call ends); the future itself is
    /// `Sync`, as wasmtime-wasi's socket checks require.
    pub(crate) async fn lookup(
        &self,
        name: &str,
        deadline: Instant,
        slots: &Arc<Semaphore>,
    ) -> Result<Vec<IpAddr>, LookupFailure> {
        let Some(resolver) = self.resolver.clone() else {
            return Err(LookupFailure::Unresolvable);
        };
        let until = deadline.min(Instant::now() + MAX_LOOKUP);
        let (name, slots) = (name.to_string(), Arc::clone(slots));
        let task = Aborting(tokio::spawn(async move {
            let _slot = slots.acquire().await;
            resolver
                .lookup_ip(name.as_str())
                .await
                .map(|found| found.iter().collect::<Vec<_>>())
        }));
        match tokio::time::timeout_at(until.into(), task).await {
            Err(_) => Err(LookupFailure::TimedOut),
            Ok(Ok(Ok(found))) => Ok(found),
            Ok(_) => Err(LookupFailure::Unresolvable),
        }
    }
}
