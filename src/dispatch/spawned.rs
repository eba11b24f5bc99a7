//! Running a call as a task of the caller's tokio runtime, aborted if its
//! answer is no longer awaited.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// A call's answer: awaited in place, or from a task of `runtime`.
pub(super) type Answer = Pin<Box<dyn Future<Output = String> + Send>>;

/// `call` spawned on `runtime` if there is one (so calls use its worker
/// threads in parallel), else `call` itself.
pub(super) fn on<F>(runtime: Option<&Handle>, call: F) -> Answer
where
    F: Future<Output = String> + Send + 'static,
{
    match runtime {
        Some(runtime) => Box::pin(AbortOnDrop(runtime.spawn(call))),
        None => Box::pin(call),
    }
}

/// A spawned call that is aborted (ending its sandboxed call) when dropped.
struct AbortOnDrop(JoinHandle<String>);

impl Future for AbortOnDrop {
    type Output = String;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<String> {
        Pin::new(&mut self.0).poll(cx).map(|joined| {
            joined.unwrap_or_else(|e| format!("Error: the call could not be run: {e}"))
        })
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
