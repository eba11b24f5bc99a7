//! [`CallBudget`]: what one call may still open, write and create, shared
//! by its WASI functions and the streams they hand out.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use super::dir_tree::Usage;
use crate::policy::{Limits, limit_key, to_usize};

/// The open files, written bytes and created entries of one call, against
/// its limits.
#[derive(Debug)]
pub(crate) struct CallBudget {
    module: Arc<str>,
    open_files: AtomicUsize,
    max_open_files: usize,
    written: AtomicU64,
    max_write_bytes: u64,
    created: AtomicU64,
    max_created_entries: u64,
    warned_files: AtomicBool,
    warned_writes: AtomicBool,
    warned_entries: AtomicBool,
}

/// One open file (or listing, or socket) of a call: its place in the
/// budget, given back when dropped.
#[derive(Debug)]
pub(crate) struct OpenFile(Arc<CallBudget>);

impl Drop for OpenFile {
    fn drop(&mut self) {
        self.0.open_files.fetch_sub(1, Ordering::Relaxed);
    }
}

impl CallBudget {
    /// The budget of a call of module `module` under `limits`, with
    /// `preopened` files already open (the granted directories).
    pub(crate) fn new(module: Arc<str>, limits: &Limits, preopened: usize) -> Arc<Self> {
        Arc::new(Self {
            module,
            open_files: AtomicUsize::new(preopened),
            max_open_files: to_usize(limits.max_open_files),
            written: AtomicU64::new(0),
            max_write_bytes: limits.max_write_bytes,
            created: AtomicU64::new(0),
            max_created_entries: limits.max_created_entries,
            warned_files: AtomicBool::new(false),
            warned_writes: AtomicBool::new(false),
            warned_entries: AtomicBool::new(false),
        })
    }

    /// A place for one more open file, or `None` (logged once) at the limit;
    /// the guest is then refused with `quota`.
    pub(crate) fn open(self: &Arc<Self>) -> Option<OpenFile> {
        let taken = self
            .open_files
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max_open_files).then_some(n + 1)
            });
        if taken.is_err() {
            self.warn_once(
                &self.warned_files,
                limit_key::max_open_files,
                self.max_open_files as u64,
            );
            return None;
        }
        Some(OpenFile(Arc::clone(self)))
    }

    /// Takes `bytes` of the write budget; `false` (logged once) if they do
    /// not fit, and then nothing is taken (the guest is refused with
    /// `insufficient-space`).
    pub(crate) fn write(&self, bytes: u64) -> bool {
        let taken = self
            .written
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                n.checked_add(bytes)
                    .filter(|total| *total <= self.max_write_bytes)
            });
        if taken.is_err() {
            self.warn_once(
                &self.warned_writes,
                limit_key::max_write_bytes,
                self.max_write_bytes,
            );
            return false;
        }
        true
    }

    /// Takes one entry (a file, directory or link the call creates); `false`
    /// (logged once) past `max_created_entries`, and then nothing is taken
    /// (the guest is refused with `insufficient-space`, as on a disk out of
    /// inodes).
    pub(crate) fn create(&self) -> bool {
        let taken = self
            .created
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max_created_entries).then_some(n + 1)
            });
        if taken.is_err() {
            self.warn_once(
                &self.warned_entries,
                limit_key::max_created_entries,
                self.max_created_entries,
            );
            return false;
        }
        true
    }

    /// Gives back an entry taken by [`CallBudget::create`] for a creation
    /// that failed.
    pub(crate) fn uncreate(&self) {
        let _ = self
            .created
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// Starts the budget of a new call in the same store (a reused
    /// instance): its writes and entries count from `kept`, what earlier
    /// calls left in its scratch directory (nothing when it has none, or it
    /// was emptied); the files still open stay counted.
    pub(crate) fn next_call(&self, kept: Usage) {
        self.written.store(kept.bytes, Ordering::Relaxed);
        self.created.store(kept.entries, Ordering::Relaxed);
        self.warned_files.store(false, Ordering::Relaxed);
        self.warned_writes.store(false, Ordering::Relaxed);
        self.warned_entries.store(false, Ordering::Relaxed);
    }

    /// How many more bytes the call may write.
    pub(crate) fn room(&self) -> u64 {
        self.max_write_bytes
            .saturating_sub(self.written.load(Ordering::Relaxed))
    }

    fn warn_once(&self, warned: &AtomicBool, key: &str, limit: u64) {
        if !warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                module = %crate::escape::escape_controls(&self.module),
                "a call reached its limit {key} = {limit}; the guest is refused more"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_bytes_are_counted_and_given_back() {
        let limits = Limits {
            max_open_files: 2,
            max_write_bytes: 10,
            max_created_entries: 2,
            ..Limits::default()
        };
        let budget = CallBudget::new("m".into(), &limits, 1);
        let one = budget.open().expect("a second file");
        assert!(budget.open().is_none());
        drop(one);
        assert!(budget.open().is_some());
        assert!(budget.write(6));
        assert!(!budget.write(5));
        assert!(budget.write(4));
        assert!(!budget.write(1));
        assert!(budget.create() && budget.create());
        assert!(!budget.create());
        budget.uncreate();
        assert!(budget.create());
        budget.next_call(Usage {
            bytes: 9,
            entries: 1,
        });
        assert!(budget.write(1) && !budget.write(1));
        assert!(budget.create() && !budget.create());
    }
}
