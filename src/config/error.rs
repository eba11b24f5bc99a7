//! [`ConfigError`]: why a config could not be read, parsed or applied.

use std::path::PathBuf;

use crate::module::LoadError;
use crate::registry::RegisterError;

/// A config that could not be read, parsed or applied.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {error}")]
    Read {
        /// The config file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file is not valid TOML, has an unknown key or a bad value.
    #[error("invalid config {path}: {message}")]
    Invalid {
        /// The config file (or `(defaults)`).
        path: PathBuf,
        /// What is wrong, with the key.
        message: String,
    },
    /// A module could not be loaded.
    #[error("{path}: {error}")]
    Load {
        /// The config file (or `(defaults)`).
        path: PathBuf,
        /// Why the module did not load.
        error: LoadError,
    },
    /// Two modules provide the same tool name.
    #[error("{path}: {error}")]
    Register {
        /// The config file (or `(defaults)`).
        path: PathBuf,
        /// The conflict.
        error: RegisterError,
    },
}
