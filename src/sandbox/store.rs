//! A fresh [`Store`] for one call, with every limit of the call set on it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{InstancePre, ResourceTable};
use wasmtime::{Store, StoreLimitsBuilder, UpdateDeadline};

use super::fault::Fault;
use super::state::{CallState, MemoryLimiter};
use super::wasi_context::{Outputs, wasi_context};
use crate::policy::{Access, Limits, to_usize};

/// Component-model handles in one call (wasmtime: 100,000).
const MAX_COMPONENT_HANDLES: usize = 10_000;
/// WASI resources (streams, files, pollables) alive at once (wasmtime: 1,000,000).
const MAX_WASI_RESOURCES: usize = 10_000;

/// A store for one call of `pre` under `limits`, reaching what `access`
/// allows, writing to `outputs`.
pub(super) fn new_store(
    pre: &InstancePre<CallState>,
    limits: &Limits,
    access: &Arc<Access>,
    outputs: Outputs<'_>,
) -> Result<Store<CallState>, Fault> {
    let wasi = wasi_context(access, outputs)?;
    let mut table = ResourceTable::new();
    table.set_max_capacity(MAX_WASI_RESOURCES);
    let counts = StoreLimitsBuilder::new()
        .instances(to_usize(limits.max_instances))
        .tables(to_usize(limits.max_tables))
        .memories(to_usize(limits.max_memories))
        .table_elements(to_usize(limits.max_table_elements))
        .build();
    let state = CallState {
        wasi,
        table,
        limiter: MemoryLimiter::new(limits.memory_bytes(), counts),
        access: Arc::clone(access),
    };
    let mut store = Store::new(pre.engine(), state);
    store.limiter(|state| &mut state.limiter);
    store.set_hostcall_fuel(hostcall_fuel(limits));
    store.set_max_component_handles(MAX_COMPONENT_HANDLES);
    store
        .set_fuel(limits.fuel)
        .map_err(|e| Fault::Host(format!("cannot set fuel: {e}")))?;
    set_deadline(&mut store, Duration::from_millis(limits.timeout_ms));
    Ok(store)
}

/// Interrupts the guest once `timeout` has passed.
///
/// At every epoch tick the guest yields to the executor (so a spinning
/// guest never holds an async worker for more than a tick) and is
/// interrupted, as a trap, once the deadline is past.
fn set_deadline(store: &mut Store<CallState>, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if Instant::now() >= deadline {
            Ok(UpdateDeadline::Interrupt)
        } else {
            Ok(UpdateDeadline::Yield(1))
        }
    });
}

/// The most bytes the guest may make the host copy in one host call, or in
/// lifting its answer: its memory limit, as no string or list it passes can
/// be bigger than its memory. A call can so make the host hold at most its
/// memory limit again, briefly (an oversized answer is copied, measured and
/// dropped; one large `write` to stdout is copied and cut to the capture).
fn hostcall_fuel(limits: &Limits) -> usize {
    limits.memory_bytes().max(1024 * 1024)
}
