//! [`CallThreads`]: the threads tool calls run on, apart from the threads
//! that read requests and write answers.
//!
//! A guest that computes holds its thread until the next epoch tick
//! (10 ms). On threads shared with the server's input and output, 64 such
//! calls kept a "busy" answer, `/healthz` or a cancellation waiting behind
//! them for about a second; on threads of their own they cannot.

use std::future::Future;

use tokio::runtime::{Builder, Runtime};
use tokio::task::JoinHandle;

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

    /// Runs `call` on these threads; dropping (or aborting) the handle's
    /// task stops it at its next yield.
    pub(crate) fn spawn<F>(&self, call: F) -> JoinHandle<F::Output>
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

impl Drop for CallThreads {
    fn drop(&mut self) {
        // Never block (or panic) when dropped inside async code.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
