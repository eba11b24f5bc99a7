//! A call run in an instance made for it now (no instance was ready): a
//! fresh store and instance of the module's component, or of its on-demand
//! twin when the pool is full.

use std::time::Duration;

use wasmtime::Store;
use wasmtime::component::InstancePre;

use super::blueprint::Blueprint;
use super::capture::Capture;
use super::deadline::Deadline;
use super::export::{Exports, Request, call_export, max_bytes};
use super::fault::{Fault, classify};
use super::overflow::{Overflow, pool_was_full};
use super::report::{CallReport, Outcome, Seen, report, settle};
use super::state::CallState;
use super::store::new_store;
use super::wasi_context::Outputs;
use crate::engine::EPOCH_TICK;
use crate::policy::to_usize;
use crate::tool::StderrListener;

/// The call run in an instance made for it now; its stderr also goes to
/// `listener`, if given.
pub(super) async fn run_fresh(
    blueprint: &Blueprint,
    request: Request,
    listener: Option<&StderrListener>,
) -> CallReport {
    let captured = to_usize(blueprint.limits().max_captured_bytes);
    let stdout = Capture::new(captured);
    let stderr = Capture::new(captured);
    stderr.listen(listener.cloned());
    let outputs = Outputs {
        stdout: &stdout,
        stderr: &stderr,
    };
    let (result, seen) = run_in_store(blueprint, request, outputs).await;
    report(result, seen, &stdout, &stderr)
}

/// The outcome, and what the store saw on the way.
async fn run_in_store(
    blueprint: &Blueprint,
    request: Request,
    outputs: Outputs<'_>,
) -> (Outcome, Seen) {
    match run_with(
        blueprint,
        (blueprint.pre(), blueprint.exports()),
        request.clone(),
        outputs,
    )
    .await
    {
        Attempt::PoolFull => {}
        Attempt::Done(outcome, seen) => return (outcome, seen),
    }
    // No guest code ran: the pool refused the instance (or its stack)
    // first. Start again with an instance of our own.
    let linked = match blueprint.overflow().map(Overflow::pre) {
        Some(Ok(linked)) => linked,
        Some(Err(fault)) => return (Err(fault), Seen::default()),
        None => {
            return (
                Err(Fault::Host("the instance pool is full".into())),
                Seen::default(),
            );
        }
    };
    match run_with(blueprint, linked, request, outputs).await {
        Attempt::Done(outcome, seen) => (outcome, seen),
        Attempt::PoolFull => (
            Err(Fault::Host("the instance pool is full".into())),
            Seen::default(),
        ),
    }
}

/// How one attempt at a call ended.
enum Attempt {
    /// With this outcome, and what the store saw.
    Done(Outcome, Seen),
    /// Before it started: the instance pool had no room.
    PoolFull,
}

/// The call run in a fresh store and instance of `pre`, whose exports are
/// `exports`.
async fn run_with(
    blueprint: &Blueprint,
    (pre, exports): (&InstancePre<CallState>, Exports),
    request: Request,
    outputs: Outputs<'_>,
) -> Attempt {
    let limits = blueprint.limits();
    let timeout = Duration::from_millis(limits.timeout_ms);
    let deadline = Deadline::after(timeout);
    let mut store = match new_store(blueprint, pre.engine(), outputs, &deadline) {
        Ok(store) => store,
        Err(fault) => return Attempt::Done(Err(fault), Seen::default()),
    };
    let max_bytes = max_bytes(limits, &request);
    // The epoch deadline traps guest code that spins; this timeout also
    // ends a call that is blocked in a host function (a long sleep).
    let call = invoke(&mut store, pre, exports, request, max_bytes);
    let outcome = match tokio::time::timeout(timeout + EPOCH_TICK, call).await {
        Err(_elapsed) => Err(Fault::Timeout),
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) if pool_was_full(&error) && blueprint.overflow().is_some() => {
            return Attempt::PoolFull;
        }
        Ok(Err(error)) => Err(classify(&error, blueprint.host_copy())),
    };
    let (outcome, seen) = settle(&store, outcome);
    blueprint.disposal().dispose(store, ());
    Attempt::Done(outcome, seen)
}

/// Instantiates `pre` in `store` and runs `request`.
async fn invoke(
    store: &mut Store<CallState>,
    pre: &InstancePre<CallState>,
    exports: Exports,
    request: Request,
    max_bytes: usize,
) -> wasmtime::Result<Outcome> {
    let instance = pre.instantiate_async(&mut *store).await?;
    call_export(store, &instance, exports, request, max_bytes).await
}
