//! Streamable HTTP at `/mcp`, with `GET /healthz` and `GET /metrics`, over
//! HTTP/1.1 only.
//!
//! The parts: accepting connections within `max_connections`
//! (`listen.rs`), the `Host` and `Origin` allow-lists (`authority.rs`), and
//! the checks of every request: token, requests in flight, body size and
//! time (`gate.rs`). Each connection must send each request head within
//! `header_timeout_ms` of being accepted or of its previous answer,
//! whatever bytes it sends (an HTTP/2 preface ends it at once); a
//! connection that sends nothing is closed then.

mod authority;
mod gate;
mod listen;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::handler::ToolhostServer;
use crate::state::Served;
use authority::{Hosts, Origins, own_origins};
use gate::Gate;
use listen::Listener;
use sessions::Sessions;

/// After the drain, how long responses may take to be sent before open
/// event streams are ended.
const ANSWER_GRACE: Duration = Duration::from_millis(500);

/// How long SSE streams are kept alive with comments, when idle.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How `serve --http` listens.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// The bearer token clients must send, if any (required off loopback).
    pub token: Option<String>,
}

/// The largest request head (request line and headers), in bytes: a
/// longer one gets 431 (or, if it is still arriving, the connection is
/// closed).
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The most headers a request may have.
const MAX_HEADERS: usize = 100;

/// Serves `served` over HTTP until `stop` is cancelled, then drains.
pub(crate) async fn serve(
    served: Arc<Served>,
    options: HttpOptions,
    stop: CancellationToken,
) -> anyhow::Result<()> {
    if !options.addr.ip().is_loopback() && options.token.is_none() {
        anyhow::bail!(
            "serving on {} (not a loopback address) needs a bearer token: give --token-file FILE \
             or set TOOLHOST_TOKEN",
            options.addr
        );
    }
    let listener = TcpListener::bind(options.addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", options.addr))?;
    let local = listener.local_addr()?;
    tracing::info!(address = %local, "serving MCP over HTTP at /mcp");
    // Tell whoever started us where we listen (port 0 asks for any port).
    eprintln!("toolhost: serving MCP at http://{local}/mcp");

    let sessions = CancellationToken::new();
    let router = router(&served, &options, local, sessions.clone());
    let settings = &served.settings;
    let mut listener = Listener::new(listener, connection_bound(settings.max_connections));
    let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        // From the moment a connection is accepted, and again after each
        // answer: the next request head must be in within this time.
        .header_read_timeout(Duration::from_millis(settings.header_timeout_ms))
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept(&served.metrics) => accepted,
        };
        // Answers are written in pieces (head, then events): without this,
        // Nagle's algorithm holds the last piece for the client's delayed ACK.
        if let Err(e) = accepted.stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
        let service = TowerToHyperService::new(router.clone());
        let connection = builder.serve_connection(TokioIo::new(accepted.stream), service);
        let connection = graceful.watch(connection.into_owned());
        let place = accepted.place;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended: {e}");
            }
            drop(place);
        });
    }
    drop(listener);
    drain(&served).await;
    // The last calls' answers may still be on their way out: let every
    // connection finish its response, then end the event streams that only
    // wait for notifications (they would never finish on their own).
    let shutdown = graceful.shutdown();
    tokio::pin!(shutdown);
    if tokio::time::timeout(ANSWER_GRACE, &mut shutdown)
        .await
        .is_err()
    {
        sessions.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(1), shutdown).await;
    }
    Ok(())
}

/// `max_connections`, or half the process's limit on open files if that is
/// less (calls open files too), with a warning.
fn connection_bound(max_connections: u64) -> usize {
    let bound = match toolhost::open_file_limit() {
        Some(limit) if max_connections > limit / 2 => {
            tracing::warn!(
                "serve.max_connections is {max_connections}, more than half the process's limit \
                 on open files ({limit}); at most {} connections will be open at once",
                limit / 2
            );
            limit / 2
        }
        _ => max_connections,
    };
    usize::try_from(bound).unwrap_or(usize::MAX)
}

/// Waits for the calls in flight, up to `drain_timeout_ms`.
pub(crate) async fn drain(served: &Served) {
    let timeout = Duration::from_millis(served.settings.drain_timeout_ms);
    tracing::info!("stopping: waiting for the calls in flight");
    if tokio::time::timeout(timeout, served.drain()).await.is_err() {
        tracing::warn!("calls still running after the drain timeout; exiting anyway");
    }
}

/// The routes of a server listening at `local`.
fn router(
    served: &Arc<Served>,
    options: &HttpOptions,
    local: SocketAddr,
    sessions: CancellationToken,
) -> Router {
    let settings = &served.settings;
    // A loopback server's own origin, and those the config allows.
    let mut origins = own_origins(local);
    origins.extend(settings.allowed_origins.iter().cloned());
    let mut hosts: Vec<String> = if settings.allowed_hosts.is_empty() {
        vec![
            "localhost".into(),
            "127.0.0.1".into(),
            "::1".into(),
            "[::1]".into(),
        ]
    } else {
        settings.allowed_hosts.clone()
    };
    if options.addr.ip().is_unspecified() && settings.allowed_hosts.is_empty() {
        // Listening on every address with no names given: accept any Host
        // (the token is what guards it).
        hosts.clear();
    }
    let max_body_bytes = usize::try_from(settings.max_request_bytes).unwrap_or(usize::MAX);
    // rmcp checks Host and Origin too: the same lists.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins.clone())
        .enforce_origin_validation()
        .with_sse_keep_alive(Some(KEEP_ALIVE))
        .with_max_request_body_bytes(max_body_bytes)
        .with_cancellation_token(sessions);
    let sessions = Arc::new(Sessions::new(
        Arc::clone(served),
        usize::try_from(settings.max_sessions).unwrap_or(usize::MAX),
        Duration::from_millis(settings.session_idle_ms),
    ));
    tokio::spawn(sweep(Arc::downgrade(&sessions)));
    let mcp_served = Arc::clone(served);
    let mcp = StreamableHttpService::new(
        move || Ok(ToolhostServer::new(Arc::clone(&mcp_served))),
        sessions,
        config,
    );
    let gate = Arc::new(Gate {
        token: options.token.clone(),
        requests: Arc::new(Semaphore::new(
            usize::try_from(settings.max_requests_in_flight)
                .unwrap_or(usize::MAX)
                .min(Semaphore::MAX_PERMITS),
        )),
        hosts: Hosts::new(&hosts),
        origins: Origins::new(&origins),
        max_body_bytes,
        body_timeout: Duration::from_millis(settings.body_timeout_ms),
    });
    let metrics_served = Arc::clone(served);
    let guarded = Router::new()
        .nest_service("/mcp", mcp)
        .route(
            "/metrics",
            get(move || {
                let served = Arc::clone(&metrics_served);
                async move { metrics(&served) }
            }),
        )
        .layer(middleware::from_fn_with_state(
            Arc::clone(&gate),
            gate::guard,
        ));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(guarded)
        .layer(middleware::from_fn_with_state(gate, gate::screen))
}

/// Closes expired sessions now and then, until the server is gone.
async fn sweep(sessions: std::sync::Weak<Sessions>) {
    loop {
        let Some(every) = sessions.upgrade().map(|s| s.sweep_every()) else {
            return;
        };
        tokio::time::sleep(every).await;
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        sessions.sweep(0).await;
    }
}

/// `GET /metrics`, in the Prometheus text format.
fn metrics(served: &Served) -> Response {
    let mut response = served.metrics.encode().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}
