//! [`Disposal`]: used stores dropped off the callers' path, in the
//! background, bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use wasmtime::Store;

use super::state::CallState;
use crate::engine::{Background, PoolConfig};

/// Stores dropped off the callers' path, shared by every module of a
/// runtime.
pub(crate) struct Disposal {
    background: Background,
    /// Stores waiting to be dropped.
    pending: Arc<AtomicUsize>,
}

/// Past this many stores waiting, the thread is woken to drop them.
const URGENT_DROPS: usize = 8;
/// Past this many, a caller drops its own: a background that cannot keep
/// up makes calls slower, never memory grow.
const MAX_PENDING_DROPS: usize = PoolConfig::MAX_STORES_AWAITING_DROP as usize;

impl Disposal {
    /// Stores dropped on `background`.
    pub(crate) fn new(background: Background) -> Self {
        Self {
            background,
            pending: Arc::default(),
        }
    }

    /// Drops `store` (and gives back its place) off the caller's path: by
    /// the next clock tick, sooner when several wait; here when too many
    /// wait.
    /// `keep` (what the store's place holds, if anything) is dropped
    /// with it.
    pub(crate) fn dispose(&self, store: Store<CallState>, keep: impl Send + 'static) {
        let Some((waiting, count)) = PendingDrop::new(&self.pending) else {
            drop((store, keep));
            return;
        };
        // Dropped with the job, run or not: the count stays right.
        let job = async move { drop((store, keep, waiting)) };
        if count >= URGENT_DROPS {
            self.background.now(job);
        } else {
            self.background.soon(job);
        }
    }
}

/// One store counted among the pending until this is dropped.
struct PendingDrop(Arc<AtomicUsize>);

impl PendingDrop {
    /// A place among the pending, and how many (with it) wait; `None` when
    /// full.
    fn new(pending: &Arc<AtomicUsize>) -> Option<(Self, usize)> {
        let before = pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_PENDING_DROPS).then_some(n + 1)
            })
            .ok()?;
        Some((Self(Arc::clone(pending)), before + 1))
    }
}

impl Drop for PendingDrop {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
