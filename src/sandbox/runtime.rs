//! [`Runtime`]: the engines, linkers, clock and compile cache every module
//! shares.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use super::disposal::Disposal;
use super::linker::new_linker;
use super::ready::{ReadyBudget, ReadyInstances};
use super::resolver::NameResolver;
use super::sessions::SessionStore;
use super::state::CallState;
use crate::engine::{
    ArtifactCache, Clock, CompileFailure, CompileWorker, Compiled, Concurrency, EnginePair,
    Engines, PoolConfig, SlotShape, concurrency_of, describe_error,
};
use crate::policy::{Limits, SessionLimits};

/// The shared machinery modules are compiled and run with.
///
/// A `Runtime` holds wasmtime engines (compiled code is shared by every
/// call), the pool call instances come from ([`PoolConfig`]), the linkers
/// that provide WASI 0.2 (and WASIp3 and `wasi:http` where a component
/// uses them) to guests, each call deciding what WASI actually grants; the
/// clock thread that advances the engines' epoch and drives timers and
/// sockets; the budget and background thread of instances made ahead of
/// calls and the disposal of used stores; the `SessionStore` of
/// sessions' instances; the resolver of network grants' host names; and
/// optionally a compile cache and a compile worker. The wasm stack size is
/// an engine setting, so there are engines per distinct `max_stack_kib` in
/// use, made when a module first asks for them. It is cheap to clone; the
/// background work stops when the last clone is dropped.
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
    /// What a pooled instance's slot holds.
    slot: SlotShape,
    cache: Option<ArtifactCache>,
    resolver: NameResolver,
    worker: Option<CompileWorker>,
    /// Bounds the instances made ahead of calls, in all modules.
    ready: Arc<ReadyBudget>,
    /// Drops used stores off the callers' path.
    disposal: Arc<Disposal>,
    /// The instances of sessions, in all modules with sessions on.
    sessions: Arc<SessionStore>,
}

/// How a [`Runtime`] is set up: see [`Runtime::builder`].
#[derive(Debug, Clone, Default)]
pub struct RuntimeBuilder {
    cache_dir: Option<PathBuf>,
    name_servers: Option<Vec<SocketAddr>>,
    worker: Option<CompileWorker>,
    pool: Option<PoolConfig>,
    sessions: Option<SessionLimits>,
}

impl RuntimeBuilder {
    /// Keep compiled components in `dir` (see [`ArtifactCache`] for what
    /// makes an entry trusted), so that loading the same component again
    /// skips compiling it.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Look up the host names of network grants with these name servers
    /// (default: the system's, from `/etc/resolv.conf`; `/etc/hosts` is
    /// read either way).
    pub fn name_servers(mut self, servers: impl IntoIterator<Item = SocketAddr>) -> Self {
        self.name_servers = Some(servers.into_iter().collect());
        self
    }

    /// Compile components in child processes of `worker`, where the limits
    /// `compile_timeout_ms` and `compile_memory_mib` are enforced (default:
    /// in this process, where they cannot be).
    pub fn compile_worker(mut self, worker: CompileWorker) -> Self {
        self.worker = Some(worker);
        self
    }

    /// Take call instances from a pool configured as `pool` (default:
    /// [`PoolConfig::default`]); [`PoolConfig::disabled`] allocates every
    /// instance on demand.
    pub fn pool(mut self, pool: PoolConfig) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Bound the sessions of every module with sessions on as `limits` say
    /// (default: [`SessionLimits::default`]).
    pub fn sessions(mut self, limits: SessionLimits) -> Self {
        self.sessions = Some(limits);
        self
    }

