//! What every command starts from: the config, the runtime it is served
//! with, and its modules, loaded past the ones that fail (with a warning).

use std::path::Path;

use anyhow::Context;
use toolhost::config::{LoadReport, LoadedConfig};
use toolhost::{ArtifactCache, CompileWorker, Runtime, RuntimeBuilder, ToolManager};

/// The config and the operator's overrides from the command line.
pub struct Setup<'a> {
    pub config: Option<&'a Path>,
    pub activate: &'a [String],
    pub deactivate: &'a [String],
    pub compile_cache: bool,
    pub cache_dir: Option<&'a Path>,
}

/// A config's modules, loaded, and a manager serving those that loaded.
pub struct Served {
    pub report: LoadReport,
    pub manager: ToolManager,
}

impl Setup<'_> {
    /// The config: `--config`, else `./toolhost.toml`, else the bundled modules.
    /// Components pulled from registries are kept in `oci` of the cache
    /// directory (`--cache-dir`, else the config's, else the default).
    pub fn config(&self) -> anyhow::Result<LoadedConfig> {
        let mut loaded = LoadedConfig::discover(self.config)?;
        loaded.store_dir = self.cache_dir.map(|dir| dir.join("oci"));
        Ok(loaded)
    }

    /// The runtime: with the compile cache unless it is turned off (by
    /// `--no-cache` or the config's `[cache] enabled = false`) or cannot be
    /// set up (then every run compiles anew, with a warning). The directory:
    /// `--cache-dir`, else the config's `[cache] dir`, else the default.
    pub fn runtime(&self, loaded: &LoadedConfig) -> anyhow::Result<Runtime> {
        let enabled =
            self.compile_cache && (self.cache_dir.is_some() || loaded.config.cache.enabled);
        if enabled {
            let dir = self
                .cache_dir
                .map(Path::to_path_buf)
                .or_else(|| loaded.cache_dir())
                .or_else(ArtifactCache::default_dir);
            if let Some(dir) = dir {
                match runtime_builder(loaded)?.cache_dir(dir).build() {
                    Ok(runtime) => return Ok(runtime),
                    Err(e) => {
                        tracing::warn!("compile cache unavailable, compiling every time: {e:#}")
                    }
                }
            }
        }
        runtime_builder(loaded)?
            .build()
            .context("cannot start the WebAssembly runtime")
    }

    /// Loads the config's modules, warning on stderr about each that fails,
    /// and a manager serving the others with the command line's overrides.
    pub fn serve(&self) -> anyhow::Result<Served> {
        let loaded = self.config()?;
        let runtime = self.runtime(&loaded)?;
        let mut report = loaded.load_report(&runtime, &[]);
        let manager = loaded.manager_for_report(&mut report);
        warn_failures(&report);
        self.apply_overrides(&manager)?;
        Ok(Served { report, manager })
    }

    /// `--activate` and `--deactivate`, ahead of every config rule.
    pub fn apply_overrides(&self, manager: &ToolManager) -> anyhow::Result<()> {
        for pattern in self.activate {
            manager.activate_tool(pattern).context("--activate")?;
        }
        for pattern in self.deactivate {
            manager.deactivate_tool(pattern).context("--deactivate")?;
        }
        Ok(())
    }
}

/// Each module that did not load, on stderr: the command goes on without it.
pub fn warn_failures(report: &LoadReport) {
    for failure in &report.failures {
        eprintln!(
            "toolhost: warning: {} (going on without it)",
            toolhost::escape_controls(&failure.to_string())
        );
    }
}

/// A runtime as the command runs it: components compiled by this program
/// in a child process (`toolhost compile-worker`), where compile limits
/// hold, and the config's name servers and instance pool.
pub fn runtime_builder(loaded: &LoadedConfig) -> anyhow::Result<RuntimeBuilder> {
    let program = std::env::current_exe().context("cannot find this program's path")?;
    let worker = CompileWorker::new(program, ["compile-worker"]);
    let builder = loaded.runtime_builder().map_err(anyhow::Error::msg)?;
    Ok(builder.compile_worker(worker))
}
