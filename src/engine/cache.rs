//! [`ArtifactCache`]: compiled components kept on disk, so a module is
//! compiled once, not at every start.
//!
//! Deserializing a compiled artifact runs the machine code in it, so toolhost
//! only ever loads artifacts it wrote itself, from a directory no one else
//! can write or swap:
//! - the directory is opened once, without following a symbolic link, and
//!   every later read and write is relative to that handle (never by path
//!   again), so renaming or replacing the path afterwards changes nothing;
//! - the opened directory must belong to this user and not be writable by
//!   group or others, and so must every directory above it (up to `/`),
//!   unless it belongs to root or has the sticky bit (as `/tmp`): otherwise
//!   another user could swap the directory, as ssh refuses for its keys;
//! - each entry is opened without following links, and its owner and mode
//!   are checked on the opened file (this user's, not group/other-writable)
//!   before it is read;
//! - each entry is written to a fresh temporary file (mode 0600) and renamed
//!   into place, so a reader never sees half an entry;
//! - each entry starts with a magic line and the SHA-256 of the artifact,
//!   checked before wasmtime sees it: a corrupt or truncated entry is
//!   compiled again and replaced, never loaded;
//! - the entry's name covers the component's SHA-256 and the engine's
//!   compatibility hash (wasmtime version and engine settings), so an
//!   artifact of another component, wasmtime or configuration is never used.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, MetadataExt, OpenOptions, OpenOptionsExt};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The first bytes of every entry (format version 1).
const MAGIC: &[u8; 16] = b"toolhost-cwasm1\n";
const DIGEST_BYTES: usize = 32;

/// Where compiled components are kept: a directory opened once.
#[derive(Debug, Clone)]
pub struct ArtifactCache {
    path: PathBuf,
    dir: Arc<Dir>,
}

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compiled {
    /// Compiled now (and stored, if there is a cache).
    Fresh,
    /// Loaded from the cache.
    Cached,
}

impl ArtifactCache {
    /// The default directory: `$XDG_CACHE_HOME/toolhost`, else
    /// `$HOME/.cache/toolhost`.
    pub fn default_dir() -> Option<PathBuf> {
        let from_env = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        from_env("XDG_CACHE_HOME")
            .or_else(|| from_env("HOME").map(|home| home.join(".cache")))
            .map(|base| base.join("toolhost"))
    }

    /// Opens (creating if needed) the cache in `dir`. Fails, saying why, if
    /// the directory cannot be created or opened, or if another user could
    /// write to it or to a directory above it.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, String> {
        let path = dir.into();
        create_private_dir(&path)?;
        let handle = private::open_checked(&path)?;
        Ok(Self {
            path,
            dir: Arc::new(handle),
        })
    }

    /// The cache directory, as it was named when opened.
    pub fn dir(&self) -> &Path {
        &self.path
    }

    /// The component `bytes` compiled for `engine`, if the cache has a
    /// valid entry for it.
    pub(crate) fn load(&self, engine: &Engine, bytes: &[u8]) -> Option<Component> {
        let name = entry_name(engine, bytes);
        let artifact = self.read_entry(&name)?;
        // SAFETY: the entry was opened through a handle to a directory only
        // this user can write (nor swap: checked up to `/`), without
        // following links, is this user's and not writable by others, was
        // written by toolhost and its SHA-256 matches; its name ties it to
        // this component and this engine's configuration.
        match unsafe { Component::deserialize(engine, &artifact) } {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(
                    entry = %self.path.join(&name).display(),
                    "cached artifact not usable, compiling again: {e}"
                );
                None
            }
        }
    }

    /// Stores `artifact`, the component `bytes` compiled for `engine`,
    /// logging (not failing) if it cannot.
    pub(crate) fn store(&self, engine: &Engine, bytes: &[u8], artifact: &[u8]) {
        let name = entry_name(engine, bytes);
        if let Err(e) = self.write_entry(&name, artifact) {
            tracing::warn!(
                entry = %self.path.join(&name).display(),
                "cannot store compiled artifact: {e}"
            );
        }
    }

    /// The artifact in entry `name`, if it is ours, whole and unchanged.
    fn read_entry(&self, name: &str) -> Option<Vec<u8>> {
        let refuse = |why: &str| {
            tracing::warn!(entry = %self.path.join(name).display(), "{why}, compiling again");
            None
        };
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(private::NO_FOLLOW);
        let mut file = match self.dir.open_with(name, &options) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(_) => return refuse("cache entry cannot be opened (a link?)"),
        };
        let meta = file.metadata().ok()?;
        if !meta.is_file() || !private::owned_and_private(meta.uid(), meta.mode()) {
            return refuse("cache entry belongs to another user or others can write it");
        }
        let mut data = Vec::new();
        file.read_to_end(&mut data).ok()?;
        let header = MAGIC.len() + DIGEST_BYTES;
        if data.len() <= header || &data[..MAGIC.len()] != MAGIC {
            return refuse("cache entry is not valid");
        }
        let (digest, artifact) = data[MAGIC.len()..].split_at(DIGEST_BYTES);
        if Sha256::digest(artifact).as_slice() != digest {
            return refuse("cache entry is corrupt");
        }
        Some(artifact.to_vec())
    }

    /// Writes entry `name` atomically: a fresh private file, renamed into place.
    fn write_entry(&self, name: &str, artifact: &[u8]) -> std::io::Result<()> {
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
        let written = (|| {
            let mut file = self.dir.open_with(&temporary, &options)?;
            file.write_all(MAGIC)?;
            file.write_all(&Sha256::digest(artifact))?;
            file.write_all(artifact)?;
            file.sync_all()?;
            self.dir.rename(&temporary, &self.dir, name)
        })();
        if written.is_err() {
            let _ = self.dir.remove_file(&temporary);
        }
        written
    }
}

