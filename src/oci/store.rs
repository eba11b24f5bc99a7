//! [`PullStore`]: pulled manifests, components and verified signatures,
//! kept by content digest in a private directory (`<cache dir>/oci`), so a
//! pinned module loads with its registry down.
//!
//! The directory follows the compile cache's rules (`engine/private_dir.rs`:
//! this user's, not writable by others up to `/`, opened once, files
//! opened without following links, written to a temporary file and renamed
//! into place). A blob's name is its sha256 digest, its seal: it is hashed
//! on every read, and one that does not match is removed, never used.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use cap_std::fs::Dir;
use sha2::{Digest as _, Sha256};

use crate::engine::ArtifactCache;
use crate::engine::private_dir::{self, Pending};
use crate::trust::Evidence;

use super::client::hex;

/// The largest signature record kept per digest.
const MAX_EVIDENCE_BYTES: u64 = 16 * 1024 * 1024;

/// Pulled blobs and verified signatures, by digest.
#[derive(Debug, Clone)]
pub struct PullStore {
    path: PathBuf,
    dir: Arc<Dir>,
}

impl PullStore {
    /// The default directory: `oci` in the compile cache's default
    /// directory (`$XDG_CACHE_HOME/toolhost/oci`, else `~/.cache/toolhost/oci`).
    pub fn default_dir() -> Option<PathBuf> {
        ArtifactCache::default_dir().map(|dir| dir.join("oci"))
    }

    /// Opens (creating if needed) the store in `dir`; fails, saying why, if
    /// another user could write to it or a directory above it.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, String> {
        let path = dir.into();
        let handle = private_dir::open(&path)?;
        Ok(Self {
            path,
            dir: Arc::new(handle),
        })
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.path
    }

    fn blob_name(digest: &str) -> String {
        format!("blob-{}", digest.replace(':', "-"))
    }

    fn evidence_name(digest: &str) -> String {
        format!("signatures-{}.json", digest.replace(':', "-"))
    }

    /// Blob `digest`, if it is kept, whole and unchanged, and at most `limit`
    /// bytes.
    pub(crate) fn read_blob(&self, digest: &str, limit: u64) -> Option<Vec<u8>> {
        let name = Self::blob_name(digest);
        let file = match private_dir::open_file(&self.dir, &name) {
            Ok(file) => file,
            Err(None) => return None,
            Err(Some(why)) => {
                tracing::warn!(entry = %self.path.join(&name).display(), "{why}; pulling again");
                return None;
            }
        };
        let mut bytes = Vec::new();
        if file.take(limit + 1).read_to_end(&mut bytes).is_err() || bytes.len() as u64 > limit {
            return None;
        }
        if format!("sha256:{}", hex(&Sha256::digest(&bytes))) != digest {
            tracing::warn!(entry = %self.path.join(&name).display(), "a kept blob does not match its digest; removed, pulling again");
            let _ = self.dir.remove_file(&name);
            return None;
        }
        Some(bytes)
    }

    /// Whether blob `digest` is kept (not checked).
    pub(crate) fn has_blob(&self, digest: &str) -> bool {
        self.dir.exists(Self::blob_name(digest))
    }

    /// Keeps `bytes` as blob `digest` (they must hash to it) unless it is
    /// kept already; a failure is logged, not returned (the blob is pulled
    /// again next time).
    pub(crate) fn keep_blob(&self, digest: &str, bytes: &[u8]) {
        if self.has_blob(digest) {
            return;
        }
        if let Err(e) = private_dir::write_file(&self.dir, &Self::blob_name(digest), bytes) {
            tracing::warn!("cannot keep {digest} in {}: {e}", self.path.display());
        }
    }

    /// A pending file for blob `digest`: write, then [`PullStore::commit_blob`].
    pub(crate) fn pending_blob(&self, digest: &str) -> std::io::Result<Pending<'_>> {
        Pending::create(&self.dir, &Self::blob_name(digest))
    }

    /// Renames a pending blob into place.
    pub(crate) fn commit_blob(&self, pending: Pending<'_>, digest: &str) -> std::io::Result<()> {
        pending.commit(&Self::blob_name(digest))
    }

    /// The signatures kept for `digest` (verified when kept; a rule checks
    /// them again).
    pub(crate) fn read_evidence(&self, digest: &str) -> Vec<Evidence> {
        let Ok(file) = private_dir::open_file(&self.dir, &Self::evidence_name(digest)) else {
            return Vec::new();
        };
        let mut bytes = Vec::new();
        if file
            .take(MAX_EVIDENCE_BYTES)
            .read_to_end(&mut bytes)
            .is_err()
        {
            return Vec::new();
        }
        let Ok(records) = serde_json::from_slice::<Vec<serde_json::Value>>(&bytes) else {
            return Vec::new();
        };
        records.iter().filter_map(evidence_from_json).collect()
    }

    /// Keeps `evidence` for `digest`, replacing what was kept.
    pub(crate) fn write_evidence(
        &self,
        digest: &str,
        evidence: &[Evidence],
    ) -> std::io::Result<()> {
        let records: Vec<serde_json::Value> = evidence.iter().map(evidence_to_json).collect();
        let text = serde_json::to_vec(&records).map_err(std::io::Error::other)?;
        private_dir::write_file(&self.dir, &Self::evidence_name(digest), &text)
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn evidence_to_json(evidence: &Evidence) -> serde_json::Value {
    match evidence {
        Evidence::SimpleSigning {
            payload,
            signature,
            found_at,
        } => serde_json::json!({
            "kind": "simple-signing", "payload": b64(payload), "signature": signature, "found_at": found_at,
        }),
        Evidence::Bundle { json, found_at } => serde_json::json!({
            "kind": "bundle", "bundle": b64(json), "found_at": found_at,
        }),
    }
}

fn evidence_from_json(value: &serde_json::Value) -> Option<Evidence> {
    let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let bytes = |key: &str| {
        text(key).and_then(|t| base64::engine::general_purpose::STANDARD.decode(t).ok())
    };
    let found_at = format!("{} (kept in the pull store)", text("found_at")?);
    match text("kind")?.as_str() {
        "simple-signing" => Some(Evidence::SimpleSigning {
            payload: bytes("payload")?,
            signature: text("signature")?,
            found_at,
        }),
        "bundle" => Some(Evidence::Bundle {
            json: bytes("bundle")?,
            found_at,
        }),
        _ => None,
    }
}
