//! Where every instance of a module comes from.
//!
//! [`instantiate`] is the one place a component is instantiated: a store for
//! one module's calls (its WASI context, limits and output captures), a
//! deadline that starts at once, and the component's instantiation with its
//! start functions, all under the module's limits. [`instantiate_anywhere`]
//! tries the instance pool first and then the module's on-demand twin.
//!
//! Every way a call gets an instance goes through them: a call that makes
//! its own (`fresh.rs`), instances made ahead of calls (`ready.rs`), and the
//! instances a warm module or a session keeps (`reused.rs`, `warm.rs`,
//! `sessions.rs`). So SECURITY.md's promise that instantiation runs under
//! the call's deadline and fuel is kept here, once. How the call's clock
//! then runs on the instance is said where the call runs
//! ([`Clock`](super::on_instance::Clock)).

use std::time::Duration;

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use super::blueprint::Blueprint;
use super::capture::Capture;
use super::deadline::Deadline;
use super::export::Exports;
use super::fault::{Fault, classify};
use super::overflow::{Overflow, pool_was_full};
use super::report::{CallReport, Outcome, Seen, report, settle};
use super::state::CallState;
use super::store::new_store;
use super::wasi_context::Outputs;
use crate::engine::EPOCH_TICK;
use crate::policy::to_usize;
use crate::tool::StderrListener;

/// A store with a new instance in it, and what belongs to it.
pub(super) struct NewInstance {
    pub(super) store: Store<CallState>,
    pub(super) instance: Instance,
    /// The exports of the compilation it was made from (the pooled one or
    /// its on-demand twin).
    pub(super) exports: Exports,
    pub(super) stdout: Capture,
    pub(super) stderr: Capture,
    /// The store's deadline, which started when the instance was made.
    pub(super) deadline: Deadline,
}

/// Why an instance was not made.
pub(super) enum NotMade {
    /// The instance pool had no room; no guest code ran.
    PoolFull,
    /// Instantiating failed (a start function trapped or hit a limit, or
    /// the host could not set the store up): the answer of the call the
    /// instance was for.
    Failed(CallReport),
}

/// A new store and instance of `pre` (whose exports are `exports`) for one
/// of `blueprint`'s calls, made under the module's limits on the caller's
/// task. Its deadline starts now, so instantiation counts against the time
/// of the call it is made for; its stderr is also handed to `listener`, if
/// given.
pub(super) async fn instantiate(
    blueprint: &Blueprint,
    (pre, exports): (&InstancePre<CallState>, Exports),
    listener: Option<&StderrListener>,
) -> Result<NewInstance, NotMade> {
    let limits = blueprint.limits();
    let captured = to_usize(limits.max_captured_bytes);
    let stdout = Capture::new(captured);
    let stderr = Capture::new(captured);
    stderr.listen(listener.cloned());
    let timeout = Duration::from_millis(limits.timeout_ms);
    let deadline = Deadline::after(timeout);
    let outputs = Outputs {
        stdout: &stdout,
        stderr: &stderr,
    };
    let mut store = match new_store(blueprint, pre.engine(), outputs, &deadline) {
        Ok(store) => store,
        Err(fault) => return Err(failed(Err(fault), Seen::default(), &stdout, &stderr)),
    };
    // The epoch deadline traps a start function that spins; this timeout
    // also ends one blocked in a host function.
    let made = tokio::time::timeout(timeout + EPOCH_TICK, pre.instantiate_async(&mut store)).await;
    let fault = match made {
        Ok(Ok(instance)) => {
            return Ok(NewInstance {
                store,
                instance,
                exports,
                stdout,
                stderr,
                deadline,
            });
        }
        Ok(Err(error)) if pool_was_full(&error) => return Err(NotMade::PoolFull),
        Ok(Err(error)) => classify(&error, blueprint.host_copy()),
        Err(_elapsed) => Fault::Timeout,
    };
    let (outcome, seen) = settle(&store, Err(fault));
    blueprint.disposal().dispose(store, ());
    Err(failed(outcome, seen, &stdout, &stderr))
}

/// A new instance of `blueprint` from the instance pool or, when the pool
/// is full, made on demand from the module's on-demand twin; or the answer
/// of the call it was for, when neither could be made.
pub(super) async fn instantiate_anywhere(
    blueprint: &Blueprint,
    listener: Option<&StderrListener>,
) -> Result<NewInstance, CallReport> {
    let pooled = (blueprint.pre(), blueprint.exports());
    match instantiate(blueprint, pooled, listener).await {
        Ok(made) => return Ok(made),
        Err(NotMade::Failed(report)) => return Err(report),
        Err(NotMade::PoolFull) => {}
    }
    let on_demand = match blueprint.overflow().map(Overflow::pre) {
        Some(Ok(linked)) => linked,
        Some(Err(fault)) => return Err(not_made(fault)),
        None => return Err(not_made(pool_full())),
    };
    match instantiate(blueprint, on_demand, listener).await {
        Ok(made) => Ok(made),
        Err(NotMade::Failed(report)) => Err(report),
        Err(NotMade::PoolFull) => Err(not_made(pool_full())),
    }
}

/// The answer of a call whose instance failed to be made.
fn failed(outcome: Outcome, seen: Seen, stdout: &Capture, stderr: &Capture) -> NotMade {
    NotMade::Failed(report(outcome, seen, stdout, stderr))
}

/// The answer of a call for which no instance could be made, before any
/// guest code ran.
fn not_made(fault: Fault) -> CallReport {
    let nothing = Capture::new(0);
    report(Err(fault), Seen::default(), &nothing, &nothing)
}

/// Neither the pool nor the on-demand engine had room.
fn pool_full() -> Fault {
    Fault::Host("the instance pool is full".into())
}