/// `<sha256 of the component>-<engine compatibility hash>.cwasm`.
fn entry_name(engine: &Engine, bytes: &[u8]) -> String {
    let component = hex(&Sha256::digest(bytes));
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    format!("{component}-{:016x}.cwasm", hasher.finish())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> (tempfile::TempDir, ArtifactCache) {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::open(dir.path().join("c")).unwrap();
        (dir, cache)
    }

    #[test]
    fn entries_are_checked_before_use() {
        let (_dir, cache) = cache();
        cache.write_entry("e.cwasm", b"artifact").unwrap();
        assert_eq!(
            cache.read_entry("e.cwasm").as_deref(),
            Some(&b"artifact"[..])
        );
        let path = cache.dir().join("e.cwasm");
        let mut data = std::fs::read(&path).unwrap();
        // Truncated, or one byte changed: not used.
        std::fs::write(&path, &data[..data.len() - 1]).unwrap();
        assert_eq!(cache.read_entry("e.cwasm"), None);
        let last = data.len() - 1;
        data[last] ^= 1;
        std::fs::write(&path, &data).unwrap();
        assert_eq!(cache.read_entry("e.cwasm"), None);
        std::fs::write(&path, b"toolhost").unwrap();
        assert_eq!(cache.read_entry("e.cwasm"), None);
    }

    #[cfg(unix)]
    #[test]
    fn entries_others_could_write_or_links_are_not_read() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, cache) = cache();
        cache.write_entry("e.cwasm", b"artifact").unwrap();
        let path = cache.dir().join("e.cwasm");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(cache.read_entry("e.cwasm"), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&path, cache.dir().join("link.cwasm")).unwrap();
        assert_eq!(cache.read_entry("link.cwasm"), None);
        assert!(cache.read_entry("e.cwasm").is_some());
    }

    #[cfg(unix)]
    #[test]
    fn directories_others_can_write_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c");
        let opened = ArtifactCache::open(&cache).unwrap();
        let mode = std::fs::metadata(opened.dir())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = ArtifactCache::open(&cache).unwrap_err();
        assert!(err.contains("writable by other users"), "{err}");
        // A parent others can write (no sticky bit) is refused too.
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = ArtifactCache::open(&cache).unwrap_err();
        assert!(
            err.contains("others can write without the sticky bit"),
            "{err}"
        );
        // With the sticky bit (as /tmp), it is fine.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(ArtifactCache::open(&cache).is_ok());
        // A symlink to a private directory is refused.
        std::os::unix::fs::symlink(&cache, dir.path().join("link")).unwrap();
        let err = ArtifactCache::open(dir.path().join("link")).unwrap_err();
        assert!(err.contains("symlink"), "{err}");
    }
}
