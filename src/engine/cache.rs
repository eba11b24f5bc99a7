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
//! - an entry is two files, the artifact (`NAME.cwasm`, exactly what
//!   wasmtime wrote) and its seal (`NAME.cwasm.sum`: a magic line, the artifact's
//!   length and BLAKE3 hash); each is written to a fresh temporary file
//!   (mode 0600) and renamed into place, the seal last, so a reader never
//!   sees half an entry;
//! - the artifact is hashed and compared with its seal before wasmtime sees
//!   it: a corrupt or truncated entry is compiled again and replaced, never
//!   loaded. The check streams the file through a small buffer, and wasmtime
//!   then maps the same open file rather than copying it;
//! - the entry's name covers the component's hash and the engine's
//!   compatibility hash (wasmtime version and engine settings), so an
//!   artifact of another component, wasmtime or configuration is never used.

use std::hash::{Hash, Hasher};
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_std::fs::{Dir, File};
use wasmtime::Engine;

use super::private_dir;
use wasmtime::component::Component;

/// The first bytes of every seal (format version 2).
const MAGIC: &[u8; 16] = b"toolhost-cwasm2\n";
const DIGEST_BYTES: usize = 32;
/// A seal: the magic line, the artifact's length (8 bytes, little-endian)
/// and its BLAKE3 hash.
const SEAL_BYTES: usize = MAGIC.len() + 8 + DIGEST_BYTES;
/// The buffer an artifact is hashed through.
const HASH_CHUNK: usize = 1 << 20;

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
        let handle = private_dir::open(&path)?;
        Ok(Self {
            path,
            dir: Arc::new(handle),
        })
    }

    /// The cache directory, as it was named when opened.
    pub fn dir(&self) -> &Path {
        &self.path
    }

    /// The component `bytes`, from the cache's entry for it if there is a
    /// valid one, deserialized into the first of `engines` it can be (they
    /// must all compile alike: the entry is named by the first).
    pub(crate) fn load(&self, engines: &[&Engine], bytes: &[u8]) -> Option<Component> {
        let first = engines.first()?;
        let name = entry_name(first, bytes);
        let artifact = self.open_entry(&name)?;
        let mut last_error = None;
        for engine in engines {
            // SAFETY: the entry was opened through a handle to a directory
            // only this user can write (nor swap: checked up to `/`),
            // without following links, is this user's and not writable by
            // others, was written by toolhost and matches its seal; its
            // name ties it to this component and this engine's
            // configuration.
            match unsafe { deserialize(engine, &artifact) } {
                Ok(component) => return Some(component),
                Err(e) => last_error = Some(e),
            }
        }
        if let Some(e) = last_error {
            tracing::warn!(
                entry = %self.path.join(&name).display(),
                "cached artifact not usable, compiling again: {e}"
            );
        }
        None
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

    /// Opens a file of the cache for reading, if it is this user's, not
    /// writable by others, and not a link.
    fn open_private(&self, file_name: &str) -> Result<File, Option<&'static str>> {
        private_dir::open_file(&self.dir, file_name)
    }

    /// The artifact of entry `name`, opened, if it is ours, whole and
    /// unchanged (it matches its seal).
    fn open_entry(&self, name: &str) -> Option<File> {
        let refuse = |why: &str| {
            tracing::warn!(entry = %self.path.join(name).display(), "{why}, compiling again");
            None
        };
        let opened = |file_name: &str| match self.open_private(file_name) {
            Ok(file) => Ok(file),
            Err(None) => Err(None),
            Err(Some(why)) => Err(refuse(why)),
        };
        let Ok(mut seal_file) = opened(&seal_name(name)) else {
            return None;
        };
        let Ok(mut artifact) = opened(name) else {
            return None;
        };
        let mut seal = Vec::with_capacity(SEAL_BYTES);
        (&mut seal_file)
            .take(SEAL_BYTES as u64 + 1)
            .read_to_end(&mut seal)
            .ok()?;
        if seal.len() != SEAL_BYTES || &seal[..MAGIC.len()] != MAGIC {
            return refuse("cache entry is not valid");
        }
        let (length, digest) = seal[MAGIC.len()..].split_at(8);
        let length = u64::from_le_bytes(length.try_into().ok()?);
        match hash_file(&mut artifact) {
            Ok((read, hash)) if read == length && hash.as_bytes() == digest => Some(artifact),
            Ok(_) => refuse("cache entry is corrupt"),
            Err(_) => None,
        }
    }

    /// Writes entry `name`: the artifact, then its seal, each atomically.
    fn write_entry(&self, name: &str, artifact: &[u8]) -> std::io::Result<()> {
        let mut seal = Vec::with_capacity(SEAL_BYTES);
        seal.extend_from_slice(MAGIC);
        seal.extend_from_slice(&(artifact.len() as u64).to_le_bytes());
        seal.extend_from_slice(blake3::hash(artifact).as_bytes());
        self.write_file(name, artifact)?;
        self.write_file(&seal_name(name), &seal)
    }

    /// Writes file `name` atomically: a fresh private file, renamed into place.
    fn write_file(&self, name: &str, contents: &[u8]) -> std::io::Result<()> {
        private_dir::write_file(&self.dir, name, contents)
    }
}

