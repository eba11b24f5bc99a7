//! `toolhost.lock`: the manifest digest each OCI module was resolved to
//! (by `toolhost lock`), so that a tag never silently changes what runs.
//!
//! ```toml
//! # written by `toolhost lock`; ...
//! version = 1
//!
//! [[module]]
//! name = "calc"
//! reference = "ghcr.io/acme/calc:1.0"
//! digest = "sha256:..."
//! size = 81234
//! verified = "cosign signature by key keys/acme.pub"
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The lockfile's name, beside the config file.
pub const LOCK_FILE_NAME: &str = "toolhost.lock";
/// The format version written.
const LOCK_VERSION: u32 = 1;
/// The largest lockfile read.
const MAX_LOCK_BYTES: u64 = 4 * 1024 * 1024;

/// A parsed `toolhost.lock`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    /// The format version (1).
    pub version: u32,
    /// One entry per OCI module, sorted by name.
    #[serde(default, rename = "module")]
    pub modules: Vec<LockEntry>,
}

/// One module's pin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    /// The module's name.
    pub name: String,
    /// Its `oci` reference, as the config wrote it when locked.
    pub reference: String,
    /// The manifest digest it was resolved to.
    pub digest: String,
    /// The component layer's size in bytes.
    pub size: u64,
    /// How it was verified when locked (a signature, or only pinned).
    pub verified: String,
}

impl Lockfile {
    /// Reads the lockfile at `path` (`None` if there is none).
    pub fn read(path: &Path) -> Result<Option<Self>, String> {
        let shown = path.display();
        let Some(bytes) = crate::small_file::read_small_file(path, MAX_LOCK_BYTES, "the lockfile")?
        else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
        let lock: Lockfile = toml::from_str(&text).map_err(|e| {
            format!(
                "{shown} is not a valid lockfile: {}; run `toolhost lock` to write it anew",
                e.to_string().trim_end()
            )
        })?;
        if lock.version != LOCK_VERSION {
            return Err(format!(
                "{shown} is lockfile version {}; this toolhost reads version {LOCK_VERSION}: run `toolhost lock`",
                lock.version
            ));
        }
        for entry in &lock.modules {
            crate::trust::check_digest(&entry.digest)
                .map_err(|e| format!("{shown}, module '{}': {e}", entry.name))?;
        }
        Ok(Some(lock))
    }

    /// The entry of module `name`.
    pub fn entry(&self, name: &str) -> Option<&LockEntry> {
        self.modules.iter().find(|e| e.name == name)
    }

    /// Writes the lockfile to `path` (entries sorted by name), atomically.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let mut sorted = self.clone();
        sorted.version = LOCK_VERSION;
        sorted.modules.sort_by(|a, b| a.name.cmp(&b.name));
        let body =
            toml::to_string(&sorted).map_err(|e| format!("cannot write the lockfile: {e}"))?;
        let text = format!(
            "# Written by `toolhost lock`: the manifest digest each OCI module runs at.\n\
             # Commit it beside toolhost.toml; `toolhost lock --update [MODULE...]` re-resolves.\n\n{body}"
        );
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut temporary = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        std::io::Write::write_all(&mut temporary, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        temporary
            .persist(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(())
    }
}
