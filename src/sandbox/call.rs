//! One sandboxed call: a fresh store and instance (made ahead of the call
//! when one is ready), the export run under the call's limits, and what came
//! of it.

use std::sync::Arc;

use super::blueprint::Blueprint;
use super::export::Request;
use super::fresh::run_fresh;
use super::on_instance::run_on;
use super::ready::{Prepared, ReadyInstances};
use super::report::{CallReport, report};
use super::sessions::ModuleSessions;
use super::warm::{self, WarmInstances};

/// What every call of one module needs: what its instances are made from,
/// and where they come from (made ahead, warm, a session's).
#[derive(Clone)]
pub(crate) struct Target {
    /// What its instances are made from.
    pub blueprint: Blueprint,
    /// Instances made ahead of calls (`None` when that is off, or the
    /// module is warm).
    pub ready: Option<Arc<ReadyInstances>>,
    /// The long-lived instances of a warm module (`None`: every call gets
    /// a fresh instance).
    pub warm: Option<Arc<WarmInstances>>,
    /// The instances of its sessions (`None`: sessions are off, and a call
    /// in a session is a fresh call).
    pub sessions: Option<ModuleSessions>,
}

impl std::ops::Deref for Target {
    type Target = Blueprint;

    fn deref(&self) -> &Blueprint {
        &self.blueprint
    }
}

impl std::ops::DerefMut for Target {
    fn deref_mut(&mut self) -> &mut Blueprint {
        &mut self.blueprint
    }
}

/// Runs `request` in a fresh instance of `pre` under `limits`, reaching
/// what `access` allows: one made ahead if a call finds one ready, else one
/// made now; or, for a warm module, in one of its long-lived instances.
///
/// The future owns everything it uses, so that it can be polled anywhere;
/// dropping it ends the call (and drops its instance) at once.
pub(crate) async fn run(target: Target, request: Request) -> CallReport {
    if let (false, Some(instances)) = (matches!(request, Request::ToolInfo), &target.warm) {
        return warm::run(&target, instances, request).await;
    }
    let ready = match &request {
        Request::Call { .. } | Request::Typed(_) => target.ready.clone(),
        Request::ToolInfo => None,
    };
    let prepared = ready.as_ref().and_then(|r| r.take());
    let took_one = prepared.is_some();
    let report = match prepared {
        Some(prepared) => run_prepared(&target, prepared, request).await,
        None => run_fresh(&target, request).await,
    };
    // After the call, so that the store it used is dropped first and its
    // slot, still warm, goes to the next instance.
    if let Some(ready) = ready {
        ready.refill(&target, took_one);
    }
    report
}

/// The call run in an instance made ahead of it.
async fn run_prepared(target: &Target, prepared: Prepared, request: Request) -> CallReport {
    let Prepared {
        mut store,
        instance,
        stdout,
        stderr,
        deadline,
        held,
        ..
    } = prepared;
    let linked = (&instance, target.exports);
    let (outcome, seen) = run_on(target, &mut store, linked, &deadline, request).await;
    target.disposal.dispose(store, held);
    report(outcome, seen, &stdout, &stderr)
}
