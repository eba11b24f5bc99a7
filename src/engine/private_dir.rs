//! A directory only this user can write, opened once, and the files in
//! it: what the compile cache and the store of pulled components share.
//!
//! - the directory is opened without following a symbolic link, and every
//!   later read and write is relative to that handle;
//! - it must belong to this user and not be writable by group or others,
//!   and so must every directory above it (up to `/`), unless it belongs to
//!   root or has the sticky bit (as `/tmp`);
//! - a file is opened without following links, and its owner and mode are
//!   checked on the opened file before it is read;
//! - a file is written to a fresh temporary file (mode 0600) and renamed
//!   into place, so a reader never sees half of one.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, File, MetadataExt, OpenOptions, OpenOptionsExt};

/// Opens (creating if needed) the private directory `path`, checked.
pub(crate) fn open(path: &Path) -> Result<Dir, String> {
    create_private_dir(path)?;
    private::open_checked(path)
}

/// Opens file `name` of `dir` for reading, if it is this user's, not
/// writable by others, and not a link (`Err(None)`: there is none).
pub(crate) fn open_file(dir: &Dir, name: &str) -> Result<File, Option<&'static str>> {
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(private::NO_FOLLOW);
    let file = match dir.open_with(name, &options) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
        Err(_) => return Err(Some("cache entry cannot be opened (a link?)")),
    };
    let meta = file.metadata().map_err(|_| None)?;
    if !meta.is_file() || !private::owned_and_private(meta.uid(), meta.mode()) {
        return Err(Some(
            "cache entry belongs to another user or others can write it",
        ));
    }
    Ok(file)
}

/// A file being written: a fresh private temporary file of `dir`, renamed
/// to its name by [`Pending::commit`], removed if dropped before.
pub(crate) struct Pending<'a> {
    dir: &'a Dir,
    temporary: String,
    file: Option<File>,
}

impl<'a> Pending<'a> {
    /// Starts writing file `name` of `dir`.
    pub(crate) fn create(dir: &'a Dir, name: &str) -> std::io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let temporary = format!(
            ".{name}.{}-{}.tmp",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(private::NO_FOLLOW);
        let file = dir.open_with(&temporary, &options)?;
        Ok(Self {
            dir,
            temporary,
            file: Some(file),
        })
    }

    /// The file, to write to.
    pub(crate) fn file(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("a pending file is open until committed")
    }

    /// Syncs the file and renames it to `name`.
    pub(crate) fn commit(mut self, name: &str) -> std::io::Result<()> {
        if let Some(file) = self.file.take() {
            file.sync_all()?;
        }
        self.dir.rename(&self.temporary, self.dir, name)?;
        self.temporary.clear();
        Ok(())
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.temporary.is_empty() {
            let _ = self.dir.remove_file(&self.temporary);
        }
    }
}

/// Writes file `name` of `dir` atomically: a fresh private file, renamed
/// into place.
pub(crate) fn write_file(dir: &Dir, name: &str, contents: &[u8]) -> std::io::Result<()> {
    let mut pending = Pending::create(dir, name)?;
    pending.file().write_all(contents)?;
    pending.commit(name)
}

fn create_private_dir(dir: &Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot create the cache directory {}: {e}", dir.display()))
}

/// Opening the directory and checking that no one else can write or swap it.
#[cfg(unix)]
mod private {
    use std::path::Path;

    use cap_std::fs::Dir;
    use rustix::fs::{self, Mode, OFlags};
    use rustix::io::Errno;

    /// The flag that makes an open fail on a symbolic link.
    pub(super) const NO_FOLLOW: i32 = OFlags::NOFOLLOW.bits() as i32;

    /// Whether a file of owner `uid` and `mode` is this user's and not
    /// writable by group or others.
    pub(super) fn owned_and_private(uid: u32, mode: u32) -> bool {
        uid == rustix::process::geteuid().as_raw() && mode & 0o022 == 0
    }

    /// Opens `path` (not following a link there) and checks it and every
    /// directory above it, through the opened handle.
    pub(super) fn open_checked(path: &Path) -> Result<Dir, String> {
        let shown = path.display();
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = fs::open(path, flags, Mode::empty()).map_err(|e| {
            if e == Errno::LOOP || e == Errno::NOTDIR {
                format!("the cache directory {shown} is not a directory (or is a symlink)")
            } else {
                format!("cannot open the cache directory {shown}: {e}")
            }
        })?;
        let stat =
            fs::fstat(&fd).map_err(|e| format!("cannot read the cache directory {shown}: {e}"))?;
        let me = rustix::process::geteuid().as_raw();
        if stat.st_uid != me {
            return Err(format!(
                "the cache directory {shown} belongs to another user (uid {}); use a directory of your own",
                stat.st_uid
            ));
        }
        if stat.st_mode & 0o022 != 0 {
            return Err(format!(
                "the cache directory {shown} is writable by other users (mode {:o}); run `chmod go-w` on it",
                stat.st_mode & 0o777
            ));
        }
        check_ancestors(&fd, path)?;
        Ok(Dir::from_std_file(std::fs::File::from(fd)))
    }

    /// Walks up from `dir` through `..` (so the directories checked are the
    /// ones the handle is really in): each must be root's or this user's,
    /// and not writable by group or others unless it has the sticky bit.
    fn check_ancestors(dir: &rustix::fd::OwnedFd, path: &Path) -> Result<(), String> {
        let me = rustix::process::geteuid().as_raw();
        let mut current = fs::fstat(dir).map_err(|e| e.to_string())?;
        let mut handle = fs::openat(
            dir,
            "..",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("cannot open the parent of {}: {e}", path.display()))?;
        for depth in 1.. {
            let parent = fs::fstat(&handle).map_err(|e| e.to_string())?;
            let unsafe_owner = parent.st_uid != 0 && parent.st_uid != me;
            let writable = parent.st_mode & 0o022 != 0;
            let sticky = parent.st_mode & 0o1000 != 0;
            if unsafe_owner || (writable && !sticky) {
                let which = "../".repeat(depth);
                return Err(format!(
                    "the cache directory {} is inside a directory ({}{}) that {}; \
                     another user could swap the cache, so it is not used: \
                     choose a cache directory whose parents only you (or root) can write",
                    path.display(),
                    path.display(),
                    format_args!("/{}", which.trim_end_matches('/')),
                    if unsafe_owner {
                        format!("belongs to another user (uid {})", parent.st_uid)
                    } else {
                        format!(
                            "others can write without the sticky bit (mode {:o})",
                            parent.st_mode & 0o7777
                        )
                    }
                ));
            }
            // The root is its own parent.
            if parent.st_dev == current.st_dev && parent.st_ino == current.st_ino {
                return Ok(());
            }
            current = parent;
            handle = fs::openat(
                &handle,
                "..",
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| format!("cannot open a parent of {}: {e}", path.display()))?;
        }
        Ok(())
    }
}

#[cfg(not(unix))]
mod private {
    use std::path::Path;

    use cap_std::ambient_authority;
    use cap_std::fs::Dir;

    pub(super) const NO_FOLLOW: i32 = 0;

    pub(super) fn owned_and_private(_uid: u32, _mode: u32) -> bool {
        true
    }

    pub(super) fn open_checked(path: &Path) -> Result<Dir, String> {
        Dir::open_ambient_dir(path, ambient_authority())
            .map_err(|e| format!("cannot open the cache directory {}: {e}", path.display()))
    }
}
