//! One sandboxed call: a fresh store and instance (made ahead of the call
//! when one is ready), the export run under the call's limits, and what came
//! of it.

use super::blueprint::Blueprint;
use super::export::Request;
use super::fresh::run_fresh;
use super::on_instance::{Clock, run_once};
use super::ready::Prepared;
use super::report::CallReport;
use super::target::Target;
use super::warm;
use crate::tool::StderrListener;

/// Runs `request` in a fresh instance of `target`'s blueprint, under its
/// limits and reaching what its access allows: one made ahead if a call
/// finds one ready, else one made now; or, for a warm module, in one of its
/// long-lived instances.
///
/// What the guest writes to stderr is also handed to `stderr`, if given,
/// as it is written.
///
/// The future owns everything it uses, so that it can be polled anywhere;
/// dropping it ends the call (and drops its instance) at once.
pub(crate) async fn run(
    target: Target,
    request: Request,
    stderr: Option<StderrListener>,
) -> CallReport {
    let blueprint = target.blueprint();
    let stderr = stderr.as_ref();
    if let (false, Some(instances)) = (
        matches!(request, Request::ToolInfo),
        target.warm_instances(),
    ) {
        return warm::run(blueprint, instances, request, stderr).await;
    }
    let ready = match &request {
        Request::Call { .. } | Request::Typed(_) => target.ready().cloned(),
        Request::ToolInfo => None,
    };
    let prepared = ready.as_ref().and_then(|r| r.take());
    let took_one = prepared.is_some();
    let report = match prepared {
        Some(prepared) => run_prepared(blueprint, prepared, request, stderr).await,
        None => run_fresh(blueprint, request, stderr).await,
    };
    // After the call, so that the store it used is dropped first and its
    // slot, still warm, goes to the next instance.
    if let Some(ready) = ready {
        ready.refill(blueprint, took_one);
    }
    report
}

/// The call run in an instance made ahead of it, with the call's whole
/// time from now.
async fn run_prepared(
    blueprint: &Blueprint,
    prepared: Prepared,
    request: Request,
    listener: Option<&StderrListener>,
) -> CallReport {
    let Prepared { made, held, .. } = prepared;
    made.stderr.listen(listener.cloned());
    run_once(blueprint, made, request, Clock::Restart, held).await
}
