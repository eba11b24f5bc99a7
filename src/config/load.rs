//! Finding `toolhost.toml`, reading it, and loading what it names: the
//! modules (in parallel) and a [`ToolManager`] serving them.

use std::path::{Path, PathBuf};

use crate::module::{BUNDLED_MODULES, LoadError, WasmModule};
use crate::parallel::run_parallel;
use crate::policy::Limits;
use crate::registry::{DEFAULT_MAX_PARALLEL, ToolManager};
use crate::sandbox::{Runtime, RuntimeBuilder, open_file_limit};

use super::error::ConfigError;
use super::format::{Config, ModuleEntry};
use super::oci::OciLoader;
use super::report::load_reusing;

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

    /// The loader of OCI modules, if any entry is one.
    pub(super) fn oci_loader(&self) -> Option<OciLoader> {
        self.module_entries()
            .iter()
            .any(|entry| entry.oci.is_some())
            .then(|| OciLoader::new(self))
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

    /// Loads every module and returns them with their limits applied, in
    /// config order. Modules are loaded (compiled, or read from the compile
    /// cache) in parallel, one thread per core at most.
    pub fn load_modules(&self, runtime: &Runtime) -> Result<Vec<WasmModule>, ConfigError> {
        let base = self.base_dir();
        let workers = std::thread::available_parallelism().map_or(1, usize::from);
        let oci = self.oci_loader();
        run_parallel(&self.module_entries(), workers, |entry| {
            load_reusing(entry, runtime, base, self.config.limits, &[], oci.as_ref())
                .map(|loaded| loaded.module)
        })
        .into_iter()
        .map(|loaded| {
            loaded.map_err(|error| ConfigError::Load {
                path: self.label(),
                error,
            })
        })
        .collect()
    }

    /// Loads one module `entry` as this config loads it (an OCI module with
    /// the lockfile, the `[[trust]]` rules and the pull store).
    pub fn load_entry(
        &self,
        runtime: &Runtime,
        entry: &ModuleEntry,
    ) -> Result<WasmModule, LoadError> {
        let oci = entry.oci.is_some().then(|| OciLoader::new(self));
        load_reusing(
            entry,
            runtime,
            self.base_dir(),
            self.config.limits,
            &[],
            oci.as_ref(),
        )
        .map(|loaded| loaded.module)
    }

    /// A manager with every module registered and the config's controller.
    pub fn build_manager(&self, runtime: &Runtime) -> Result<ToolManager, ConfigError> {
        self.manager_for(self.load_modules(runtime)?)
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

    /// A manager with `modules` registered and the config's controller.
    ///
    /// Warns when the calls it may run at once, each holding up to its
    /// module's `max_open_files`, could need more files than the process
    /// may open.
    pub fn manager_for(&self, modules: Vec<WasmModule>) -> Result<ToolManager, ConfigError> {
        let mut manager = self.empty_manager(modules.iter());
        for module in modules {
            manager
                .register(module)
                .map_err(|error| ConfigError::Register {
                    path: self.label(),
                    error,
                })?;
        }
        Ok(manager)
    }
}

/// Warns when `calls` calls at once, each holding `most` files (the largest
/// `max_open_files` of the modules), could exceed the process's limit.
fn warn_if_files_could_run_out(most: Option<u64>, calls: usize) {
    let (Some(limit), Some(most)) = (open_file_limit(), most) else {
        return;
    };
    let needed = most.saturating_mul(calls as u64);
    if needed > limit {
        tracing::warn!(
            "{calls} calls at once, each holding up to max_open_files = {most} files, \
             may need {needed} open files, more than this process may open ({limit}): \
             lower max_open_files or raise the limit (ulimit -n)"
        );
    }
}

impl LoadedConfig {
    /// A manager with the config's controller and batch timeout, nothing
    /// registered yet; warns if `modules` could need more open files than
    /// the process may have.
    pub(super) fn empty_manager<'a>(
        &self,
        modules: impl Iterator<Item = &'a WasmModule>,
    ) -> ToolManager {
        let most = modules.map(|m| m.limits().max_open_files).max();
        warn_if_files_could_run_out(most, DEFAULT_MAX_PARALLEL);
        let mut manager = ToolManager::new().with_controller(self.config.controller.clone());
        manager.set_batch_timeout(self.config.limits.batch_timeout());
        manager
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

impl ModuleEntry {
    /// Loads this module with its limits and grants; relative paths are taken from `base`.
    ///
    /// An `oci` entry is fetched with only its own pins (no lockfile, no
    /// `[[trust]]` rules, nothing kept): load it through
    /// [`LoadedConfig`] for those.
    pub fn load(
        &self,
        runtime: &Runtime,
        base: &Path,
        defaults: Limits,
    ) -> Result<WasmModule, LoadError> {
        let oci = self.oci.is_some().then(|| OciLoader::standalone(base));
        load_reusing(self, runtime, base, defaults, &[], oci.as_ref()).map(|loaded| loaded.module)
    }

    /// Loads the component `bytes` as module `name`, with this entry's
    /// limits (over `defaults`), grants (relative paths from `base`) and
    /// warmth; the entry's `name`, `path` and `bundled` are not used.
    pub fn load_bytes(
        &self,
        runtime: &Runtime,
        base: &Path,
        defaults: Limits,
        name: &str,
        bytes: &[u8],
    ) -> Result<WasmModule, LoadError> {
        let access = self.access(name, base)?;
        let module = WasmModule::from_bytes(runtime, name, bytes, self.limits.apply(defaults))?;
        self.configure(module, name, access)
    }
}
