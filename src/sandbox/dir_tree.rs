//! A directory tree on the host, emptied ([`empty`], [`remove`]) or
//! measured ([`measure`]) whatever its shape: without recursion (a tree
//! 100,000 levels deep takes no more thread stack than one level), with at
//! most three directories open at a time, and without paths (an entry
//! deeper than the host's path length limit is reached like any other).
//!
//! The walk goes down by opening each subdirectory from its parent, never
//! following a symbolic link, and comes back up through `..`, checking that
//! the parent it reaches is the one it came from. It is meant for trees
//! nothing else changes while they are walked (a scratch directory between
//! calls, or after its store is dropped); one that changes under it ends the
//! walk with an error rather than let it stray.

use std::ffi::{CStr, CString};
use std::io;
use std::path::Path;

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags, fstat, openat, statat, unlinkat};

/// What a tree holds below its root.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    /// The bytes of its regular files (their sizes; a hole counts as written).
    pub bytes: u64,
    /// Its entries of every kind: files, directories, links.
    pub entries: u64,
}

/// Removes everything in directory `root`, and keeps `root`.
pub(crate) fn empty(root: &Path) -> io::Result<()> {
    walk(root, &mut Remove)
}

/// Removes directory `root` and everything in it.
pub(crate) fn remove(root: &Path) -> io::Result<()> {
    empty(root)?;
    std::fs::remove_dir(root)
}

/// What directory `root` holds, counting no further than `max_entries`
/// entries: past them the walk stops, and the usage returned has one entry
/// more than `max_entries` (the tree is over its bound; how far over is not
/// worth a walk).
pub(crate) fn measure(root: &Path, max_entries: u64) -> io::Result<Usage> {
    let mut measure = Measure {
        usage: Usage::default(),
        max_entries,
    };
    walk(root, &mut measure)?;
    Ok(measure.usage)
}

/// Whether a walk goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Go,
    Stop,
}

/// What a walk does with what it finds.
trait Visit {
    /// Whether each directory is listed again, once what it held has been
    /// visited, until a listing finds it empty (for a removal: entries may
    /// be missed by a listing that runs while entries are removed).
    const UNTIL_EMPTY: bool;

    /// Sees entry `name` of directory `dir`, a `kind`; a directory's
    /// entries are visited after it.
    fn entry(&mut self, dir: BorrowedFd<'_>, name: &CStr, kind: FileType) -> io::Result<Step>;

    /// Directory `name` of `parent` has been walked.
    fn left(&mut self, parent: BorrowedFd<'_>, name: &CStr) -> io::Result<()>;
}

/// Removes every entry, each directory once it is empty.
struct Remove;

impl Visit for Remove {
    const UNTIL_EMPTY: bool = true;

    fn entry(&mut self, dir: BorrowedFd<'_>, name: &CStr, kind: FileType) -> io::Result<Step> {
        if kind != FileType::Directory {
            unlinkat(dir, name, AtFlags::empty())?;
        }
        Ok(Step::Go)
    }

    fn left(&mut self, parent: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
        Ok(unlinkat(parent, name, AtFlags::REMOVEDIR)?)
    }
}

/// Counts entries and file bytes, up to a bound.
struct Measure {
    usage: Usage,
    max_entries: u64,
}

impl Visit for Measure {
    const UNTIL_EMPTY: bool = false;

    fn entry(&mut self, dir: BorrowedFd<'_>, name: &CStr, kind: FileType) -> io::Result<Step> {
        self.usage.entries += 1;
        if self.usage.entries > self.max_entries {
            return Ok(Step::Stop);
        }
        if kind == FileType::RegularFile {
            let size = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?.st_size;
            let size = u64::try_from(size).unwrap_or(0);
            self.usage.bytes = self.usage.bytes.saturating_add(size);
        }
        Ok(Step::Go)
    }

    fn left(&mut self, _parent: BorrowedFd<'_>, _name: &CStr) -> io::Result<()> {
        Ok(())
    }
}

/// A directory on the walk's way down: its name in its parent, which
/// directory it is, and its subdirectories still to walk.
struct Level {
    name: CString,
    id: (u64, u64),
    pending: Vec<CString>,
    /// Entries its last listing found.
    listed: u64,
}

/// One listing of a directory.
struct Listing {
    subdirs: Vec<CString>,
    seen: u64,
    step: Step,
}

/// Walks the tree below `root` depth first, without recursion: the only
/// memory that grows with the tree is the names of the subdirectories not
/// yet walked.
fn walk<V: Visit>(root: &Path, visit: &mut V) -> io::Result<()> {
    let mut current = open_dir(CWD, root)?;
    let mut name = CString::default();
    let mut stack: Vec<Level> = Vec::new();
    loop {
        // `current` was just entered, as `name`: list it.
        let listing = list(current.as_fd(), visit)?;
        if listing.step == Step::Stop {
            return Ok(());
        }
        stack.push(Level {
            name: std::mem::take(&mut name),
            id: identity(&current)?,
            pending: listing.subdirs,
            listed: listing.seen,
        });
        // Down into the next subdirectory to walk, or up while none is left.
        loop {
            let Some(level) = stack.last_mut() else {
                return Ok(());
            };
            if let Some(next) = level.pending.pop() {
                current = open_dir(current.as_fd(), &next)?;
                name = next;
                break;
            }
            if V::UNTIL_EMPTY && level.listed > 0 {
                let listing = list(current.as_fd(), visit)?;
                if listing.step == Step::Stop {
                    return Ok(());
                }
                level.pending = listing.subdirs;
                level.listed = listing.seen;
                continue;
            }
            let Some(done) = stack.pop() else {
                return Ok(());
            };
            let Some(above) = stack.last() else {
                // The root is walked.
                return Ok(());
            };
            let parent = open_dir(current.as_fd(), c"..")?;
            if identity(&parent)? != above.id {
                return Err(io::Error::other(
                    "the directory tree changed while it was walked",
                ));
            }
            visit.left(parent.as_fd(), &done.name)?;
            current = parent;
        }
    }
}

/// Lists directory `dir` once, giving each entry to `visit` and keeping
/// the names of its subdirectories.
fn list(dir: BorrowedFd<'_>, visit: &mut impl Visit) -> io::Result<Listing> {
    let mut listing = Listing {
        subdirs: Vec::new(),
        seen: 0,
        step: Step::Go,
    };
    let mut entries = Dir::read_from(dir)?;
    while let Some(entry) = entries.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => {
                FileType::from_raw_mode(statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?.st_mode)
            }
            known => known,
        };
        listing.seen += 1;
        if visit.entry(dir, name, kind)? == Step::Stop {
            listing.step = Step::Stop;
            return Ok(listing);
        }
        if kind == FileType::Directory {
            listing.subdirs.push(name.to_owned());
        }
    }
    Ok(listing)
}

