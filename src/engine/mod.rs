//! The wasmtime engines modules are compiled for and run on, the clock that
//! interrupts them, and the on-disk compile cache.
//!
//! The bottom of the runtime: it knows nothing of tools, sandboxes or
//! policies. The wasm stack size is an engine setting, so there is one
//! engine per distinct stack size, made when first asked for.

mod cache;
mod clock;
mod worker;

use std::sync::{Arc, Mutex, PoisonError};

use wasmtime::{Config, Engine};

pub use cache::{ArtifactCache, Compiled};
pub(crate) use clock::{Clock, EPOCH_TICK};
pub(crate) use worker::CompileFailure;
pub use worker::{CompileWorker, serve_compile_worker};

/// Stack a host function called from wasm may use on top of the wasm stack.
const HOST_STACK_BYTES: usize = 2 * 1024 * 1024;

/// One engine per wasm stack size, each with a companion value `T` made
/// with it (the sandbox keeps its linker there), and the clock that
/// advances every engine's epoch.
pub(crate) struct Engines<T> {
    entries: Mutex<Vec<Entry<T>>>,
    /// The engines the clock advances (shared with its ticking task).
    ticking: Arc<Mutex<Vec<Engine>>>,
    clock: Clock,
}

struct Entry<T> {
    stack_bytes: usize,
    engine: Engine,
    companion: Arc<T>,
}

impl<T> Engines<T> {
    /// No engines yet, and a running clock.
    pub(crate) fn new() -> anyhow::Result<Self> {
        let ticking: Arc<Mutex<Vec<Engine>>> = Arc::default();
        let clock = Clock::start(Arc::downgrade(&ticking))?;
        Ok(Self {
            entries: Mutex::new(Vec::new()),
            ticking,
            clock,
        })
    }

    /// The clock: epoch ticks, timers and I/O of every call.
    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The engine for `stack_bytes` of wasm stack and its companion, made
    /// (with `make`) on first use.
    pub(crate) fn get(
        &self,
        stack_bytes: usize,
        make: impl FnOnce(&Engine) -> anyhow::Result<T>,
    ) -> anyhow::Result<(Engine, Arc<T>)> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = entries.iter().find(|e| e.stack_bytes == stack_bytes) {
            return Ok((found.engine.clone(), Arc::clone(&found.companion)));
        }
        let engine = new_engine(stack_bytes)?;
        let companion = Arc::new(make(&engine)?);
        entries.push(Entry {
            stack_bytes,
            engine: engine.clone(),
            companion: Arc::clone(&companion),
        });
        self.ticking
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(engine.clone());
        Ok((engine, companion))
    }
}

/// An engine with fuel, epoch interruption and `stack_bytes` of wasm stack
/// (also what a compile worker compiles for).
pub(crate) fn new_engine(stack_bytes: usize) -> anyhow::Result<Engine> {
    let mut config = Config::new();
    config.consume_fuel(true);
    config.epoch_interruption(true);
    config.max_wasm_stack(stack_bytes);
    config.async_stack_size(stack_bytes.saturating_add(HOST_STACK_BYTES));
    Engine::new(&config).map_err(anyhow::Error::from)
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
