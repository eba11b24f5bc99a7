//! The first thing that went wrong with a call's HTTP requests (a denial or
//! a limit), kept so that the call's error text can say it.

use std::sync::{Mutex, PoisonError};

/// The first HTTP problem of one call.
#[derive(Debug, Default)]
pub(super) struct FirstProblem(Mutex<Option<String>>);

impl FirstProblem {
    /// Keeps `text` unless a problem was kept before; logs it either way.
    pub(super) fn note(&self, module: &str, text: String) {
        tracing::debug!(module, "HTTP request refused: {text}");
        let mut first = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if first.is_none() {
            *first = Some(text);
        }
    }

    /// Forgets the problem kept.
    pub(super) fn clear(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The problem kept, if any.
    pub(super) fn get(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
