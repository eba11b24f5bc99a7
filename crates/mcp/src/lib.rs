//! toolhost's tool modules as a Model Context Protocol server, built on the
//! `toolhost` library and the official Rust SDK, `rmcp`.
//!
//! - Transports: stdio ([`serve_stdio`]) and streamable HTTP at `/mcp`
//!   ([`serve_http`]), protocol versions 2026-07-28 (stateless) and
//!   2025-11-25 (initialize and sessions), negotiated by `rmcp`.
//! - `tools/list` gives the active tools in the config's order, in pages;
//!   `tools/call` runs a tool in a fresh sandbox, concurrently, at most
//!   `[serve] max_calls_in_flight` at once; every failure is a result with
//!   `isError` and the library's `Error: ...` text. A cancelled request (or
//!   a closed HTTP response) stops its call. What a tool writes to stderr
//!   goes to the client as log entries while it runs, and a call with a
//!   `progressToken` reports progress until it ends. A client that declares
//!   the Tasks extension gets a task for each call, polled with `tasks/get`
//!   and stopped with `tasks/cancel`.
//! - Modules that fail to load are reported and left out; the config and
//!   module files are watched (and SIGHUP reloads), and a new set is swapped
//!   in whole, with `list_changed` sent to clients.
//!
//! The layout: the tools as MCP lists them (`catalog.rs`), the shared state
//! and its swap (`state.rs`), a tool's stderr as log entries for the client
//! (`client_log.rs`), progress while a call runs (`progress.rs`), calls
//! answered with a task (`tasks.rs`), the handler (`handler.rs`), loading and reloading (`reload.rs`), HTTP
//! (`http/`), metrics (`metrics.rs`).
//!
//! Its tests are in `crates/cli/tests/mcp/`: they drive `toolhost serve`
//! (this crate behind the command) with the official MCP clients, agent
//! frameworks and raw JSON-RPC and HTTP.

#![warn(missing_docs)]

mod arguments;
mod backpressure;
mod calls;
mod catalog;
mod client_log;
mod handler;
mod http;
mod metrics;
mod progress;
mod reload;
mod state;
mod tasks;

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio_util::sync::CancellationToken;

pub use handler::ToolhostServer;
pub use http::HttpOptions;
pub use reload::{Overrides, Source};

use arguments::stdio::{Intercepted, RawCalls};
use backpressure::Backpressured;
use reload::log_failures;
use state::Served;

/// Over stdio, requests read and not answered yet, beyond
/// `max_calls_in_flight`, before the server stops reading.
const UNANSWERED_BEYOND_CALLS: usize = 64;

/// On SIGTERM over stdio, how long the last answers may take to be written
/// after the drain (the session ends sooner if the client closes stdin).
const STDIO_ANSWER_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// Loads the modules of `source` (going on past those that fail, which are
/// logged) and the server's state, with the config's `[serve]` settings.
fn start(source: &Source) -> anyhow::Result<(Arc<Served>, toolhost::config::LoadedConfig)> {
    let load = source.load(&[])?;
    log_failures(&load.failures);
    let settings = load.config.config.serve.clone();
    tracing::info!(
        modules = load.tools.modules.len(),
        tools = load.tools.catalog.len(),
        "loaded"
    );
    Ok((Served::new(load.tools, settings)?, load.config))
}

/// Starts watching `source` for changes, reloading into `served`: the
/// watch is in place when this returns, and ends when the returned token is
/// cancelled.
fn watch(
    served: &Arc<Served>,
    source: Source,
    config: toolhost::config::LoadedConfig,
) -> CancellationToken {
    let stop = CancellationToken::new();
    let watching = reload::Watching::start(Arc::clone(served), Arc::new(source), config, &stop);
    tokio::spawn(watching.run(stop.clone()));
    stop
}

/// Serves the tools of `source` over stdio (stdout carries the protocol;
/// logs go to stderr) until the client closes stdin, or SIGTERM (calls in
/// flight may finish, up to `[serve] drain_timeout_ms`).
pub async fn serve_stdio(source: Source) -> anyhow::Result<()> {
    let (served, config) = start(&source)?;
    let stop = watch(&served, source, config);
    // Pipes (as MCP clients launch servers) go through the IO reactor, not a
    // blocking thread per read.
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let max_line = usize::try_from(served.settings.max_request_bytes).unwrap_or(usize::MAX);
    let calls = usize::try_from(served.settings.max_calls_in_flight).unwrap_or(usize::MAX);
    let unanswered = calls.saturating_add(UNANSWERED_BEYOND_CALLS);
    // Each call's arguments reach its tool as the client wrote them.
    let raw_calls = RawCalls::new(unanswered.saturating_mul(2));
    let stdin = Intercepted::new(stdin, Arc::clone(&raw_calls), max_line);
    // The connection is one session: its calls share state in modules with
    // sessions on, until it ends.
    let session = toolhost::SessionId::new();
    let server = ToolhostServer::with_raw_calls(Arc::clone(&served), raw_calls, session.clone());
    // A longer line is dropped (and logged) unread; the session goes on.
    let transport = AsyncRwTransport::new(stdin, stdout).with_max_line_length(max_line);
    // Answers the client does not read stop the reading of its requests.
    let transport = Backpressured::new(transport, unanswered);
    let running = server
        .serve(transport)
        .await
        .map_err(|e| anyhow::anyhow!("cannot start the MCP session on stdio: {e}"))?;
    // The session runs on its own task; `waiting` only watches it, so the
    // calls go on while the drain waits for them.
    let waiting = running.waiting();
    tokio::pin!(waiting);
    let result = tokio::select! {
        ended = &mut waiting => ended.map(|_| ()).map_err(anyhow::Error::from),
        () = terminated() => {
            http::drain(&served).await;
            // Let the answers of the last calls be written before the
            // session ends.
            let _ = tokio::time::timeout(STDIO_ANSWER_GRACE, &mut waiting).await;
            Ok(())
        }
    };
    stop.cancel();
    served.tools().manager.end_session(&session);
    result
}

/// Serves the tools of `source` over streamable HTTP until SIGTERM (or
/// SIGINT), then drains the calls in flight.
pub async fn serve_http(source: Source, options: HttpOptions) -> anyhow::Result<()> {
    let (served, config) = start(&source)?;
    let stop = watch(&served, source, config);
    let stopping = stop.clone();
    tokio::spawn(async move {
        terminated().await;
        stopping.cancel();
    });
    http::serve(served, options, stop).await
}

/// Resolves on SIGTERM or SIGINT.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            std::future::pending::<()>().await;
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
