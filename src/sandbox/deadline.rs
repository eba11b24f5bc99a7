//! [`Deadline`]: when a call's time is up, shared by everything that
//! enforces it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The instant a call's time runs out.
///
/// The epoch callback, the connect check and the name lookups of one store
/// read the same deadline, so that a store made ahead of its call (see
/// [`ReadyInstances`](super::ready::ReadyInstances)) gets its call's time
/// by one [`restart`](Self::restart) when the call begins.
#[derive(Debug, Clone)]
pub(crate) struct Deadline(Arc<Mutex<Instant>>);

impl Deadline {
    /// A deadline `timeout` from now.
    pub(crate) fn after(timeout: Duration) -> Self {
        Self(Arc::new(Mutex::new(Instant::now() + timeout)))
    }

    /// When the time is up.
    pub(crate) fn get(&self) -> Instant {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the time is up.
    pub(crate) fn passed(&self) -> bool {
        Instant::now() >= self.get()
    }

    /// The time left until the deadline (zero once it passed).
    pub(crate) fn remaining(&self) -> Duration {
        self.get().saturating_duration_since(Instant::now())
    }

    /// Moves the deadline to `timeout` from now.
    pub(crate) fn restart(&self, timeout: Duration) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now() + timeout;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_is_seen_by_every_copy() {
        let deadline = Deadline::after(Duration::ZERO);
        let copy = deadline.clone();
        assert!(copy.passed());
        deadline.restart(Duration::from_secs(60));
        assert!(!copy.passed());
        assert!(copy.get() > Instant::now() + Duration::from_secs(59));
    }
}
