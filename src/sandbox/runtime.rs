//! [`Runtime`]: the engines, linkers, clock and compile cache every module
//! shares.

use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use super::linker::new_linker;
use super::state::CallState;
use crate::engine::{ArtifactCache, Clock, Compiled, Engines};
use crate::policy::Limits;

/// The shared machinery modules are compiled and run with.
///
/// A `Runtime` holds wasmtime engines (compiled code is shared by every
/// call), the linkers that provide WASI 0.2 to guests (each call decides
/// what WASI actually grants), a small background thread that advances the
/// engines' epoch and drives timers and sockets, and optionally a compile
/// cache. The wasm stack size is an engine setting, so there is one engine
/// per distinct `max_stack_kib` in use, made when a module first asks for
/// it. It is cheap to clone; the background work stops when the last clone
/// is dropped.
///
/// ```
/// use toolhost::{Limits, Runtime, Tool, WasmModule, bundled_module};
///
/// let runtime = Runtime::new()?;
/// let calc = bundled_module("calc").expect("calc is bundled");
/// let module = WasmModule::from_bytes(&runtime, "calc", calc, Limits::default())?;
/// assert_eq!(module.infos()[0].name, "calc_evaluate");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    engines: Engines<Linker<CallState>>,
    cache: Option<ArtifactCache>,
}

impl Runtime {
    /// Starts a runtime: engines with fuel and epoch interruption enabled,
    /// compiling every component in memory.
    pub fn new() -> anyhow::Result<Self> {
        Self::build(None)
    }

    /// Starts a runtime that keeps compiled components in the user's cache
    /// directory ([`ArtifactCache::default_dir`]), so that loading the same
    /// component again skips compiling it.
    pub fn with_compile_cache() -> anyhow::Result<Self> {
        let dir = ArtifactCache::default_dir()
            .ok_or_else(|| anyhow::anyhow!("no cache directory: set XDG_CACHE_HOME or HOME"))?;
        Self::with_cache_dir(dir)
    }

    /// Starts a runtime that keeps compiled components in `dir` (see
    /// [`ArtifactCache`] for what makes an entry trusted).
    pub fn with_cache_dir(dir: impl Into<PathBuf>) -> anyhow::Result<Self> {
        let cache = ArtifactCache::open(dir).map_err(anyhow::Error::msg)?;
        Self::build(Some(cache))
    }

    /// The compile cache, if this runtime has one.
    pub fn cache(&self) -> Option<&ArtifactCache> {
        self.inner.cache.as_ref()
    }

    fn build(cache: Option<ArtifactCache>) -> anyhow::Result<Self> {
        // Every call's files count against the process's limit: use all of it.
        super::open_file_limit();
        let runtime = Self {
            inner: Arc::new(Inner {
                engines: Engines::new()?,
                cache,
            }),
        };
        // The engine for the default limits, made now so that a broken
        // setup shows at start rather than at the first load.
        runtime.linker(&Limits::default())?;
        Ok(runtime)
    }

    /// The linker (and through it, the engine) for modules under `limits`.
    pub(crate) fn linker(&self, limits: &Limits) -> anyhow::Result<Arc<Linker<CallState>>> {
        let (_engine, linker) = self.inner.engines.get(limits.stack_bytes(), new_linker)?;
        Ok(linker)
    }

    /// Compiles component `bytes` for `engine`, or loads it from the cache.
    pub(crate) fn compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
    ) -> wasmtime::Result<(Component, Compiled)> {
        match &self.inner.cache {
            Some(cache) => cache.load_or_compile(engine, bytes),
            None => Ok((Component::from_binary(engine, bytes)?, Compiled::Fresh)),
        }
    }

    /// The clock every call's timers and sockets are driven by.
    pub(crate) fn clock(&self) -> &Clock {
        self.inner.engines.clock()
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("cache", &self.inner.cache)
            .finish_non_exhaustive()
    }
}
