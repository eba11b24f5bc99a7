//! [`Background`]: work taken off the callers' path (making instances ahead
//! of calls, dropping used ones), run on a thread of its own.
//!
//! Waking a sleeping thread costs the waker a system call and, in a virtual
//! machine, an interrupt to another CPU: several microseconds, more than a
//! small tool's whole call. So work is handed over in two ways:
//!
//! - [`Background::soon`]: queued without waking anyone. The thread is
//!   woken for it when a thread of the caller's goes idle
//!   ([`Background::flush`], from a runtime's park hook), or at the clock's
//!   next tick (at most [`EPOCH_TICK`](super::EPOCH_TICK) away), so a
//!   caller that is not in a hurry pays only a lock and a push.
//! - [`Background::now`]: queued, and the thread woken at once (if it
//!   sleeps), for work that a caller will soon wait for.
//!
//! After its last job the thread lingers a little ([`LINGER`]) before it
//! sleeps, looking for new jobs between yields: a burst of calls (a rollout,
//! a batch) then hands it `soon` jobs that it takes up at once, without a
//! wake, and an idle host costs nothing.
//!
//! Each job is a future, run as a task of the thread's own single-threaded
//! runtime (with its own timers and I/O), so a job that waits (or a guest
//! that yields at an epoch tick) lets the others go on. The thread ends when
//! the last handle is dropped.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// How long the thread goes on looking for new jobs after the last one
/// before it sleeps until woken.
const LINGER: Duration = Duration::from_micros(200);

/// One piece of background work.
type Job = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A handle to the background thread; cheap to clone.
#[derive(Clone)]
pub(crate) struct Background {
    shared: Arc<Shared>,
}

/// The queue, held by the handles only: when the last goes, so does the
/// queue, and the thread is told.
struct Shared {
    queue: Mutex<VecDeque<Job>>,
    /// Whether jobs are queued that nobody woke the thread for.
    waiting: AtomicBool,
    /// Wakes the thread (which holds it too).
    wake: Arc<Notify>,
}

/// What the clock keeps to wake the thread at its ticks.
pub(crate) struct BackgroundTicker {
    shared: Weak<Shared>,
}

impl Background {
    /// Starts the thread. Its runtime has timers and I/O of its own, so its
    /// jobs never depend on another runtime being alive.
    pub(crate) fn start() -> std::io::Result<Self> {
        let wake = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            waiting: AtomicBool::new(false),
            wake: Arc::clone(&wake),
        });
        let queue = Arc::downgrade(&shared);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new()
            .name("toolhost-background".into())
            .spawn(move || runtime.block_on(pump(queue, wake)))?;
        Ok(Self { shared })
    }

    /// What the clock calls at every tick.
    pub(crate) fn ticker(&self) -> BackgroundTicker {
        BackgroundTicker {
            shared: Arc::downgrade(&self.shared),
        }
    }

    /// Runs `job` by the next clock tick, without waking the thread now.
    pub(crate) fn soon(&self, job: impl Future<Output = ()> + Send + 'static) {
        self.shared.lock().push_back(Box::pin(job));
        self.shared.waiting.store(true, Ordering::Release);
    }

    /// Runs `job` as soon as the thread gets to it, waking it if it sleeps.
    pub(crate) fn now(&self, job: impl Future<Output = ()> + Send + 'static) {
        self.shared.lock().push_back(Box::pin(job));
        self.shared.wake.notify_one();
    }
}

impl Background {
    /// Wakes the thread if jobs wait for it (cheap when none do).
    pub(crate) fn flush(&self) {
        self.shared.flush();
    }
}

impl BackgroundTicker {
    /// Wakes the thread if jobs wait for it; `false` once it is gone.
    pub(crate) fn tick(&self) -> bool {
        let Some(shared) = self.shared.upgrade() else {
            return false;
        };
        shared.flush();
        true
    }
}

impl Shared {
    fn flush(&self) {
        if self.waiting.load(Ordering::Acquire) && self.waiting.swap(false, Ordering::AcqRel) {
            self.wake.notify_one();
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<Job>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The last handle is gone: the thread finds the queue gone and ends.
        self.wake.notify_one();
    }
}

/// Whenever woken, starts every queued job as a task; ends when the queue
/// is gone, dropping the jobs still running (a job only makes or drops
/// instances, and dropping it drops what it holds).
async fn pump(queue: Weak<Shared>, wake: Arc<Notify>) {
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let jobs: Vec<Job> = match queue.upgrade() {
            Some(shared) => shared.lock().drain(..).collect(),
            None => break,
        };
        for job in jobs {
            tasks.spawn(job);
        }
        // Reap the finished ones, so that the set does not grow.
        while tasks.try_join_next().is_some() {}
        if !linger(&queue).await {
            wake.notified().await;
        }
    }
    tasks.abort_all();
}

/// Lets the running jobs go on for up to [`LINGER`], looking for new ones
/// between yields; `true` as soon as there are some (or the queue is gone).
async fn linger(queue: &Weak<Shared>) -> bool {
    let until = Instant::now() + LINGER;
    while Instant::now() < until {
        tokio::task::yield_now().await;
        let Some(shared) = queue.upgrade() else {
            return true;
        };
        if shared.waiting.swap(false, Ordering::AcqRel) || !shared.lock().is_empty() {
            return true;
        }
        drop(shared);
        // Let a runnable thread have this core first.
        std::thread::yield_now();
    }
    false
}
