//! [`Overflow`]: where a call goes when the instance pool is full.
//!
//! A module whose component fits the pool runs its calls in pooled
//! instances. When every slot is taken, wasmtime refuses the instance
//! before any guest code runs; the call then starts again in an instance
//! allocated on demand, from a copy of the same compiled component loaded
//! into the on-demand engine the first time it is needed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use wasmtime::PoolConcurrencyLimitError;
use wasmtime::component::{Component, InstancePre, Linker};

use super::export::Exports;
use super::fault::Fault;
use super::state::CallState;
use crate::engine::describe_error;

/// The on-demand twin of a pooled module.
pub(crate) struct Overflow {
    /// The on-demand engine's linker.
    linker: Arc<Linker<CallState>>,
    /// The component, compiled (for the pooled engine; both compile alike).
    component: Component,
    /// The component in the on-demand engine, made on first use.
    pre: OnceLock<Result<(InstancePre<CallState>, Exports), String>>,
    /// Calls that found the pool full and ran on demand.
    calls: AtomicU64,
}

impl Overflow {
    /// The overflow of `component` (pooled) into `linker`'s engine.
    pub(crate) fn new(linker: Arc<Linker<CallState>>, component: Component) -> Self {
        Self {
            linker,
            component,
            pre: OnceLock::new(),
            calls: AtomicU64::new(0),
        }
    }

    /// How many calls found the pool full and ran on demand.
    pub(crate) fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// The component ready to instantiate on demand, and its exports,
    /// for one more call that found the pool full.
    pub(crate) fn pre(&self) -> Result<(&InstancePre<CallState>, Exports), Fault> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.pre
            .get_or_init(|| self.load().map_err(|e| describe_error(&e)))
            .as_ref()
            .map(|(pre, exports)| (pre, *exports))
            .map_err(|reason| {
                Fault::Host(format!(
                    "the instance pool is full and an instance cannot be made on demand: {reason}"
                ))
            })
    }

    fn load(&self) -> wasmtime::Result<(InstancePre<CallState>, Exports)> {
        let artifact = self.component.serialize()?;
        // SAFETY: the artifact is the compiled code of a component this
        // process loaded (compiled by toolhost, or checked from its cache),
        // for an engine that compiles as this one.
        let component = unsafe { Component::deserialize(self.linker.engine(), &artifact) }?;
        let exports = Exports::of(&component);
        Ok((self.linker.instantiate_pre(&component)?, exports))
    }
}

/// Whether `error` says the instance pool had no free slot (for an
/// instance, a memory, a table or a fiber stack).
pub(crate) fn pool_was_full(error: &wasmtime::Error) -> bool {
    error.is::<PoolConcurrencyLimitError>()
}
