//! [`Runtime`]: the wasmtime engines, linkers and clock that every module shares.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine};

use crate::artifact_cache::{ArtifactCache, Compiled};
use crate::sandbox::CallState;
use crate::{Limits, shadow};

/// How often the engines' epoch advances; the resolution of time limits.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Stack a host function called from wasm may use on top of the wasm stack.
const HOST_STACK_BYTES: usize = 2 * 1024 * 1024;

/// The shared machinery modules are compiled and run with.
///
/// A `Runtime` holds wasmtime [`Engine`]s (compiled code is shared by every
/// call), the [`Linker`] that provides WASI 0.2 to guests (each call decides
/// what WASI actually grants), and a small background runtime that advances
/// the engines' epoch and serves timers and sockets. The wasm stack size is an
/// engine setting, so there is one engine per distinct `max_stack_kib` in use,
/// made when a module first asks for it. It is cheap to clone; the background
/// work stops when the last clone is dropped.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    cache: Option<ArtifactCache>,
    /// The engine for the default stack size (also in `backends`).
    default: Backend,
    /// Engines by wasm stack size; the ticker advances each one's epoch.
    backends: Arc<Mutex<Vec<Backend>>>,
    handle: tokio::runtime::Handle,
    /// Owned here so that dropping the runtime stops the clock; `None` once dropped.
    tokio: Option<tokio::runtime::Runtime>,
}

/// An engine for one wasm stack size and its linker.
#[derive(Clone)]
pub(crate) struct Backend {
    stack_bytes: usize,
    pub(crate) engine: Engine,
    pub(crate) linker: Arc<Linker<CallState>>,
}

impl Runtime {
    /// Starts a runtime: engines with fuel and epoch interruption enabled.
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
    pub fn with_cache_dir(dir: impl Into<std::path::PathBuf>) -> anyhow::Result<Self> {
        let cache = ArtifactCache::open(dir).map_err(anyhow::Error::msg)?;
        Self::build(Some(cache))
    }

    /// The compile cache, if this runtime has one.
    pub fn cache(&self) -> Option<&ArtifactCache> {
        self.inner.cache.as_ref()
    }

    fn build(cache: Option<ArtifactCache>) -> anyhow::Result<Self> {
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolhost-clock")
            .enable_time()
            .enable_io()
            .build()?;
        let backends: Arc<Mutex<Vec<Backend>>> = Arc::default();
        let ticking = Arc::downgrade(&backends);
        tokio.spawn(async move {
            let mut interval = tokio::time::interval(EPOCH_TICK);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                let Some(backends) = ticking.upgrade() else {
                    return;
                };
                let backends = backends.lock().unwrap_or_else(PoisonError::into_inner);
                for backend in backends.iter() {
                    backend.engine.increment_epoch();
                }
            }
        });
        let default = new_backend(Limits::default().stack_bytes())?;
        backends
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(default.clone());
        Ok(Self {
            inner: Arc::new(Inner {
                cache,
                default,
                backends,
                handle: tokio.handle().clone(),
                tokio: Some(tokio),
            }),
        })
    }

    /// The engine for modules with the default wasm stack size.
    pub fn engine(&self) -> &Engine {
        &self.inner.default.engine
    }

    /// The engine and linker for modules under `limits` (made on first use).
    pub(crate) fn backend(&self, limits: &Limits) -> anyhow::Result<Backend> {
        let stack_bytes = limits.stack_bytes();
        let mut backends = self
            .inner
            .backends
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = backends.iter().find(|b| b.stack_bytes == stack_bytes) {
            return Ok(found.clone());
        }
        let backend = new_backend(stack_bytes)?;
        backends.push(backend.clone());
        Ok(backend)
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

    /// Runs `future` to completion on the calling thread.
    ///
    /// Safe to call from inside another tokio runtime: the work then moves to
    /// a scoped thread instead of panicking.
    pub(crate) fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let handle = &self.inner.handle;
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| {
                s.spawn(|| handle.block_on(future))
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
        } else {
            handle.block_on(future)
        }
    }
}

fn new_backend(stack_bytes: usize) -> anyhow::Result<Backend> {
    let mut config = Config::new();
    config.consume_fuel(true);
    config.epoch_interruption(true);
    config.max_wasm_stack(stack_bytes);
    config.async_stack_size(stack_bytes.saturating_add(HOST_STACK_BYTES));
    let engine = Engine::new(&config).map_err(anyhow::Error::from)?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(anyhow::Error::from)?;
    shadow::add_to_linker(&mut linker)?;
    Ok(Backend {
        stack_bytes,
        engine,
        linker: Arc::new(linker),
    })
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Never block (or panic) when the last clone is dropped inside async code.
        if let Some(rt) = self.tokio.take() {
            rt.shutdown_background();
        }
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").finish_non_exhaustive()
    }
}
