//! Finding `toolhost.toml` and reading it: a [`LoadedConfig`], the config
//! and where it came from, with the paths and settings read from it.
//! Loading what it names is `report.rs`'s.

use std::path::{Path, PathBuf};

use crate::module::BUNDLED_MODULES;
use crate::sandbox::{Runtime, RuntimeBuilder};

use super::error::ConfigError;
use super::format::{Config, ModuleEntry};

/// The name toolhost looks for in the working directory.
pub const CONFIG_FILE_NAME: &str = "toolhost.toml";

/// The largest config file accepted, in bytes.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A config and the file it came from (`None`: the built-in defaults).
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    /// The settings.
    pub config: Config,
    /// The file they were read from.
    pub path: Option<PathBuf>,
    /// Where components pulled from OCI registries are kept (default:
    /// `oci` in the `[cache] dir`, else in the default cache directory).
    pub store_dir: Option<PathBuf>,
}

impl LoadedConfig {
    /// Reads `explicit` if given, else `toolhost.toml` in the working
    /// directory if it exists, else the defaults (the bundled modules).
    pub fn discover(explicit: Option<&Path>) -> Result<Self, ConfigError> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            None => {
                let local = PathBuf::from(CONFIG_FILE_NAME);
                if !local.is_file() {
                    return Ok(Self::default());
                }
                local
            }
        };
        let config = Config::from_file(&path)?;
        Ok(Self {
            config,
            path: Some(path),
            store_dir: None,
        })
    }

    pub(super) fn label(&self) -> PathBuf {
        self.path
            .clone()
            .unwrap_or_else(|| PathBuf::from("(defaults)"))
    }

    /// The module entries in force: the config's, or every bundled module.
    pub fn module_entries(&self) -> Vec<ModuleEntry> {
        if self.path.is_none() && self.config.modules.is_empty() {
            return BUNDLED_MODULES
                .iter()
                .map(|m| ModuleEntry {
                    bundled: Some(m.name.to_string()),
                    ..ModuleEntry::default()
                })
                .collect();
        }
        self.config.modules.clone()
    }

    /// The directory relative paths in this config are taken from.
    pub fn base_dir(&self) -> &Path {
        self.path
            .as_deref()
            .and_then(Path::parent)
            .unwrap_or(Path::new(""))
    }

    /// A runtime builder with this config's instance pool (`[pool]`),
    /// session bounds (`[sessions]`) and name servers (`[resolver]`); add a
    /// compile cache or worker as the embedder wants. The error names the
    /// key.
    pub fn runtime_builder(&self) -> Result<RuntimeBuilder, String> {
        let mut builder = Runtime::builder()
            .pool(self.config.pool.clone())
            .sessions(self.config.sessions);
        let servers = self.config.resolver.servers()?;
        if !servers.is_empty() {
            builder = builder.name_servers(servers);
        }
        Ok(builder)
    }

    /// The cache directory the config names (`[cache] dir`, resolved
    /// against the config's folder), if it names one.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        let dir = self.config.cache.dir.as_ref()?;
        Some(self.base_dir().join(dir))
    }
}

impl Config {
    /// Reads and checks the config file at `path`.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let read_error = |error| ConfigError::Read {
            path: path.to_path_buf(),
            error,
        };
        let size = std::fs::metadata(path).map_err(read_error)?.len();
        if size > MAX_CONFIG_BYTES {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "the file is {size} bytes; the most accepted is {MAX_CONFIG_BYTES}"
                ),
            });
        }
        let text = std::fs::read_to_string(path).map_err(read_error)?;
        Self::from_toml(&text).map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })
    }
}
