//! [`Access`]: what one module's calls may reach, checked and ready to use.
//!
//! The operator writes [`Grants`](crate::Grants) in the config;
//! [`Grants::resolve`](crate::Grants::resolve) checks them and gives an
//! `Access`, the one type the sandbox builds each call's WASI context from.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::endpoint::Endpoint;
use super::http::HttpAccess;

/// What a module's calls may reach: resolved grants. The default reaches
/// nothing (no files, environment, network or stdin).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    /// Host directories the guest sees as preopened directories.
    pub dirs: Vec<DirAccess>,
    /// Environment variables the guest sees, with their values (set in the
    /// config, or read from toolhost's environment at load).
    pub env: BTreeMap<String, String>,
    /// The names in `env` whose values came from toolhost's environment.
    pub inherited: Vec<String>,
    /// Outbound TCP endpoints.
    pub endpoints: Vec<Endpoint>,
    /// Whether the guest may create symbolic links (relative, without `..`)
    /// in its read-write directories.
    pub symlinks: bool,
    /// Outbound HTTP requests (`wasi:http`).
    pub http: HttpAccess,
    /// What `wasi:config/store` answers: names and values (set in the
    /// config, or read from toolhost's environment at load).
    pub config: BTreeMap<String, String>,
    /// The names in `config` whose values came from toolhost's environment.
    pub config_inherited: Vec<String>,
    /// Whether each call gets an empty read-write scratch directory at
    /// [`SCRATCH_GUEST_PATH`](crate::policy::SCRATCH_GUEST_PATH).
    pub scratch: bool,
}

/// One granted directory: an existing host directory, as an absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirAccess {
    /// The directory on the host, absolute.
    pub host: PathBuf,
    /// Where the guest sees it, for example `/data`.
    pub guest: String,
    /// Read-only or read-write.
    pub mode: DirMode,
}

impl Access {
    /// Whether nothing is reachable.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
            && self.env.is_empty()
            && self.endpoints.is_empty()
            && !self.symlinks
            && self.http.is_empty()
            && self.config.is_empty()
            && !self.scratch
    }

    /// Whether nothing is reachable but a scratch directory, which is made
    /// for each instance alone and removed with it (so an instance can be
    /// primed: nothing it does then reaches outside it).
    pub fn reaches_only_its_own(&self) -> bool {
        Access {
            scratch: false,
            ..self.clone()
        }
        .is_empty()
    }

    /// The `wasi:config` names whose values the config sets.
    pub fn config_set_in_config(&self) -> impl Iterator<Item = &str> {
        self.config
            .keys()
            .filter(|k| !self.config_inherited.contains(k))
            .map(String::as_str)
    }

    /// The names of the environment variables whose values the config sets.
    pub fn env_set_in_config(&self) -> impl Iterator<Item = &str> {
        self.env
            .keys()
            .filter(|k| !self.inherited.contains(k))
            .map(String::as_str)
    }

    /// Whether the guest may look up host name `name` (only granted names).
    pub fn may_look_up(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.');
        self.endpoints
            .iter()
            .any(|e| matches!(e, Endpoint::Name(host, _) if host.eq_ignore_ascii_case(name)))
    }

    /// Whether any endpoint is granted by host name (so lookups are needed).
    pub fn grants_names(&self) -> bool {
        self.endpoints
            .iter()
            .any(|e| matches!(e, Endpoint::Name(..)))
    }
}

/// Whether a granted directory may be written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DirMode {
    /// Read only (the default).
    #[default]
    Ro,
    /// Read and write.
    Rw,
}
