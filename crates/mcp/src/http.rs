//! Streamable HTTP at `/mcp`, with `GET /healthz` and `GET /metrics`:
//! bearer-token authentication, `Host` and `Origin` checks, bounded bodies,
//! headers and requests in flight, and a drain on SIGTERM.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http_body::{Frame, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::handler::ToolhostServer;
use crate::state::Served;

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

/// The largest request head (request line and headers) read, in bytes;
/// a longer one closes the connection.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The most headers a request may have.
const MAX_HEADERS: usize = 100;

/// What every request's checks need.
struct Gate {
    token: Option<String>,
    requests: Arc<Semaphore>,
}

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
    let router = router(&served, &options, sessions.clone());
    let settings = &served.settings;
    let header_timeout = Duration::from_millis(settings.header_timeout_ms);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, _) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("cannot accept a connection: {e}");
                    continue;
                }
            },
        };
        // Answers are written in pieces (head, then events): without this,
        // Nagle's algorithm holds the last piece for the client's delayed ACK.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
        let service = TowerToHyperService::new(router.clone());
        let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
        let connection = graceful.watch(connection.into_owned());
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended: {e}");
            }
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

/// Waits for the calls in flight, up to `drain_timeout_ms`.
pub(crate) async fn drain(served: &Served) {
    let timeout = Duration::from_millis(served.settings.drain_timeout_ms);
    tracing::info!("stopping: waiting for the calls in flight");
    if tokio::time::timeout(timeout, served.drain()).await.is_err() {
        tracing::warn!("calls still running after the drain timeout; exiting anyway");
    }
}

fn router(served: &Arc<Served>, options: &HttpOptions, sessions: CancellationToken) -> Router {
    let settings = &served.settings;
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
    // Requests from a browser carry an Origin: refused unless it is listed.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(settings.allowed_origins.clone())
        .enforce_origin_validation()
        .with_sse_keep_alive(Some(KEEP_ALIVE))
        .with_max_request_body_bytes(
            usize::try_from(settings.max_request_bytes).unwrap_or(usize::MAX),
        )
        .with_cancellation_token(sessions);
    let mcp_served = Arc::clone(served);
    let mcp = StreamableHttpService::new(
        move || Ok(ToolhostServer::new(Arc::clone(&mcp_served))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let gate = Arc::new(Gate {
        token: options.token.clone(),
        requests: Arc::new(Semaphore::new(
            usize::try_from(settings.max_requests_in_flight)
                .unwrap_or(usize::MAX)
                .min(Semaphore::MAX_PERMITS),
        )),
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
        .layer(middleware::from_fn_with_state(Arc::clone(&gate), check));
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .merge(guarded)
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

/// Every request to `/mcp` and `/metrics`: the bearer token (when one is
/// set), then a place among the requests in flight, held until the
/// response (an event stream, perhaps) has been sent or dropped.
async fn check(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if let Some(token) = &gate.token
        && !authorized(&request, token)
    {
        return unauthorized();
    }
    let Ok(place) = Arc::clone(&gate.requests).try_acquire_owned() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many requests in flight (serve.max_requests_in_flight); try again shortly\n",
        )
            .into_response();
    };
    let ends_session = request.method() == Method::DELETE;
    let json_body = is_json(&request);
    let response = next.run(request).await;
    if ends_session && response.status() == StatusCode::ACCEPTED {
        // The session is gone: say so as clients expect (200 or 204).
        return StatusCode::NO_CONTENT.into_response();
    }
    if json_body && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        // rmcp's answer to a JSON body that is not a JSON-RPC message.
        return parse_error();
    }
    response.map(|body| {
        Body::new(Held {
            body,
            _place: place,
        })
    })
}

/// Whether `request` says its body is JSON.
fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// 400 with the JSON-RPC parse error.
fn parse_error() -> Response {
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the request body is not a JSON-RPC message"}}"#;
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// A response body that holds its request's place among the requests in
/// flight until it is dropped.
struct Held {
    body: Body,
    _place: OwnedSemaphorePermit,
}

impl HttpBody for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Whether `request` carries `Authorization: Bearer <token>` (compared in
/// constant time).
fn authorized(request: &Request, token: &str) -> bool {
    let Some(given) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

fn unauthorized() -> Response {
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header(
            header::WWW_AUTHENTICATE,
            "Bearer realm=\"toolhost\", error=\"invalid_token\"",
        )
        .body(Body::from("a valid bearer token is required\n"))
        .unwrap_or_else(|_| StatusCode::UNAUTHORIZED.into_response())
}
