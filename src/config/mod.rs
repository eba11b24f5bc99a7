//! `toolhost.toml`: the operator's configuration of limits, controller and modules.
//!
//! ```toml
//! [limits]                 # defaults for every module
//! fuel = 1000000000
//! timeout_ms = 10000
//! memory_mib = 64
//! max_output_bytes = 1048576
//!
//! [controller]
//! default_mode = "activate"
//! rules = [{ mode = "deactivate", pattern = "text_*" }]
//!
//! [[modules]]
//! name = "calc"            # optional; default: the file stem
//! path = "tools/calc.wasm" # relative to this file
//! limits = { fuel = 5000000 }
//!
//! [modules.grants]         # nothing unless granted
//! dirs = [{ host = "data", guest = "/data", mode = "ro" }]
//! network = { allow = ["api.example.com:443"] }
//!
//! [[modules]]
//! bundled = "json"         # one of the example modules built into toolhost
//!
//! [cache]                  # the command's compile cache (optional)
//! dir = "cache"            # relative to this file
//!
//! [resolver]               # name servers for granted host names (optional)
//! name_servers = ["10.0.0.2:53"]
//! ```
//!
//! Every key of [`Limits`](crate::Limits) may appear in `[limits]` and in a module's `limits`.
//!
//! `format.rs` says what the keys mean and checks them; `load.rs` finds the
//! file, reads it and loads the modules it names. The top layer of the
//! library.

mod error;
mod format;
mod load;
mod lock;
mod oci;
mod report;
mod restart;

pub use error::ConfigError;
pub use format::{CacheConfig, Config, ModuleEntry, Origin, ResolverConfig, ServeConfig};
pub use load::{CONFIG_FILE_NAME, LoadedConfig};
pub use lock::{LOCK_FILE_NAME, LockEntry, Lockfile};
pub use oci::{OciOutcome, OciPin};
pub use report::{LoadReport, LoadedModule};
pub use restart::RestartSetting;
