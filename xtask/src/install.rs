//! One pinned install, made once and safely under any concurrency: the
//! toolchains, MCP clients and test tools of `.toolchains/` all go through
//! [`install_once`].
//!
//! The layout of one install folder (`.toolchains/c/`, say):
//!
//! ```text
//! .toolchains/c.lock               the lock every installer of it takes
//! .toolchains/c/3f9a0c1d2e4b5a67/  a finished install of the pins whose hash this is
//! .toolchains/c/.partial-…/        an install under way (or one that was killed)
//! ```
//!
//! A finished install is a folder named for the hash of what it installed,
//! moved into place with one rename once everything in it is written, and
//! never changed after. So a folder with that name is complete, and the
//! check a user makes before using it needs no lock. Installers take the
//! lock (a file lock: it holds across threads and processes, and is let go
//! when a process dies), look again, and install into a `.partial-` folder
//! of their own; anyone else who needs the same install waits on the lock
//! and then finds it finished. A failed install removes its partial folder;
//! a killed one leaves it, never under a finished name, for the next
//! installer to remove. Pins that change make a new install beside the old
//! one, which goes on working for whoever still runs from it.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// The prefix of an install under way.
const PARTIAL: &str = ".partial-";

/// The record of the layout before installs were kept by hash: a folder
/// with this file in it is an old install, replaced on the next install.
const OLD_LAYOUT_RECORD: &str = "installed.lock";

/// Installs `pins` into a folder under `root` unless that is done already;
/// returns the finished folder.
///
/// `pins` are the bytes the install is made from (a lockfile); their hash
/// names the folder. `label` names the install in messages. `populate`
/// makes the install in the empty folder it is given (the first path); the
/// second path is where that folder will be once finished, for anything
/// that must name its final place.
pub(crate) fn install_once(
    root: &Path,
    pins: &[u8],
    label: &str,
    populate: impl FnOnce(&Path, &Path) -> Result<()>,
) -> Result<PathBuf> {
    let root = std::path::absolute(root)
        .with_context(|| format!("cannot make {} absolute", root.display()))?;
    let finished = root.join(hash_name(pins));
    if finished.is_dir() {
        return Ok(finished);
    }
    let _lock = lock(&root, label)?;
    if finished.is_dir() {
        return Ok(finished);
    }
    prepare(&root)?;
    let partial = Partial::create(&root, &finished)?;
    eprintln!("installing the {label} into {}", finished.display());
    populate(partial.path(), &finished)?;
    partial.publish(&finished)?;
    note_older_installs(&root, &finished, label);
    Ok(finished)
}

