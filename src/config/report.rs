//! The one load path: loading a config's modules (all or stop at the first
//! error, or going on past the ones that fail and reusing modules of an
//! earlier load that did not change, for a server that reloads its config),
//! one [`ModuleEntry`] alone, and the [`ToolManager`] that serves them.

use std::path::Path;

use crate::module::{LoadError, LoadErrorKind, WasmModule};
use crate::parallel::run_parallel;
use crate::policy::{Access, Limits, limit_key};
use crate::registry::{DEFAULT_MAX_PARALLEL, ToolManager};
use crate::sandbox::{Runtime, open_file_limit};

use super::error::ConfigError;
use super::format::{ModuleEntry, Origin};
use super::load::LoadedConfig;
use super::oci::{FetchMode, OciLoader};

/// What loading a config's modules gave: the modules that loaded, in config
/// order, and why the others did not.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// The modules that loaded.
    pub modules: Vec<LoadedModule>,
    /// Why each of the others did not (a load error, or tools whose names
    /// another module already registered).
    pub failures: Vec<ConfigError>,
}

/// One module of a config, loaded.
#[derive(Debug, Clone)]
pub struct LoadedModule {
    /// Its entry in the config.
    pub entry: ModuleEntry,
    /// The module.
    pub module: WasmModule,
    /// What it was loaded from: an unchanged key means nothing that loading
    /// depends on changed.
    key: ModuleKey,
    /// Whether it was taken from the previous load rather than compiled.
    reused: bool,
}

impl LoadedModule {
    /// Whether this module was taken unchanged from the previous load given
    /// to [`LoadedConfig::load_report`] rather than compiled again.
    pub fn reused(&self) -> bool {
        self.reused
    }

    /// The BLAKE3 hash of the component bytes the module was loaded from.
    pub fn component_hash(&self) -> [u8; 32] {
        self.key.component
    }
}

/// What a loaded module depends on: its name, its limits and the
/// component's bytes (by BLAKE3). Grants are resolved anew each time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ModuleKey {
    name: String,
    limits: Limits,
    component: [u8; 32],
}

impl LoadedConfig {
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

    /// Loads every module, in parallel, going on past the ones that fail.
    ///
    /// A module of `previous` whose name, limits and component bytes are
    /// unchanged is reused, not compiled again (its grants are resolved
    /// anew).
    pub fn load_report(&self, runtime: &Runtime, previous: &[LoadedModule]) -> LoadReport {
        let base = self.base_dir();
        let workers = std::thread::available_parallelism().map_or(1, usize::from);
        let entries = self.module_entries();
        let oci = self.oci_loader();
        let results = run_parallel(&entries, workers, |entry| {
            load_reusing(
                entry,
                runtime,
                base,
                self.config.limits,
                previous,
                oci.as_ref(),
            )
        });
        let mut report = LoadReport::default();
        for (entry, result) in entries.into_iter().zip(results) {
            let result = result.or_else(|error| keep_previous(&entry, error, previous));
            match result {
                Ok(Reusable {
                    module,
                    key,
                    reused,
                }) => report.modules.push(LoadedModule {
                    entry,
                    module,
                    key,
                    reused,
                }),
                Err(error) => report.failures.push(ConfigError::Load {
                    path: self.label(),
                    error,
                }),
            }
        }
        report
    }