    /// Starts the runtime.
    pub fn build(self) -> anyhow::Result<Runtime> {
        let pool = self.pool.unwrap_or_default();
        pool.validate().map_err(anyhow::Error::msg)?;
        let sessions = self.sessions.unwrap_or_default();
        sessions.validate().map_err(anyhow::Error::msg)?;
        let cache = match self.cache_dir {
            Some(dir) => Some(ArtifactCache::open(dir).map_err(anyhow::Error::msg)?),
            None => None,
        };
        let resolver = match &self.name_servers {
            Some(servers) => NameResolver::with_servers(servers),
            None => NameResolver::system(),
        };
        // Every call's files count against the process's limit: use all of it.
        super::open_file_limit();
        let slot = slot_shape();
        let engines = Engines::new(&pool, slot)?;
        let background = engines.background().clone();
        let runtime = Runtime {
            inner: Arc::new(Inner {
                engines,
                slot,
                cache,
                resolver,
                worker: self.worker,
                ready: Arc::new(ReadyBudget::new(&pool, background.clone())),
                disposal: Arc::new(Disposal::new(background)),
                sessions: SessionStore::new(sessions),
            }),
        };
        // The engine for the default limits, made now so that a broken
        // setup shows at start rather than at the first load.
        runtime.linkers(&Limits::default(), Concurrency::Off)?;
        Ok(runtime)
    }
}

impl Runtime {
    /// Starts a runtime: engines with fuel and epoch interruption enabled,
    /// compiling every component in memory.
    pub fn new() -> anyhow::Result<Self> {
        Self::builder().build()
    }

    /// How to start a runtime with a compile cache, name servers or a
    /// compile worker.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
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
        Self::builder().cache_dir(dir).build()
    }

    /// Starts now the background work that recent calls left for later
    /// (dropping the instances they used, making the next ones), instead of
    /// at the next tick of the clock (10 ms).
    ///
    /// Waking a thread costs the waker several microseconds, so a call
    /// leaves that work queued rather than wake the background thread on
    /// its way back. Call this where a thread of yours goes idle, such as
    /// tokio's [`on_thread_park`](tokio::runtime::Builder::on_thread_park)
    /// (as `toolhost serve` does), so that the work is done while nothing
    /// waits for it. It costs an atomic load when there is nothing to do.
    ///
    /// ```
    /// let runtime = toolhost::Runtime::new()?;
    /// let idle = runtime.clone();
    /// let tokio = tokio::runtime::Builder::new_multi_thread()
    ///     .on_thread_park(move || idle.on_idle())
    ///     .build()?;
    /// # drop(tokio);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_idle(&self) {
        self.inner.engines.background().flush();
    }

    /// The compile cache, if this runtime has one.
    pub fn cache(&self) -> Option<&ArtifactCache> {
        self.inner.cache.as_ref()
    }

    /// The engines and linkers for modules under `limits` that need
    /// `concurrency`: the pooled ones only if the pool is on and its slots
    /// hold what `limits` allow.
    pub(crate) fn linkers(
        &self,
        limits: &Limits,
        concurrency: Concurrency,
    ) -> anyhow::Result<EnginePair<Linker<CallState>>> {
        let mut pair = self
            .inner
            .engines
            .get(limits.stack_bytes(), concurrency, new_linker)?;
        if !self.inner.slot.fits_tables(limits.max_table_elements) {
            pair.pooled = None;
        }
        Ok(pair)
    }

    /// The component `bytes`, ready to run in the first of `engines` it fits
    /// (all compile alike; the last must accept any valid component): from
    /// the cache, else compiled (in the worker if there is one, within the
    /// compile limits of `limits`) and stored in the cache.
    pub(crate) fn compile(
        &self,
        engines: &[&Engine],
        bytes: &[u8],
        limits: &Limits,
    ) -> Result<(Component, Compiled), CompileFailure> {
        let cache = self.inner.cache.as_ref();
        if let Some(component) = cache.and_then(|c| c.load(engines, bytes)) {
            return Ok((component, Compiled::Cached));
        }
        let Some(&any) = engines.last() else {
            return Err(CompileFailure::Invalid("no engine to compile for".into()));
        };
        let artifact = match &self.inner.worker {
            Some(worker) => worker.compile(
                bytes,
                (limits.stack_bytes(), concurrency_of(any)),
                limits.compile_timeout(),
                limits.compile_memory_bytes(),
            )?,
            None => {
                let component = Component::from_binary(any, bytes)
                    .map_err(|e| CompileFailure::Invalid(describe_error(&e)))?;
                let artifact = component.serialize();
                if let (Some(cache), Ok(artifact)) = (cache, &artifact) {
                    cache.store(any, bytes, artifact);
                }
                match artifact {
                    // Only the on-demand engine: the component is ready.
                    _ if engines.len() == 1 => return Ok((component, Compiled::Fresh)),
                    Ok(artifact) => {
                        let pooled = deserialize_into_first(engines, &artifact);
                        return Ok((pooled.unwrap_or(component), Compiled::Fresh));
                    }
                    Err(e) => {
                        tracing::warn!("cannot serialize compiled artifact: {e}");
                        return Ok((component, Compiled::Fresh));
                    }
                }
            }
        };
        if let Some(cache) = cache {
            cache.store(any, bytes, &artifact);
        }
        let component = deserialize_into_first(engines, &artifact).map_err(|e| {
            CompileFailure::Worker(format!(
                "its artifact is not usable: {}",
                describe_error(&e)
            ))
        })?;
        Ok((component, Compiled::Fresh))
    }

    /// How the host names of network grants are looked up.
    pub(crate) fn resolver(&self) -> &NameResolver {
        &self.inner.resolver
    }

    /// A new, empty set of instances made ahead of one module's calls, or
    /// `None` when `[pool] ready_per_module` is 0.
    pub(crate) fn ready_instances(&self) -> Option<Arc<ReadyInstances>> {
        self.inner.ready.shelf()
    }

    /// Where the module's used stores are dropped.
    pub(crate) fn disposal(&self) -> Arc<Disposal> {
        Arc::clone(&self.inner.disposal)
    }

    /// Where the instances of sessions are kept.
    pub(crate) fn sessions(&self) -> &Arc<SessionStore> {
        &self.inner.sessions
    }

    /// The bounds of sessions.
    pub fn session_limits(&self) -> SessionLimits {
        self.inner.sessions.limits()
    }

    /// How many session instances are kept now, in all modules.
    pub fn live_sessions(&self) -> usize {
        self.inner.sessions.live()
    }

    /// The clock every call's timers and sockets are driven by.
    pub(crate) fn clock(&self) -> &Clock {
        self.inner.engines.clock()
    }
}