/// Opens directory `name` of `dir`, never through a symbolic link.
fn open_dir<P: rustix::path::Arg>(dir: impl AsFd, name: P) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(openat(dir, name, flags, Mode::empty())?)
}

/// Which directory `dir` is: its device and inode.
fn identity(dir: &OwnedFd) -> io::Result<(u64, u64)> {
    let stat = fstat(dir)?;
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    Ok((stat.st_dev as u64, stat.st_ino as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A chain `depth` directories deep, built as a hostile guest builds it
    /// (each new directory takes the chain so far under it), so that no
    /// path ever grows long.
    fn chain(root: &Path, depth: usize) -> std::path::PathBuf {
        fs::create_dir(root.join("d0")).unwrap();
        for i in 1..depth {
            fs::create_dir(root.join(format!("d{i}"))).unwrap();
            fs::rename(
                root.join(format!("d{}", i - 1)),
                root.join(format!("d{i}/x")),
            )
            .unwrap();
        }
        root.join(format!("d{}", depth - 1))
    }

    /// Runs `f` on a thread with a stack far too small for recursion over
    /// the trees these tests build.
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn a_deep_chain_is_measured_and_removed_on_a_small_stack() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir(&root).unwrap();
        chain(&root, 30_000);
        let measured = root.clone();
        let usage = on_small_stack(move || measure(&measured, u64::MAX).unwrap());
        assert_eq!(
            usage,
            Usage {
                bytes: 0,
                entries: 30_000
            }
        );
        let removed = root.clone();
        on_small_stack(move || remove(&removed).unwrap());
        assert!(!root.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_file_past_the_path_length_limit_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("f"), vec![0u8; 900 * 1024]).unwrap();
        // 2,200 levels: a path to the file would be longer than PATH_MAX.
        let top = chain(dir.path(), 2_200);
        fs::rename(dir.path().join("f"), top.join("f")).unwrap();
        let usage = measure(dir.path(), u64::MAX).unwrap();
        assert_eq!(usage.bytes, 900 * 1024);
        assert_eq!(usage.entries, 2_201);
        assert_eq!(
            measure(dir.path(), 100).unwrap().entries,
            101,
            "the walk stops past its bound"
        );
        empty(dir.path()).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn wide_trees_links_and_odd_names_are_removed_and_links_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep"), b"k").unwrap();
        let root = dir.path();
        for i in 0..2_000 {
            fs::write(root.join(format!("f{i}")), b"12").unwrap();
            fs::create_dir(root.join(format!("d{i}"))).unwrap();
            fs::write(root.join(format!("d{i}/g")), b"3").unwrap();
        }
        fs::create_dir(root.join("names")).unwrap();
        for name in ["..a", " ", "\n", "-rf", "\u{7f}", "é"] {
            fs::write(root.join("names").join(name), b"").unwrap();
        }
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("keep"), root.join("names/k")).unwrap();
        let usage = measure(root, u64::MAX).unwrap();
        assert_eq!(usage.bytes, 2_000 * 3);
        assert_eq!(usage.entries, 6_000 + 1 + 6 + 2);
        empty(root).unwrap();
        assert_eq!(fs::read_dir(root).unwrap().count(), 0);
        assert_eq!(fs::read(outside.path().join("keep")).unwrap(), b"k");
    }
}
