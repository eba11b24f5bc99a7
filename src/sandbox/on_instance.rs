//! A call run on an instance made before it (made ahead of the call, or
//! one that serves call after call): the export, with the call's whole
//! time from now.

use std::time::Duration;

use wasmtime::Store;
use wasmtime::component::Instance;

use super::blueprint::Blueprint;
use super::deadline::Deadline;
use super::export::{Exports, Request, call_export, max_bytes};
use super::fault::{Fault, classify};
use super::report::{Outcome, Seen, settle};
use super::state::CallState;
use crate::engine::EPOCH_TICK;

/// Runs `request` on `instance` (in `store`, made before the call, with
/// `exports`) with the call's whole time from now: the outcome, and what
/// the store saw on the way.
pub(super) async fn run_on(
    blueprint: &Blueprint,
    store: &mut Store<CallState>,
    (instance, exports): (&Instance, Exports),
    deadline: &Deadline,
    request: Request,
) -> (Outcome, Seen) {
    let timeout = Duration::from_millis(blueprint.limits().timeout_ms);
    deadline.restart(timeout);
    store.data().http.begin_call();
    store.set_epoch_deadline(1);
    let max_bytes = max_bytes(blueprint.limits(), &request);
    let call = call_export(store, instance, exports, request, max_bytes);
    let outcome = match tokio::time::timeout(timeout + EPOCH_TICK, call).await {
        Err(_elapsed) => Err(Fault::Timeout),
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => Err(classify(&error, blueprint.host_copy())),
    };
    settle(store, outcome)
}
