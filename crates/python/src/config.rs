//! `ToolManager.from_config`: a config file's modules and controller, on
//! a runtime set up as the config says (instance pool, name servers,
//! compile cache).

use std::path::Path;

use pyo3::prelude::*;
use toolhost::config::LoadedConfig;
use toolhost::{ArtifactCache, Runtime, ToolManager};

use crate::errors::config_error;
use crate::module::{PyWasmModule, recipe_for_loaded};

/// The manager the config at `path` describes, and its modules.
pub fn from_config(py: Python<'_>, path: &Path) -> PyResult<(ToolManager, Vec<PyWasmModule>)> {
    let fail = |message: String| config_error(py, message);
    let loaded = LoadedConfig::discover(Some(path)).map_err(|e| fail(e.to_string()))?;
    let runtime = runtime_for(&loaded).map_err(fail)?;
    let (manager, modules) = py
        .detach(|| {
            let report = loaded.load_report(&runtime, &[]);
            if let Some(failure) = report.failures.into_iter().next() {
                return Err(failure);
            }
            let modules: Vec<_> = report.modules.iter().map(|m| m.module.clone()).collect();
            let manager = loaded.manager_for(modules)?;
            Ok::<_, toolhost::config::ConfigError>((manager, report.modules))
        })
        .map_err(|e| fail(e.to_string()))?;
    let (base, defaults) = (loaded.base_dir(), loaded.config.limits);
    let modules = modules
        .iter()
        .map(|loaded| PyWasmModule {
            module: loaded.module.clone(),
            recipe: recipe_for_loaded(loaded, base, defaults),
        })
        .collect();
    Ok((manager, modules))
}

/// The runtime for `loaded`: its pool and name servers, and the compile
/// cache unless `[cache] enabled = false` (the config's `dir`, else the
/// user's cache directory; without one, every load compiles).
fn runtime_for(loaded: &LoadedConfig) -> Result<Runtime, String> {
    let start = |with_cache: bool| {
        let mut builder = loaded.runtime_builder()?;
        if with_cache && let Some(dir) = loaded.cache_dir().or_else(ArtifactCache::default_dir) {
            builder = builder.cache_dir(dir);
        }
        builder
            .build()
            .map_err(|e| format!("cannot start the WebAssembly runtime: {e:#}"))
    };
    if loaded.config.cache.enabled
        && let Ok(runtime) = start(true)
    {
        return Ok(runtime);
    }
    start(false)
}