/// The name of the install made from `pins`: 16 hex digits of their SHA-256.
fn hash_name(pins: &[u8]) -> String {
    Sha256::digest(pins)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Takes the install lock of `root` (the file `<root>.lock` beside it),
/// waiting for another installer if one holds it; released when dropped.
fn lock(root: &Path, label: &str) -> Result<File> {
    let parent = root.parent().unwrap_or(root);
    fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let mut name = root.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let path = root.with_file_name(name);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open the install lock {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(TryLockError::WouldBlock) => {
            eprintln!("waiting for another install of the {label} to finish");
        }
        Err(TryLockError::Error(error)) => {
            return Err(error)
                .with_context(|| format!("cannot lock the install lock {}", path.display()));
        }
    }
    file.lock()
        .with_context(|| format!("cannot lock the install lock {}", path.display()))?;
    Ok(file)
}

/// With the lock held: makes `root`, and removes what earlier installers
/// left that can no longer be in use (partial folders of installers that
/// were killed, and an install in the layout from before installs were
/// kept by hash).
fn prepare(root: &Path) -> Result<()> {
    if root.join(OLD_LAYOUT_RECORD).is_file() {
        eprintln!(
            "removing {}, an install in the layout this version no longer uses",
            root.display()
        );
        fs::remove_dir_all(root)
            .with_context(|| format!("cannot remove the old install {}", root.display()))?;
    }
    fs::create_dir_all(root).with_context(|| format!("cannot create {}", root.display()))?;
    for entry in fs::read_dir(root).with_context(|| format!("cannot read {}", root.display()))? {
        let path = entry
            .with_context(|| format!("cannot read {}", root.display()))?
            .path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(PARTIAL) {
            eprintln!(
                "removing {}, left by an install that did not finish",
                path.display()
            );
            fs::remove_dir_all(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
}

/// An install under way: its folder is removed unless it is published.
struct Partial {
    path: PathBuf,
    published: bool,
}

impl Partial {
    /// A new, empty partial folder in `root` for the install that will be
    /// `finished`. Its name is at least as long as the finished one's, so
    /// that paths written into the install (script headers) still fit when
    /// they are rewritten to the finished name.
    fn create(root: &Path, finished: &Path) -> Result<Partial> {
        static INSTALLS: AtomicU32 = AtomicU32::new(0);
        let n = INSTALLS.fetch_add(1, Ordering::Relaxed);
        let hash = finished.file_name().unwrap_or_default().to_string_lossy();
        let path = root.join(format!("{PARTIAL}{hash}-{}-{n}", std::process::id()));
        fs::create_dir(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Partial {
            path,
            published: false,
        })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the finished install into place with one rename.
    fn publish(mut self, finished: &Path) -> Result<()> {
        fs::rename(&self.path, finished).with_context(|| {
            format!(
                "cannot move the install {} to {}",
                self.path.display(),
                finished.display()
            )
        })?;
        self.published = true;
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.published {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// Says where installs of other pins than `current` are, which nothing
/// here uses any more (they are left for whoever may still run from them).
fn note_older_installs(root: &Path, current: &Path, label: &str) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    let older: Vec<String> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && p != current)
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| !n.starts_with('.'))
        .collect();
    if !older.is_empty() {
        eprintln!(
            "older installs of the {label} remain in {} ({}); remove them once nothing runs from them",
            root.display(),
            older.join(", ")
        );
    }
}

/// Rewrites every mention of `from` as `to` in the text files directly in
/// `dir` (not in its subfolders, and never through a symbolic link). For an
/// install made in one folder and moved to another: a Python virtual
/// environment names its own folder in its scripts' `#!` lines and its
/// activation scripts.
pub(crate) fn rewrite_paths(dir: &Path, from: &Path, to: &Path) -> Result<()> {
    let (from, to) = (from.to_string_lossy(), to.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot read {}", dir.display()))?
            .path();
        let is_file = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if !is_file {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue; // not text
        };
        if text.contains(from.as_ref()) {
            fs::write(&path, text.replace(from.as_ref(), &to))
                .with_context(|| format!("cannot rewrite {}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_named_for_the_pins() {
        assert_eq!(hash_name(b"a"), hash_name(b"a"));
        assert_ne!(hash_name(b"a"), hash_name(b"b"));
        assert_eq!(hash_name(b"").len(), 16);
        // SHA-256 of the empty string begins e3b0c442 98fc1c14.
        assert_eq!(hash_name(b""), "e3b0c44298fc1c14");
    }

    #[test]
    fn a_finished_install_is_reused_and_a_failed_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tool");
        let failed = install_once(&root, b"pins", "test tool", |partial, _| {
            fs::write(partial.join("half"), "written")?;
            anyhow::bail!("the installer failed")
        });
        assert!(failed.is_err());
        assert_eq!(fs::read_dir(&root).unwrap().count(), 0, "nothing is left");

        let mut runs = 0;
        let first = install_once(&root, b"pins", "test tool", |partial, finished| {
            runs += 1;
            fs::write(partial.join("file"), finished.to_string_lossy().as_bytes())?;
            Ok(())
        })
        .unwrap();
        assert_eq!(
            first,
            std::path::absolute(root.join(hash_name(b"pins"))).unwrap()
        );
        assert_eq!(
            fs::read_to_string(first.join("file")).unwrap(),
            first.to_string_lossy()
        );
        let again = install_once(&root, b"pins", "test tool", |_, _| {
            runs += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!((again, runs), (first, 1));
    }

    #[test]
    fn partial_folders_of_killed_installs_are_removed_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tool");
        let stale = root.join(format!("{PARTIAL}0000-1-0"));
        fs::create_dir_all(stale.join("bin")).unwrap();
        let done = install_once(&root, b"pins", "test tool", |_, _| Ok(())).unwrap();
        assert!(done.is_dir());
        assert!(!stale.exists());
    }

    #[test]
    fn an_install_in_the_old_layout_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tool");
        fs::create_dir_all(root.join("bin")).unwrap();
        fs::write(root.join(OLD_LAYOUT_RECORD), "pins").unwrap();
        let done = install_once(&root, b"pins", "test tool", |_, _| Ok(())).unwrap();
        let left: Vec<_> = fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(left, vec![done]);
    }

    #[test]
    fn paths_are_rewritten_in_text_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        let from = Path::new("/x/.partial-abc-1-0");
        let to = Path::new("/x/abc");
        fs::write(
            bin.join("tool"),
            "#!/x/.partial-abc-1-0/bin/python\nrun()\n",
        )
        .unwrap();
        fs::write(bin.join("binary"), [0xff, 0xfe, b'/', b'x']).unwrap();
        rewrite_paths(&bin, from, to).unwrap();
        assert_eq!(
            fs::read_to_string(bin.join("tool")).unwrap(),
            "#!/x/abc/bin/python\nrun()\n"
        );
        assert_eq!(
            fs::read(bin.join("binary")).unwrap(),
            [0xff, 0xfe, b'/', b'x']
        );
    }
}
