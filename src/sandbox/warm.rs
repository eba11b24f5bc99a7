//! [`WarmInstances`]: long-lived instances of a module that opted in
//! (`warm = true`), reused from call to call.
//!
//! A warm module trades isolation between calls for speed: an instance
//! keeps its memory (its caches, and whatever else a call left behind) for
//! the next call, which may come from another caller; its scratch
//! directory is emptied between calls. Each call still runs under the
//! module's whole limits (see [`ReusedInstance`]). An instance is dropped,
//! never reused, after a call that trapped or hit a limit (fuel, time,
//! memory, output), and after [`Warm::max_calls`] calls; the next call
//! gets a fresh one.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::blueprint::Blueprint;
use super::export::Request;
use super::fresh::run_fresh;
use super::instantiate::{NotMade, instantiate};
use super::report::CallReport;
use super::reused::{ReusedInstance, ScratchBetweenCalls, Served};
use crate::policy::Warm;
use crate::tool::StderrListener;

/// Idle instances a warm module keeps; more are made when more calls run
/// at once, and dropped when they end.
const MAX_IDLE: usize = 8;

/// The idle instances of one warm module (and one access).
pub(crate) struct WarmInstances {
    warm: Warm,
    idle: Mutex<Vec<ReusedInstance>>,
}

impl WarmInstances {
    /// No instances yet.
    pub(crate) fn new(warm: Warm) -> Arc<Self> {
        Arc::new(Self {
            warm,
            idle: Mutex::new(Vec::new()),
        })
    }

    /// The settings.
    pub(crate) fn warm(&self) -> Warm {
        self.warm
    }

    /// How many instances are idle now.
    pub(crate) fn idle(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<ReusedInstance>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes an idle instance back, or drops it when enough are idle.
    fn give_back(&self, instance: ReusedInstance, blueprint: &Blueprint) {
        let mut idle = self.lock();
        if idle.len() < MAX_IDLE {
            idle.push(instance);
            return;
        }
        drop(idle);
        instance.dispose(blueprint);
    }
}

/// Runs `request` in an idle instance of `warm` (or a new one), and keeps
/// the instance for the next call if this one ended well.
pub(crate) async fn run(
    blueprint: &Blueprint,
    warm: &WarmInstances,
    request: Request,
    stderr: Option<&StderrListener>,
) -> CallReport {
    let taken = warm.lock().pop();
    let mut instance = match taken {
        Some(instance) => instance,
        None => match instantiate(blueprint, (blueprint.pre(), blueprint.exports()), None).await {
            Ok(made) => ReusedInstance::new(made),
            Err(NotMade::Failed(report)) => return report,
            // No slot for a long-lived instance: serve this call as a
            // module that is not warm would.
            Err(NotMade::PoolFull) => return run_fresh(blueprint, request, stderr).await,
        },
    };
    let Served { report, ended_well } = instance
        .serve(blueprint, request, ScratchBetweenCalls::Emptied, stderr)
        .await;
    if ended_well && instance.calls() < warm.warm.max_calls {
        warm.give_back(instance, blueprint);
    } else {
        instance.dispose(blueprint);
    }
    report
}
