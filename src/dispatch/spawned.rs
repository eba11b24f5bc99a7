//! Running a call as a task of the caller's tokio runtime, aborted if its
//! answer is no longer awaited.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use crate::tool::{ToolError, ToolErrorKind};

/// What a call gives: its answer or the error it ended in.
type Outcome = Result<String, ToolError>;

/// A call's outcome: awaited in place, or from a task of `runtime`.
pub(super) type Running = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// `call` spawned on `runtime` if there is one (so calls use its worker
/// threads in parallel), else `call` itself.
pub(super) fn on<F>(runtime: Option<&Handle>, call: F) -> Running
where
    F: Future<Output = Outcome> + Send + 'static,
{
    match runtime {
        Some(runtime) => Box::pin(AbortOnDrop(runtime.spawn(call))),
        None => Box::pin(call),
    }
}

/// A spawned call that is aborted (ending its sandboxed call) when dropped.
struct AbortOnDrop(JoinHandle<Outcome>);

impl Future for AbortOnDrop {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        Pin::new(&mut self.0).poll(cx).map(|joined| {
            joined.unwrap_or_else(|e| {
                Err(ToolError::new(
                    ToolErrorKind::Host,
                    format!("the call could not be run: {e}"),
                ))
            })
        })
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
