//! [`ArtifactCache`]: compiled components kept on disk, so a module is
//! compiled once, not at every start.
//!
//! Deserializing a compiled artifact runs the machine code in it, so toolhost
//! only ever loads artifacts it wrote itself, from a directory only its user
//! can write:
//! - the directory is created with mode 0700 and refused if it is owned by
//!   another user or writable by group or others;
//! - each entry is written to a temporary file (mode 0600) and renamed into
//!   place, so a reader never sees half an entry;
//! - each entry starts with a magic line and the SHA-256 of the artifact,
//!   checked before wasmtime sees it: a corrupt or truncated entry is
//!   compiled again and replaced, never loaded;
//! - the entry's name covers the component's SHA-256 and the engine's
//!   compatibility hash (wasmtime version and engine settings), so an
//!   artifact of another component, wasmtime or configuration is never used.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The first bytes of every entry (format version 1).
const MAGIC: &[u8; 16] = b"toolhost-cwasm1\n";
const DIGEST_BYTES: usize = 32;

/// Where compiled components are kept.
#[derive(Debug, Clone)]
pub struct ArtifactCache {
    dir: PathBuf,
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
    /// the directory cannot be created or another user could write to it.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, String> {
        let dir = dir.into();
        create_private_dir(&dir)?;
        check_private(&dir)?;
        Ok(Self { dir })
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The component `bytes` compiled for `engine`: from the cache when a
    /// valid entry exists, else compiled now and stored (a failure to store
    /// is logged, not an error).
    pub(crate) fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> wasmtime::Result<(Component, Compiled)> {
        let path = self.entry_path(engine, bytes);
        if let Some(artifact) = read_entry(&path) {
            // SAFETY: the entry is in a directory only this user can write
            // (checked when the cache was opened), was written by toolhost,
            // and its SHA-256 matches; its name ties it to this component and
            // this engine's configuration.
            match unsafe { Component::deserialize(engine, &artifact) } {
                Ok(component) => return Ok((component, Compiled::Cached)),
                Err(e) => tracing::warn!(
                    path = %path.display(),
                    "cached artifact not usable, compiling again: {e}"
                ),
            }
        }
        let component = Component::from_binary(engine, bytes)?;
        match component.serialize() {
            Ok(artifact) => {
                if let Err(e) = write_entry(&self.dir, &path, &artifact) {
                    tracing::warn!(path = %path.display(), "cannot store compiled artifact: {e}");
                }
            }
            Err(e) => tracing::warn!("cannot serialize compiled artifact: {e}"),
        }
        Ok((component, Compiled::Fresh))
    }

    /// `<sha256 of the component>-<engine compatibility hash>.cwasm`.
    fn entry_path(&self, engine: &Engine, bytes: &[u8]) -> PathBuf {
        let component = hex(&Sha256::digest(bytes));
        let mut hasher = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        self.dir
            .join(format!("{component}-{:016x}.cwasm", hasher.finish()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The artifact in the entry at `path`, if it is whole and unchanged.
fn read_entry(path: &Path) -> Option<Vec<u8>> {
    let data = std::fs::read(path).ok()?;
    let header = MAGIC.len() + DIGEST_BYTES;
    if data.len() <= header || &data[..MAGIC.len()] != MAGIC {
        tracing::warn!(path = %path.display(), "cache entry is not valid, compiling again");
        return None;
    }
    let (digest, artifact) = data[MAGIC.len()..].split_at(DIGEST_BYTES);
    if Sha256::digest(artifact).as_slice() != digest {
        tracing::warn!(path = %path.display(), "cache entry is corrupt, compiling again");
        return None;
    }
    Some(artifact.to_vec())
}

/// Writes an entry atomically: a private temporary file, renamed into place.
fn write_entry(dir: &Path, path: &Path, artifact: &[u8]) -> std::io::Result<()> {
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(MAGIC)?;
    file.write_all(&Sha256::digest(artifact))?;
    file.write_all(artifact)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
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

/// Refuses a directory that another user owns or could write to.
#[cfg(unix)]
fn check_private(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read the cache directory {}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!(
            "the cache directory {} is not a directory (or is a symlink)",
            dir.display()
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "the cache directory {} belongs to another user (uid {}); use a directory of your own",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "the cache directory {} is writable by other users (mode {:o}); run `chmod go-w` on it",
            dir.display(),
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_dir: &Path) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_checked_before_use() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.cwasm");
        write_entry(dir.path(), &path, b"artifact").unwrap();
        assert_eq!(read_entry(&path).as_deref(), Some(&b"artifact"[..]));
        let mut data = std::fs::read(&path).unwrap();
        // Truncated, or one byte changed: not used.
        std::fs::write(&path, &data[..data.len() - 1]).unwrap();
        assert_eq!(read_entry(&path), None);
        let last = data.len() - 1;
        data[last] ^= 1;
        std::fs::write(&path, &data).unwrap();
        assert_eq!(read_entry(&path), None);
        std::fs::write(&path, b"toolhost").unwrap();
        assert_eq!(read_entry(&path), None);
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
    }
}
