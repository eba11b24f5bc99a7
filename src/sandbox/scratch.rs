//! [`Scratch`]: the empty read-write directory a call gets with
//! `grants.scratch = true`, made on the host for it and removed with it.

use std::path::{Path, PathBuf};

use super::dir_tree::{self, Usage};
use super::fault::Fault;

/// One call's (or one session's) scratch directory on the host: a fresh
/// directory only this user can open (mode 0700), removed with everything
/// in it when dropped, that is, when the store that holds it is dropped.
///
/// Emptying, measuring and removing it never recurse and never follow a
/// link (see [`dir_tree`]), so no tree a guest builds in it (a chain of
/// directories 100,000 deep, say) can exhaust a host thread's stack or hide
/// from the count.
#[derive(Debug)]
pub(crate) struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// A new empty directory in the host's temporary directory.
    pub(crate) fn new() -> Result<Self, Fault> {
        let dir = tempfile::Builder::new()
            .prefix("toolhost-scratch-")
            .tempdir()
            .map_err(|e| {
                Fault::Host(format!(
                    "cannot make the scratch directory in {}: {e} (set TMPDIR to a writable directory)",
                    std::env::temp_dir().display()
                ))
            })?;
        // Removed by `Drop` below, without recursion.
        Ok(Self { path: dir.keep() })
    }

    /// Where it is on the host.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes everything in it, so that the next call of a reused instance
    /// finds it empty.
    pub(crate) fn clear(&self) -> Result<(), Fault> {
        dir_tree::empty(&self.path)
            .map_err(|e| Fault::Host(format!("cannot empty the scratch directory: {e}")))
    }

    /// What it holds now: its files' bytes (links are not followed) and its
    /// entries of every kind, counting no further than `max_entries` (a
    /// directory it cannot read counts as over that).
    pub(crate) fn usage(&self, max_entries: u64) -> Usage {
        dir_tree::measure(&self.path, max_entries).unwrap_or(Usage {
            bytes: u64::MAX,
            entries: u64::MAX,
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = dir_tree::remove(&self.path) {
            tracing::warn!(
                "cannot remove the scratch directory {}: {e}",
                self.path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn made_empty_counted_cleared_and_removed() {
        let scratch = Scratch::new().unwrap();
        let path = scratch.path().to_path_buf();
        assert_eq!(fs::read_dir(&path).unwrap().count(), 0);
        fs::write(path.join("a"), b"12345").unwrap();
        fs::create_dir(path.join("d")).unwrap();
        fs::write(path.join("d/b"), b"123").unwrap();
        assert_eq!(
            scratch.usage(100),
            Usage {
                bytes: 8,
                entries: 3
            }
        );
        scratch.clear().unwrap();
        assert_eq!(fs::read_dir(&path).unwrap().count(), 0);
        assert_eq!(scratch.usage(100), Usage::default());
        fs::write(path.join("c"), b"1").unwrap();
        drop(scratch);
        assert!(!path.exists());
    }
}
