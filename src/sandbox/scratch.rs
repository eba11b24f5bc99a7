//! [`Scratch`]: the empty read-write directory a call gets with
//! `grants.scratch = true`, made on the host for it and removed with it.

use std::fs;
use std::path::Path;

use tempfile::TempDir;

use super::fault::Fault;

/// The most entries [`Scratch::used_bytes`] reads before it stops counting
/// (and counts the directory as full): what one call can create is bounded
/// by its time and open files, so this is only a backstop for the host.
const MAX_ENTRIES_COUNTED: usize = 100_000;

/// One call's (or one session's) scratch directory on the host: a fresh
/// directory only this user can open (mode 0700), removed with everything
/// in it when dropped, that is, when the store that holds it is dropped.
#[derive(Debug)]
pub(crate) struct Scratch {
    dir: TempDir,
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
        Ok(Self { dir })
    }

    /// Where it is on the host.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Removes everything in it, so that the next call of a reused instance
    /// finds it empty.
    pub(crate) fn clear(&self) -> Result<(), Fault> {
        let entries = fs::read_dir(self.path()).map_err(|e| cannot_clear(&e))?;
        for entry in entries {
            let entry = entry.map_err(|e| cannot_clear(&e))?;
            let path = entry.path();
            // Not following links: a link is removed, never its target.
            let is_dir = entry.file_type().map_err(|e| cannot_clear(&e))?.is_dir();
            let removed = if is_dir {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            removed.map_err(|e| cannot_clear(&e))?;
        }
        Ok(())
    }

    /// The bytes its files hold now (links and directories count nothing;
    /// links are not followed), or `u64::MAX` when it holds more entries
    /// than the host counts.
    pub(crate) fn used_bytes(&self) -> u64 {
        let mut total = 0u64;
        let mut seen = 0usize;
        let mut pending = vec![self.path().to_path_buf()];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > MAX_ENTRIES_COUNTED {
                    return u64::MAX;
                }
                let Ok(meta) = entry.path().symlink_metadata() else {
                    continue;
                };
                if meta.is_dir() {
                    pending.push(entry.path());
                } else if meta.is_file() {
                    total = total.saturating_add(meta.len());
                }
            }
        }
        total
    }
}

fn cannot_clear(error: &std::io::Error) -> Fault {
    Fault::Host(format!("cannot empty the scratch directory: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_empty_counted_cleared_and_removed() {
        let scratch = Scratch::new().unwrap();
        let path = scratch.path().to_path_buf();
        assert_eq!(fs::read_dir(&path).unwrap().count(), 0);
        fs::write(path.join("a"), b"12345").unwrap();
        fs::create_dir(path.join("d")).unwrap();
        fs::write(path.join("d/b"), b"123").unwrap();
        assert_eq!(scratch.used_bytes(), 8);
        scratch.clear().unwrap();
        assert_eq!(fs::read_dir(&path).unwrap().count(), 0);
        assert_eq!(scratch.used_bytes(), 0);
        fs::write(path.join("c"), b"1").unwrap();
        drop(scratch);
        assert!(!path.exists());
    }
}
