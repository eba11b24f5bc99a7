//! A call run on an instance that [`instantiate`](super::instantiate) made:
//! the export, under the call's limits, with the clock as [`Clock`] says.

use std::time::Duration;

use wasmtime::Store;
use wasmtime::component::Instance;

use super::blueprint::Blueprint;
use super::deadline::Deadline;
use super::export::{Exports, Request, call_export, max_bytes};
use super::fault::{Fault, classify};
use super::instantiate::NewInstance;
use super::report::{CallReport, Outcome, Seen, report, settle};
use super::state::CallState;
use crate::engine::EPOCH_TICK;

/// How a call's time runs on the instance it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Clock {
    /// The call gets its whole time from now, and its HTTP requests are
    /// counted anew: for an instance made before the call (made ahead of
    /// it, or kept from calls before), whose making was timed on its own.
    Restart,
    /// The call has what is left of the time that started when its
    /// instance was made: for an instance made for this call, whose
    /// instantiation counts against the call's time.
    Continue,
}

/// Runs `request` on `made`, an instance that serves this one call, its
/// time as `clock` says; then drops it off the caller's path, with `keep`
/// (what must live as long as its store).
pub(super) async fn run_once(
    blueprint: &Blueprint,
    made: NewInstance,
    request: Request,
    clock: Clock,
    keep: impl Send + 'static,
) -> CallReport {
    let NewInstance {
        mut store,
        instance,
        exports,
        stdout,
        stderr,
        deadline,
    } = made;
    let linked = (&instance, exports);
    let (outcome, seen) = run_on(blueprint, &mut store, linked, &deadline, request, clock).await;
    blueprint.disposal().dispose(store, keep);
    report(outcome, seen, &stdout, &stderr)
}

/// Runs `request` on `instance` (in `store`, with `exports`, whose time is
/// up at `deadline`), its time as `clock` says: the outcome, and what the
/// store saw on the way.
pub(super) async fn run_on(
    blueprint: &Blueprint,
    store: &mut Store<CallState>,
    (instance, exports): (&Instance, Exports),
    deadline: &Deadline,
    request: Request,
    clock: Clock,
) -> (Outcome, Seen) {
    let left = match clock {
        Clock::Restart => {
            let timeout = Duration::from_millis(blueprint.limits().timeout_ms);
            deadline.restart(timeout);
            store.data().http.begin_call();
            timeout
        }
        Clock::Continue => deadline.remaining(),
    };
    store.set_epoch_deadline(1);
    let max_bytes = max_bytes(blueprint.limits(), &request);
    // The epoch deadline traps guest code that spins; this timeout also
    // ends a call that is blocked in a host function (a long sleep).
    let call = call_export(store, instance, exports, request, max_bytes);
    let outcome = match tokio::time::timeout(left + EPOCH_TICK, call).await {
        Err(_elapsed) => Err(Fault::Timeout),
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => Err(classify(&error, blueprint.host_copy())),
    };
    settle(store, outcome)
}
