//! The wasmtime engines modules are compiled for and run on, the clock that
//! interrupts them, and the on-disk compile cache.
//!
//! The bottom of the runtime: it knows nothing of tools, sandboxes or
//! policies. The wasm stack size is an engine setting, so there is one
//! engine pair per distinct stack size, made when first asked for: one
//! engine whose instances come from the instance pool, and one that
//! allocates them on demand (for components that do not fit the pool, and
//! calls that find it full). Both compile the same code, so one artifact
//! serves both.

mod background;
mod cache;
mod clock;
mod pool;
pub(crate) mod private_dir;
mod worker;

use std::sync::{Arc, Mutex, PoisonError};

use wasmtime::{Config, Engine};

pub(crate) use background::Background;
pub use cache::{ArtifactCache, Compiled};
pub(crate) use clock::{Clock, EPOCH_TICK};
pub(crate) use pool::SlotShape;
pub use pool::{MemoryReset, PoolConfig, ResetInUse};
pub(crate) use worker::CompileFailure;
pub use worker::{CompileWorker, serve_compile_worker};

/// Stack a host function called from wasm may use on top of the wasm stack.
const HOST_STACK_BYTES: usize = 2 * 1024 * 1024;

/// One engine pair per wasm stack size and [`Concurrency`], each engine with
/// a companion value `T` made with it (the sandbox keeps its linker there),
/// and the clock that advances every engine's epoch.
pub(crate) struct Engines<T> {
    entries: Mutex<Vec<Entry<T>>>,
    /// The engines the clock advances (shared with its ticking task).
    ticking: Arc<Mutex<Vec<Engine>>>,
    clock: Clock,
    /// Work taken off the callers' path.
    background: Background,
    /// The instance pool of each pooled engine, and the reset its slots
    /// use; `None` for none.
    pool: Option<(PoolConfig, ResetInUse, SlotShape)>,
}

struct Entry<T> {
    stack_bytes: usize,
    concurrency: Concurrency,
    pair: EnginePair<T>,
}

/// Whether an engine supports the component-model async ABI and WASIp3.
///
/// wasmtime runs every call of an engine with concurrency support through
/// its concurrent machinery, which costs a synchronous component's calls
/// several microseconds each; so components that do not need it run in
/// engines without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Concurrency {
    /// Synchronous exports and WASI 0.2 imports only.
    Off,
    /// The async ABI and WASIp3 imports too.
    On,
}

impl Concurrency {
    /// Whether it is on.
    pub(crate) fn is_on(self) -> bool {
        self == Concurrency::On
    }
}

/// The engines for one wasm stack size, each with its companion.
pub(crate) struct EnginePair<T> {
    /// Instances from the pool; `None` when the pool is off or could not be
    /// set up here.
    pub pooled: Option<(Engine, Arc<T>)>,
    /// Instances allocated on demand.
    pub on_demand: (Engine, Arc<T>),
}

impl<T> Clone for EnginePair<T> {
    fn clone(&self) -> Self {
        let copy = |(engine, companion): &(Engine, Arc<T>)| (engine.clone(), Arc::clone(companion));
        Self {
            pooled: self.pooled.as_ref().map(copy),
            on_demand: copy(&self.on_demand),
        }
    }
}

impl<T> EnginePair<T> {
    /// The engines to try a component in, the pooled one first.
    pub(crate) fn engines(&self) -> Vec<&Engine> {
        self.pooled
            .iter()
            .chain([&self.on_demand])
            .map(|(engine, _)| engine)
            .collect()
    }

    /// The companion of `engine`, one of this pair's.
    pub(crate) fn companion_of(&self, engine: &Engine) -> &Arc<T> {
        match &self.pooled {
            Some((pooled, companion)) if Engine::same(pooled, engine) => companion,
            _ => &self.on_demand.1,
        }
    }
}

impl<T> Engines<T> {
    /// No engines yet, and a running clock; engines made later take their
    /// instances from a pool configured as `pool` (if it is enabled), of
    /// slots shaped as `slot`.
    pub(crate) fn new(pool: &PoolConfig, slot: SlotShape) -> anyhow::Result<Self> {
        let ticking: Arc<Mutex<Vec<Engine>>> = Arc::default();
        let clock = Clock::start(Arc::downgrade(&ticking))?;
        let background = Background::start()?;
        clock.tick_background(background.ticker());
        let pool = pool.enabled.then(|| {
            let reset = pool.memory_reset_in_use();
            tracing::info!("pooled instances' memory is reset: {reset}");
            (pool.clone(), reset, slot)
        });
        Ok(Self {
            entries: Mutex::new(Vec::new()),
            ticking,
            clock,
            background,
            pool,
        })
    }