    /// A manager with the report's modules and the config's controller; a
    /// module whose tool names another module already registered is left
    /// out, and its conflict added to the report's failures.
    pub fn manager_for_report(&self, report: &mut LoadReport) -> ToolManager {
        let mut manager = self.empty_manager(report.modules.iter().map(|m| &m.module));
        let mut kept = Vec::with_capacity(report.modules.len());
        for loaded in report.modules.drain(..) {
            match manager.register(loaded.module.clone()) {
                Ok(()) => kept.push(loaded),
                Err(error) => report.failures.push(ConfigError::Register {
                    path: self.label(),
                    error,
                }),
            }
        }
        report.modules = kept;
        manager
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

/// Warns when `calls` calls at once, each holding `most` files (the largest
/// `max_open_files` of the modules), could exceed the process's limit.
fn warn_if_files_could_run_out(most: Option<u64>, calls: usize) {
    let (Some(limit), Some(most)) = (open_file_limit(), most) else {
        return;
    };
    let needed = most.saturating_mul(calls as u64);
    if needed > limit {
        let key = limit_key::max_open_files;
        tracing::warn!(
            "{calls} calls at once, each holding up to {key} = {most} files, \
             may need {needed} open files, more than this process may open ({limit}): \
             lower {key} or raise the limit (ulimit -n)"
        );
    }
}

/// An OCI module that failed to fetch or verify, where `previous` (the
/// load before) served it: that module goes on serving, and the error is
/// still reported (logged).
fn keep_previous(
    entry: &ModuleEntry,
    error: LoadError,
    previous: &[LoadedModule],
) -> Result<Reusable, LoadError> {
    let fetch_failed = matches!(
        error.kind,
        LoadErrorKind::Fetch | LoadErrorKind::NotVerified
    );
    let name = entry.module_name().ok();
    let before = previous
        .iter()
        .find(|p| p.entry.oci.is_some() && Some(p.module.name()) == name.as_deref());
    match (fetch_failed && entry.oci.is_some(), before) {
        (true, Some(before)) => {
            tracing::warn!(
                "{}; the module loaded before keeps serving",
                crate::escape::escape_controls(&error.to_string())
            );
            Ok(Reusable {
                module: before.module.clone(),
                key: before.key.clone(),
                reused: true,
            })
        }
        _ => Err(error),
    }
}

/// A module loaded by [`load_reusing`].
pub(super) struct Reusable {
    pub module: WasmModule,
    key: ModuleKey,
    reused: bool,
}

/// Loads `entry` (relative paths from `base`, limits over `defaults`),
/// reusing the module of `previous` with the same key.
pub(super) fn load_reusing(
    entry: &ModuleEntry,
    runtime: &Runtime,
    base: &Path,
    defaults: Limits,
    previous: &[LoadedModule],
    oci: Option<&OciLoader>,
) -> Result<Reusable, LoadError> {
    let limits = entry.limits.apply(defaults);
    let invalid_name = |e| LoadError::new("?", LoadErrorKind::InvalidName, e);
    let name = entry.module_name().map_err(invalid_name)?;
    let origin = entry.origin(base).map_err(invalid_name)?;
    let access = entry.access(&name, base)?;
    let bytes = match (origin, oci) {
        (Origin::Local(source), _) => source.read(&name, &limits)?,
        (Origin::Oci(reference), Some(oci)) => {
            let pulled = oci.fetch(
                entry,
                &name,
                &reference,
                limits.max_component_bytes,
                FetchMode::Load,
            )?;
            tracing::debug!(module = %name, %reference, digest = %pulled.digest, verified = %pulled.verified, "fetched");
            std::borrow::Cow::Owned(pulled.bytes)
        }
        (Origin::Oci(reference), None) => {
            return Err(LoadError::new(
                &name,
                LoadErrorKind::Fetch,
                format!("{reference}: no OCI loader"),
            ));
        }
    };
    let key = ModuleKey {
        name: name.clone(),
        limits,
        component: *blake3::hash(&bytes).as_bytes(),
    };
    let (module, reused) = match previous.iter().find(|p| p.key == key) {
        Some(unchanged) => (unchanged.module.clone(), true),
        None => (
            WasmModule::from_bytes(runtime, &name, &bytes, limits)?,
            false,
        ),
    };
    let module = entry.configure(module, &name, access)?;
    Ok(Reusable {
        module,
        key,
        reused,
    })
}

impl ModuleEntry {
    /// What this entry's grants open, resolved against `base`.
    pub(super) fn access(&self, name: &str, base: &Path) -> Result<Access, LoadError> {
        self.grants
            .resolve(base)
            .map_err(|e| LoadError::new(name, LoadErrorKind::InvalidGrants, e))
    }

    /// `module` with `access`, this entry's warmth and instances of its
    /// own, as a fresh start would make it.
    pub(super) fn configure(
        &self,
        module: WasmModule,
        name: &str,
        access: Access,
    ) -> Result<WasmModule, LoadError> {
        let warmth = self
            .warmth()
            .map_err(|e| LoadError::new(name, LoadErrorKind::InvalidLimits, e))?;
        let module = match self.session_max_calls() {
            Some(max_calls) => module.with_sessions(max_calls),
            None => module.without_sessions(),
        };
        // Instances start anew, as on a first load: a reused module's warm,
        // made-ahead or session instances hold what earlier calls left in
        // them. (`with_access` renews them again only if the grants changed.)
        Ok(module.with_warmth(warmth).with_access(access))
    }

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
