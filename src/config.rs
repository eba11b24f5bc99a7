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
//! ```
//!
//! Every key of [`Limits`] may appear in `[limits]` and in a module's `limits`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::rollout::run_parallel;
use crate::{
    BUNDLED_MODULES, Grants, LimitOverrides, Limits, LoadError, RegisterError, Runtime,
    ToolController, ToolManager, WasmModule, bundled_module, names,
};

/// The name toolhost looks for in the working directory.
pub const CONFIG_FILE_NAME: &str = "toolhost.toml";

/// The largest config file accepted, in bytes.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The parsed `toolhost.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Default limits for every module.
    #[serde(default)]
    pub limits: Limits,
    /// Which tools are active.
    #[serde(default)]
    pub controller: ToolController,
    /// The modules to load. With no config file at all, the bundled ones.
    #[serde(default)]
    pub modules: Vec<ModuleEntry>,
    /// The compile cache of the command-line program.
    #[serde(default)]
    pub cache: CacheConfig,
}

/// `[cache]`: where the `toolhost` command keeps compiled components. The
/// command line's `--no-cache` and `--cache-dir` override it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// Keep compiled components on disk (default `true`).
    pub enabled: bool,
    /// The cache directory, relative to the config file; default
    /// `$XDG_CACHE_HOME/toolhost`, else `~/.cache/toolhost`.
    pub dir: Option<PathBuf>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            dir: None,
        }
    }
}

/// One `[[modules]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleEntry {
    /// The module name; default: the file stem (or the bundled name).
    pub name: Option<String>,
    /// The component file, relative to the config file.
    pub path: Option<PathBuf>,
    /// A bundled example module instead of a file: `calc`, `text` or `json`.
    pub bundled: Option<String>,
    /// Overrides of the default limits for this module.
    #[serde(default)]
    pub limits: LimitOverrides,
    /// What this module's calls may reach; nothing unless granted.
    #[serde(default)]
    pub grants: Grants,
}

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

