//! [`Clock`]: the background thread that advances the engines' epoch and
//! drives the timers and sockets of every call.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tokio::runtime::{Handle, RuntimeFlavor};
use wasmtime::Engine;

use super::background::BackgroundTicker;

/// How often the engines' epoch advances; the resolution of time limits.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// A small tokio runtime of toolhost's own (one worker thread).
///
/// Its worker advances every engine's epoch each [`EPOCH_TICK`], and its
/// drivers serve the timers and sockets of calls, wherever those calls are
/// polled: a call runs on the caller's thread (or the caller's async task),
/// entering this runtime's context only so that what it registers is driven
/// here. The work stops when the clock is dropped.
pub(crate) struct Clock {
    handle: Handle,
    /// Owned here so that dropping the clock stops it; `None` once dropped.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Clock {
    /// Starts the clock; it advances the epoch of the engines in `engines`
    /// until they are gone.
    pub(crate) fn start(engines: Weak<Mutex<Vec<Engine>>>) -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolhost-clock")
            .enable_time()
            .enable_io()
            .build()?;
        runtime.spawn(async move {
            let mut interval = tokio::time::interval(EPOCH_TICK);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                let Some(engines) = engines.upgrade() else {
                    return;
                };
                let engines = engines.lock().unwrap_or_else(PoisonError::into_inner);
                for engine in engines.iter() {
                    engine.increment_epoch();
                }
            }
        });
        Ok(Self {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        })
    }

    /// Wakes the background thread of `ticker` at every tick while jobs
    /// wait for it (see [`Background::soon`](super::Background::soon)).
    pub(crate) fn tick_background(&self, ticker: BackgroundTicker) {
        self.handle.spawn(async move {
            let mut interval = tokio::time::interval(EPOCH_TICK);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                if !ticker.tick() {
                    return;
                }
            }
        });
    }

    /// `future`, polled wherever the caller polls it, with this clock's
    /// context entered during each poll (so its timers and sockets are
    /// driven by the clock, whatever runtime, if any, the caller uses).
    pub(crate) fn drive<F: Future>(&self, future: F) -> Driven<F> {
        Driven {
            handle: self.handle.clone(),
            future: Box::pin(future),
        }
    }

    /// Runs `future` to completion on the calling thread.
    ///
    /// Inside a multi-threaded tokio runtime the worker is handed over to
    /// the runtime's other tasks while this one blocks (`block_in_place`);
    /// inside a current-thread runtime, which cannot do that, the work moves
    /// to a scoped thread.
    pub(crate) fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let handle = &self.handle;
        match Handle::try_current() {
            Err(_) => {
                let _entered = handle.enter();
                park_on(future)
            }
            Ok(current) if current.runtime_flavor() == RuntimeFlavor::CurrentThread => {
                std::thread::scope(|s| {
                    s.spawn(|| handle.block_on(future))
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p))
                })
            }
            Ok(_) => tokio::task::block_in_place(|| handle.block_on(future)),
        }
    }
}

/// Polls `future` on the calling thread until it is ready, parking the
/// thread while it waits to be woken. Lighter than a runtime's `block_on`
/// for a call that is usually ready at its first poll.
fn park_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::park();
    }
}

/// A waker that unparks the thread that waits in [`park_on`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        // Never block (or panic) when dropped inside async code.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A future run in a [`Clock`]'s context; see [`Clock::drive`].
pub(crate) struct Driven<F> {
    handle: Handle,
    future: Pin<Box<F>>,
}

impl<F: Future> Future for Driven<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let _entered = this.handle.enter();
        this.future.as_mut().poll(cx)
    }
}