/// The seal's file name of entry `name`.
fn seal_name(name: &str) -> String {
    format!("{name}.sum")
}

/// The length and BLAKE3 hash of what is left of `file`, read through a
/// small buffer (the artifact may be tens of megabytes).
fn hash_file(file: &mut File) -> std::io::Result<(u64, blake3::Hash)> {
    let mut hasher = blake3::Hasher::new();
    let mut buffer = vec![0; HASH_CHUNK];
    let mut total = 0u64;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => return Ok((total, hasher.finalize())),
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..read]);
        total += read as u64;
    }
}

/// Deserializes the artifact in `file`: on Linux by mapping that very open
/// file (through `/proc/self/fd`), elsewhere by reading it.
///
/// # Safety
///
/// As [`Component::deserialize`]: `file` must hold an artifact wasmtime
/// wrote for a compatible engine, unchanged.
unsafe fn deserialize(engine: &Engine, file: &File) -> wasmtime::Result<Component> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let path = format!("/proc/self/fd/{}", file.as_raw_fd());
        if Path::new(&path).exists() {
            // SAFETY: as this function's contract.
            return unsafe { Component::deserialize_file(engine, &path) };
        }
    }
    let mut file = file;
    let mut bytes = Vec::new();
    file.seek(std::io::SeekFrom::Start(0))?;
    file.read_to_end(&mut bytes)?;
    // SAFETY: as this function's contract.
    unsafe { Component::deserialize(engine, &bytes) }
}

/// `<BLAKE3 of the component>-<engine compatibility hash>.cwasm`.
fn entry_name(engine: &Engine, bytes: &[u8]) -> String {
    let component = blake3::hash(bytes).to_hex();
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    format!("{component}-{:016x}.cwasm", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> (tempfile::TempDir, ArtifactCache) {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::open(dir.path().join("c")).unwrap();
        (dir, cache)
    }

    /// The artifact of entry `name`, if the cache would use it.
    fn read_entry(cache: &ArtifactCache, name: &str) -> Option<Vec<u8>> {
        let mut file = cache.open_entry(name)?;
        let mut bytes = Vec::new();
        file.seek(std::io::SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut bytes).unwrap();
        Some(bytes)
    }

    #[test]
    fn entries_are_checked_before_use() {
        let (_dir, cache) = cache();
        cache.write_entry("e.cwasm", b"artifact").unwrap();
        assert_eq!(
            read_entry(&cache, "e.cwasm").as_deref(),
            Some(&b"artifact"[..])
        );
        let path = cache.dir().join("e.cwasm");
        let mut data = std::fs::read(&path).unwrap();
        // Truncated, longer, or one byte changed: not used.
        std::fs::write(&path, &data[..data.len() - 1]).unwrap();
        assert_eq!(read_entry(&cache, "e.cwasm"), None);
        std::fs::write(&path, b"artifact!").unwrap();
        assert_eq!(read_entry(&cache, "e.cwasm"), None);
        let last = data.len() - 1;
        data[last] ^= 1;
        std::fs::write(&path, &data).unwrap();
        assert_eq!(read_entry(&cache, "e.cwasm"), None);
        // A seal that is not one, or none: not used.
        cache.write_entry("e.cwasm", b"artifact").unwrap();
        let seal = cache.dir().join("e.cwasm.sum");
        std::fs::write(&seal, b"toolhost").unwrap();
        assert_eq!(read_entry(&cache, "e.cwasm"), None);
        std::fs::remove_file(&seal).unwrap();
        assert_eq!(read_entry(&cache, "e.cwasm"), None);
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
        assert_eq!(read_entry(&cache, "e.cwasm"), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&path, cache.dir().join("link.cwasm")).unwrap();
        assert_eq!(read_entry(&cache, "link.cwasm"), None);
        assert!(read_entry(&cache, "e.cwasm").is_some());
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
