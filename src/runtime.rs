//! [`Runtime`]: the one wasmtime engine, linker and clock that every module shares.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Cache, CacheConfig, Config, Engine};

use crate::sandbox::CallState;

/// How often the engine's epoch advances; the resolution of time limits.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The shared machinery modules are compiled and run with.
///
/// One `Runtime` holds one wasmtime [`Engine`] (compiled code is shared by
/// every call), the [`Linker`] that provides WASI 0.2 to guests (each call
/// decides what WASI actually grants), and a small background runtime that
/// advances the engine's epoch and serves timers. It is cheap to clone; the
/// background work stops when the last clone is dropped.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    linker: Linker<CallState>,
    handle: tokio::runtime::Handle,
    /// Owned here so that dropping the runtime stops the clock; `None` once dropped.
    tokio: Option<tokio::runtime::Runtime>,
}

impl Runtime {
    /// Starts a runtime: an engine with fuel and epoch interruption enabled.
    pub fn new() -> anyhow::Result<Self> {
        Self::build(None)
    }

    /// Starts a runtime that keeps compiled components in wasmtime's on-disk
    /// cache (in the user's cache directory), so that loading the same
    /// component again skips compiling it.
    pub fn with_compile_cache() -> anyhow::Result<Self> {
        let cache = Cache::new(CacheConfig::new()).map_err(anyhow::Error::from)?;
        Self::build(Some(cache))
    }

    fn build(cache: Option<Cache>) -> anyhow::Result<Self> {
        let mut config = Config::new();
        config.consume_fuel(true);
        config.epoch_interruption(true);
        config.cache(cache);
        let engine = Engine::new(&config).map_err(anyhow::Error::from)?;

        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(anyhow::Error::from)?;
        refuse_symlinks(&mut linker)?;

        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolhost-clock")
            .enable_time()
            .enable_io()
            .build()?;
        let ticking = engine.clone();
        tokio.spawn(async move {
            let mut interval = tokio::time::interval(EPOCH_TICK);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                interval.tick().await;
                ticking.increment_epoch();
            }
        });

        let inner = Inner {
            engine,
            linker,
            handle: tokio.handle().clone(),
            tokio: Some(tokio),
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    pub(crate) fn linker(&self) -> &Linker<CallState> {
        &self.inner.linker
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

/// The `wasi:filesystem` version wasmtime-wasi provides (and guests' imports of
/// any 0.2.x version resolve to).
const WASI_FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Replaces `descriptor.symlink-at` with one that always answers
/// `not-permitted`: a guest with a writable directory could otherwise leave a
/// link on the host pointing outside its grant, for any host process that
/// later follows it.
fn refuse_symlinks(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    use wasmtime::component::Resource;
    use wasmtime_wasi::p2::bindings::filesystem::types::{Descriptor, ErrorCode};

    linker.allow_shadowing(true);
    linker
        .instance(WASI_FILESYSTEM_TYPES)
        .map_err(anyhow::Error::from)?
        .func_wrap(
            "[method]descriptor.symlink-at",
            |_store, (_dir, _target, _link): (Resource<Descriptor>, String, String)| {
                Ok((Err::<(), ErrorCode>(ErrorCode::NotPermitted),))
            },
        )
        .map_err(anyhow::Error::from)?;
    linker.allow_shadowing(false);
    Ok(())
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
