//! [`CallThreads`]: the threads tool calls go on computing on, apart from
//! the threads that read requests and write answers.
//!
//! A guest that computes holds its thread until the next epoch tick
//! (10 ms). On threads shared with the server's input and output, 64 such
//! calls kept a "busy" answer, `/healthz` or a cancellation waiting behind
//! them for about a second. So a call starts where its request arrived
//! (most calls end there, with no hop between threads) and moves to threads
//! of its own the first time it waits: when its guest's time slice ends, or
//! it waits for anything else.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::runtime::{Builder, Runtime};
use tokio::task::{JoinError, JoinHandle};

/// A pool of threads that run tool calls.
pub(crate) struct CallThreads {
    runtime: Option<Runtime>,
}

impl CallThreads {
    /// One thread per CPU the process may use.
    pub(crate) fn new() -> anyhow::Result<Self> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let runtime = Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("toolhost-call")
            .enable_all()
            .build()
            .map_err(|e| anyhow::anyhow!("cannot start the threads tool calls run on: {e}"))?;
        Ok(Self {
            runtime: Some(runtime),
        })
    }

    /// Runs `call`: its first step here, the rest (if it does not end in
    /// its first step) on these threads. Dropping the returned future stops
    /// the call at its next yield.
    pub(crate) async fn run<F>(&self, call: F) -> Result<F::Output, JoinError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let mut call = Box::pin(call);
        let first = std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await;
        match first {
            Poll::Ready(output) => Ok(output),
            Poll::Pending => Stopping(self.spawn(call)).await,
        }
    }

    fn spawn<F>(&self, call: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.runtime {
            Some(runtime) => runtime.spawn(call),
            None => tokio::spawn(call),
        }
    }
}

/// A task that is stopped when its handle is dropped.
struct Stopping<T>(JoinHandle<T>);

impl<T> Future for Stopping<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for Stopping<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Drop for CallThreads {
    fn drop(&mut self) {
        // Never block (or panic) when dropped inside async code.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_that_ends_at_once_stays_and_one_that_waits_moves() {
        let threads = CallThreads::new().expect("threads");
        let here = std::thread::current().id();
        let quick = threads.run(async move { std::thread::current().id() });
        assert_eq!(quick.await.expect("quick call"), here);
        let waiting = threads.run(async {
            tokio::task::yield_now().await;
            std::thread::current().name().map(str::to_string)
        });
        let name = waiting.await.expect("waiting call");
        assert_eq!(name.as_deref(), Some("toolhost-call"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_a_moved_call_stops_it() {
        let threads = CallThreads::new().expect("threads");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let call = threads.run(async move {
            tokio::task::yield_now().await;
            let _keep = tx;
            std::future::pending::<()>().await;
        });
        let _ = tokio::time::timeout(std::time::Duration::from_millis(50), call).await;
        // The task was aborted: its sender is dropped, so the receiver ends.
        assert!(rx.await.is_err());
    }
}