    /// The clock: epoch ticks, timers and I/O of every call.
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The thread that makes and drops instances off the callers' path.
    pub(crate) fn background(&self) -> &Background {
        &self.background
    }

    /// The engines for `stack_bytes` of wasm stack and `concurrency`, and
    /// their companions, made (with `make`) on first use.
    pub(crate) fn get(
        &self,
        stack_bytes: usize,
        concurrency: Concurrency,
        make: impl Fn(&Engine) -> anyhow::Result<T>,
    ) -> anyhow::Result<EnginePair<T>> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = entries
            .iter()
            .find(|e| e.stack_bytes == stack_bytes && e.concurrency == concurrency)
        {
            return Ok(found.pair.clone());
        }
        let with_companion = |engine: Engine| -> anyhow::Result<(Engine, Arc<T>)> {
            let companion = Arc::new(make(&engine)?);
            Ok((engine, companion))
        };
        let on_demand = with_companion(new_engine(stack_bytes, concurrency)?)?;
        let pooled = match self.pooled_engine(stack_bytes, concurrency) {
            Some(engine) => Some(with_companion(engine)?),
            None => None,
        };
        let pair = EnginePair { pooled, on_demand };
        let mut ticking = self.ticking.lock().unwrap_or_else(PoisonError::into_inner);
        ticking.extend(pair.engines().into_iter().cloned());
        entries.push(Entry {
            stack_bytes,
            concurrency,
            pair: pair.clone(),
        });
        Ok(pair)
    }

    /// The pooled engine for `stack_bytes`, if the pool is on and can be set
    /// up (it reserves address space at once; a process with a small
    /// address-space limit cannot).
    fn pooled_engine(&self, stack_bytes: usize, concurrency: Concurrency) -> Option<Engine> {
        let (pool, reset, slot) = self.pool.as_ref()?;
        let mut config = engine_config(stack_bytes, concurrency);
        config.allocation_strategy(pool.allocation(reset, slot));
        match Engine::new(&config) {
            Ok(engine) => Some(engine),
            Err(e) => {
                tracing::warn!(
                    "cannot set up the instance pool, allocating instances on demand \
                     (set [pool] smaller, or enabled = false): {}",
                    describe_error(&e)
                );
                None
            }
        }
    }
}

/// An engine with fuel, epoch interruption, `stack_bytes` of wasm stack and
/// `concurrency`, allocating instances on demand (also what a compile worker
/// compiles for).
pub(crate) fn new_engine(stack_bytes: usize, concurrency: Concurrency) -> anyhow::Result<Engine> {
    Engine::new(&engine_config(stack_bytes, concurrency)).map_err(anyhow::Error::from)
}

/// Whether `engine` was made with concurrency support.
pub(crate) fn concurrency_of(engine: &Engine) -> Concurrency {
    if engine.get_concurrency_support() {
        Concurrency::On
    } else {
        Concurrency::Off
    }
}

/// What every engine is: the settings compiled code depends on are the same
/// for pooled and on-demand engines, so an artifact serves both.
fn engine_config(stack_bytes: usize, concurrency: Concurrency) -> Config {
    let mut config = Config::new();
    config.consume_fuel(true);
    config.epoch_interruption(true);
    // Off also turns the async ABI's features off (wasmtime's default with
    // concurrency on is the async ABI itself, without its unfinished parts).
    config.concurrency_support(concurrency.is_on());
    config.max_wasm_stack(stack_bytes);
    config.async_stack_size(stack_bytes.saturating_add(HOST_STACK_BYTES));
    config
}

/// A wasmtime error as one line: its causes joined by `: `, without the wasm backtrace.
pub(crate) fn describe_error(error: &wasmtime::Error) -> String {
    let parts: Vec<String> = error
        .chain()
        .map(|cause| cause.to_string())
        .filter(|text| !text.starts_with("error while executing at wasm backtrace"))
        .collect();
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{DefaultHasher, Hash, Hasher};

    fn compatibility(engine: &Engine) -> u64 {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn pooled_and_on_demand_engines_share_artifacts() {
        // A small slot of the test's own (the runtime shapes the real one
        // from the default limits).
        let slot = SlotShape {
            memory_bytes: 1 << 30,
            table_elements: 10_000,
            core_instances: 10,
            memories: 2,
            tables: 10,
        };
        let engines = Engines::<()>::new(&PoolConfig::default(), slot).unwrap();
        let pair = engines
            .get(512 * 1024, Concurrency::Off, |_| Ok(()))
            .unwrap();
        let (pooled, _) = pair.pooled.as_ref().expect("the pool is set up");
        assert_eq!(compatibility(pooled), compatibility(&pair.on_demand.0));
        assert_eq!(pair.engines().len(), 2);
    }
}