/// `artifact` deserialized into the first of `engines` that takes it, or the
/// last one's error.
fn deserialize_into_first(engines: &[&Engine], artifact: &[u8]) -> wasmtime::Result<Component> {
    let mut last = Err(wasmtime::Error::msg("no engine to load the component in"));
    for engine in engines {
        // SAFETY: the artifact was made just now, by toolhost's own code (in
        // this process or its compile worker), for an engine configured as
        // each of these.
        last = unsafe { Component::deserialize(engine, artifact) };
        if last.is_ok() {
            break;
        }
    }
    last
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("cache", &self.inner.cache)
            .finish_non_exhaustive()
    }
}

/// The pool's slot: what a module with the default limits may use (so that
/// it is pooled; a module allowed larger tables runs on demand), with room
/// for the largest memory a module may be allowed (so that the memory
/// limit holds the same pooled or not).
fn slot_shape() -> SlotShape {
    let defaults = Limits::default();
    let count = |limit: u64| u32::try_from(limit).unwrap_or(u32::MAX);
    SlotShape {
        memory_bytes: Limits::largest().memory_bytes(),
        table_elements: defaults.max_table_elements,
        core_instances: count(defaults.max_instances),
        memories: count(defaults.max_memories),
        tables: count(defaults.max_tables),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_shape_is_the_default_limits() {
        let slot = slot_shape();
        let defaults = Limits::default();
        assert!(slot.fits_tables(defaults.max_table_elements));
        assert!(!slot.fits_tables(defaults.max_table_elements + 1));
        assert_eq!(u64::from(slot.core_instances), defaults.max_instances);
        assert_eq!(u64::from(slot.memories), defaults.max_memories);
        assert_eq!(u64::from(slot.tables), defaults.max_tables);
        let most = Limits::largest();
        assert!(most.memory_mib > defaults.memory_mib);
        assert_eq!(slot.memory_bytes, most.memory_bytes());
    }
}
