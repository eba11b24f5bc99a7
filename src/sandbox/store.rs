//! A fresh [`Store`] for one call, with every limit of the call set on it.

use std::collections::HashMap;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, StoreLimitsBuilder, UpdateDeadline};

use super::blueprint::Blueprint;
use super::budget::CallBudget;
use super::deadline::Deadline;
use super::fault::Fault;
use super::http::{CallHttp, HttpCallParts};
use super::network::ConnectChecks;
use super::resolver::LOOKUPS_AT_ONCE;
use super::scratch::Scratch;
use super::state::{CallState, MemoryLimiter};
use super::wasi_context::{Outputs, wasi_context};
use crate::policy::{limit_key, to_usize};
use tokio::sync::Semaphore;

/// Component-model handles in one call (wasmtime: 100,000).
const MAX_COMPONENT_HANDLES: usize = 10_000;
/// WASI resources (streams, files, pollables) alive at once (wasmtime: 1,000,000).
const MAX_WASI_RESOURCES: usize = 10_000;

/// A store in `engine` for one call of `blueprint`, writing to `outputs`, whose
/// time is up at `deadline`.
pub(super) fn new_store(
    blueprint: &Blueprint,
    engine: &Engine,
    outputs: Outputs<'_>,
    deadline: &Deadline,
) -> Result<Store<CallState>, Fault> {
    let limits = blueprint.limits();
    let access = blueprint.access();
    let lookups = Arc::new(Semaphore::new(LOOKUPS_AT_ONCE));
    let checks = ConnectChecks {
        resolver: blueprint.resolver().clone(),
        deadline: deadline.clone(),
        lookups: Arc::clone(&lookups),
    };
    let scratch = access.scratch.then(Scratch::new).transpose()?;
    let wasi = wasi_context(access, checks, outputs, scratch.as_ref())?;
    let http = CallHttp::new(HttpCallParts {
        module: Arc::clone(blueprint.module()),
        access: Arc::clone(access),
        client: blueprint.http().cloned(),
        limits: *limits,
        resolver: blueprint.resolver().clone(),
        deadline: deadline.clone(),
        lookups: Arc::clone(&lookups),
    });
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
        limiter: MemoryLimiter::new(limits.memory_bytes(), blueprint.state_bytes(), counts),
        access: Arc::clone(access),
        budget: CallBudget::new(
            Arc::clone(blueprint.module()),
            limits,
            access.dirs.len() + usize::from(scratch.is_some()),
        ),
        open_descriptors: HashMap::new(),
        open_sockets: HashMap::new(),
        resolver: blueprint.resolver().clone(),
        lookups,
        deadline: deadline.clone(),
        http,
        scratch,
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limiter);
    store.set_hostcall_fuel(blueprint.host_copy_bytes());
    store.set_max_component_handles(MAX_COMPONENT_HANDLES);
    store
        .set_fuel(limits.fuel)
        .map_err(|e| Fault::Host(format!("cannot set {}: {e}", limit_key::fuel)))?;
    set_deadline(&mut store, deadline.clone());
    Ok(store)
}

/// Interrupts the guest once `deadline` has passed.
///
/// At every epoch tick the guest yields to the executor (so a spinning
/// guest never holds an async worker for more than a tick) and is
/// interrupted, as a trap, once the deadline is past.
fn set_deadline(store: &mut Store<CallState>, deadline: Deadline) {
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if deadline.passed() {
            Ok(UpdateDeadline::Interrupt)
        } else {
            Ok(UpdateDeadline::Yield(1))
        }
    });
}