/// A config and the file it came from (`None`: the built-in defaults).
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    /// The settings.
    pub config: Config,
    /// The file they were read from.
    pub path: Option<PathBuf>,
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
        })
    }

    fn label(&self) -> PathBuf {
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
        run_parallel(&self.module_entries(), workers, |entry| {
            entry.load(runtime, base, self.config.limits)
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

    /// The cache directory the config names (`[cache] dir`, resolved
    /// against the config's folder), if it names one.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        let dir = self.config.cache.dir.as_ref()?;
        Some(self.base_dir().join(dir))
    }

    /// A manager with `modules` registered and the config's controller.
    pub fn manager_for(&self, modules: Vec<WasmModule>) -> Result<ToolManager, ConfigError> {
        let mut manager = ToolManager::new().with_controller(self.config.controller.clone());
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

    /// Parses and checks config text; the error names the key.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let config: Config =
            toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
        config.validate()?;
        Ok(config)
    }

    /// Checks limits, module entries and names.
    pub fn validate(&self) -> Result<(), String> {
        self.limits
            .validate()
            .map_err(|e| format!("[limits]: {e}"))?;
        let mut seen = HashSet::new();
        for (i, entry) in self.modules.iter().enumerate() {
            let at = format!("[[modules]] #{}", i + 1);
            entry
                .limits
                .apply(self.limits)
                .validate()
                .map_err(|e| format!("{at} limits: {e}"))?;
            entry
                .grants
                .network
                .endpoints()
                .map_err(|e| format!("{at}: {e}"))?;
            let name = entry.module_name().map_err(|e| format!("{at}: {e}"))?;
            names::check_module_name(&name).map_err(|e| format!("{at}: {e}"))?;
            if !seen.insert(name.clone()) {
                return Err(format!("{at}: module name '{name}' is used twice"));
            }
        }
        Ok(())
    }
}

impl ModuleEntry {
    /// Where the component comes from: its path or `bundled NAME`.
    pub fn source(&self) -> String {
        match (&self.path, &self.bundled) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(bundled)) => format!("bundled {bundled}"),
            (None, None) => "?".to_string(),
        }
    }

    /// The module's name: `name`, else the bundled name or the file stem.
    pub fn module_name(&self) -> Result<String, String> {
        match (&self.name, &self.path, &self.bundled) {
            (_, Some(_), Some(_)) => Err("give either `path` or `bundled`, not both".into()),
            (_, None, None) => Err("missing `path` (the component file) or `bundled`".into()),
            (Some(name), _, _) => Ok(name.clone()),
            (None, _, Some(bundled)) => Ok(bundled.clone()),
            (None, Some(path), None) => Ok(names::module_name_from_stem(
                &path
                    .file_stem()
                    .map(|s| s.to_string_lossy())
                    .unwrap_or_default(),
            )),
        }
    }

    /// Loads this module with its limits and grants; relative paths are taken from `base`.
    pub fn load(
        &self,
        runtime: &Runtime,
        base: &Path,
        defaults: Limits,
    ) -> Result<WasmModule, LoadError> {
        let limits = self.limits.apply(defaults);
        let name = self
            .module_name()
            .map_err(|e| LoadError::new("?", crate::LoadErrorKind::InvalidName, e))?;
        let grants = self
            .grants
            .resolve(base)
            .map_err(|e| LoadError::new(&name, crate::LoadErrorKind::InvalidGrants, e))?;
        let module = self.load_component(runtime, base, &name, limits)?;
        Ok(module.with_grants(grants))
    }

    fn load_component(
        &self,
        runtime: &Runtime,
        base: &Path,
        name: &str,
        limits: Limits,
    ) -> Result<WasmModule, LoadError> {
        if let Some(path) = &self.path {
            return WasmModule::from_file(runtime, &base.join(path), Some(name), limits);
        }
        let bundled = self.bundled.as_deref().unwrap_or_default();
        let Some(bytes) = bundled_module(bundled) else {
            let known: Vec<&str> = BUNDLED_MODULES.iter().map(|m| m.name).collect();
            return Err(LoadError::new(
                name,
                crate::LoadErrorKind::Io,
                format!(
                    "there is no bundled module '{bundled}' (there are: {})",
                    known.join(", ")
                ),
            ));
        };
        WasmModule::from_bytes(runtime, name, bytes, limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_config_parses() {
        let c = Config::from_toml(
            r#"
            [limits]
            fuel = 5
            [controller]
            default_mode = "deactivate"
            rules = [{ mode = "activate", pattern = "calc_*" }]
            [[modules]]
            path = "tools/My_Calc.wasm"
            limits = { timeout_ms = 100 }
            [[modules]]
            bundled = "json"
            "#,
        )
        .unwrap();
        assert_eq!(c.limits.fuel, 5);
        assert_eq!(c.limits.memory_mib, 64);
        assert!(c.controller.check_tool_status("calc_evaluate"));
        assert_eq!(c.modules[0].module_name().unwrap(), "my-calc");
        assert_eq!(c.modules[0].limits.timeout_ms, Some(100));
        assert_eq!(c.modules[1].module_name().unwrap(), "json");
    }

    #[test]
    fn errors_name_the_key() {
        let e = Config::from_toml("[limits]\nfuell = 3\n").unwrap_err();
        assert!(e.contains("unknown field `fuell`"), "{e}");
        let e = Config::from_toml("[limits]\nfuel = 0\n").unwrap_err();
        assert_eq!(e, "[limits]: `fuel` must be greater than 0");
        let e = Config::from_toml("[limits]\nfuel = -1\n").unwrap_err();
        assert!(e.contains("fuel"), "{e}");
        let e = Config::from_toml("[[modules]]\nname = \"a\"\n").unwrap_err();
        assert!(e.contains("missing `path`"), "{e}");
        let e =
            Config::from_toml("[[modules]]\nbundled = \"calc\"\n[[modules]]\nbundled = \"calc\"\n")
                .unwrap_err();
        assert!(e.contains("used twice"), "{e}");
        let e = Config::from_toml("[[modules]]\nname = \"A_b\"\npath = \"x.wasm\"\n").unwrap_err();
        assert!(e.contains("[[modules]] #1"), "{e}");
        let e = Config::from_toml("[controller]\ndefault_mode = \"on\"\n").unwrap_err();
        assert!(e.contains("invalid mode 'on'"), "{e}");
        let e = Config::from_toml("[[modules]]\nbundled = \"calc\"\nlimits = { memory_mib = 0 }\n")
            .unwrap_err();
        assert!(e.contains("memory_mib"), "{e}");
        for key in Limits::SPECS.map(|spec| spec.key) {
            let zero = format!("[[modules]]\nbundled = \"calc\"\nlimits = {{ {key} = 0 }}\n");
            let e = Config::from_toml(&zero).unwrap_err();
            assert_eq!(
                e,
                format!("[[modules]] #1 limits: `{key}` must be greater than 0")
            );
            let huge = format!("[limits]\n{key} = 1000000000000000000\n");
            let e = Config::from_toml(&huge).unwrap_err();
            assert!(e.starts_with(&format!("[limits]: `{key}` = ")), "{e}");
        }
        let e = Config::from_toml(
            "[[modules]]\nbundled = \"calc\"\n[modules.grants]\nnetwork = { allow = [\"x\"] }\n",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "[[modules]] #1: grants.network.allow[0]: 'x' has no port; write host:port, for example \"api.example.com:443\""
        );
    }
}
