//! [`ReusedInstance`]: an instance that serves call after call, for a warm
//! module's instances and for a session's.
//!
//! Each call still runs under the module's whole limits: its fuel and time
//! start afresh, its output is captured alone, and the memory limit bounds
//! the instance as it grows over calls. The owner drops an instance after
//! a call that did not [end well](Served::ended_well).

use std::time::Duration;

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use super::blueprint::Blueprint;
use super::capture::Capture;
use super::deadline::Deadline;
use super::dir_tree::Usage;
use super::disposal::Disposal;
use super::export::{Exports, Request};
use super::fault::{Fault, classify};
use super::on_instance::run_on;
use super::overflow::pool_was_full;
use super::report::{CallReport, Seen, report};
use super::state::CallState;
use super::store::new_store;
use super::wasi_context::Outputs;
use crate::engine::EPOCH_TICK;
use crate::policy::to_usize;
use crate::tool::StderrListener;

/// An instance kept from call to call.
pub(super) struct ReusedInstance {
    store: Store<CallState>,
    instance: Instance,
    /// The exports of the compilation it was made from (the pooled one or
    /// its on-demand twin).
    exports: Exports,
    stdout: Capture,
    stderr: Capture,
    deadline: Deadline,
    /// Calls it has served.
    calls: u64,
}

/// What a reused instance's scratch directory (`grants.scratch`) holds at
/// the start of its next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScratchBetweenCalls {
    /// Nothing: it is emptied (a warm module's calls are unrelated).
    Emptied,
    /// What the previous calls left (a session's), counted against the
    /// call's `max_write_bytes` and `max_created_entries`, so that it never
    /// holds more than those.
    Kept,
}

/// A served call's report, and whether the instance may serve another.
pub(super) struct Served {
    pub report: CallReport,
    /// The guest answered (`ok` or its own `err`) and no limit was
    /// reached.
    pub ended_well: bool,
}

/// How making a reused instance went.
pub(super) enum Made {
    Ready(ReusedInstance),
    /// Instantiating failed: the call's answer.
    Failed(CallReport),
    /// The instance pool had no room.
    PoolFull,
}

/// A new instance of `pre` (whose exports are `exports`) for `blueprint`'s
/// calls, made on the caller's task under the module's limits.
pub(super) async fn make(
    blueprint: &Blueprint,
    (pre, exports): (&InstancePre<CallState>, Exports),
) -> Made {
    let limits = blueprint.limits();
    let captured = to_usize(limits.max_captured_bytes);
    let stdout = Capture::new(captured);
    let stderr = Capture::new(captured);
    let timeout = Duration::from_millis(limits.timeout_ms);
    let deadline = Deadline::after(timeout);
    let outputs = Outputs {
        stdout: &stdout,
        stderr: &stderr,
    };
    let failed = |fault: Fault, refused: bool| {
        let seen = Seen {
            memory_refused: refused,
            http_problem: None,
        };
        Made::Failed(report(Err(fault), seen, &stdout, &stderr))
    };
    let mut store = match new_store(blueprint, pre.engine(), outputs, &deadline) {
        Ok(store) => store,
        Err(fault) => return failed(fault, false),
    };
    let instantiate = pre.instantiate_async(&mut store);
    let instance = match tokio::time::timeout(timeout + EPOCH_TICK, instantiate).await {
        Ok(Ok(instance)) => instance,
        Ok(Err(error)) if pool_was_full(&error) => return Made::PoolFull,
        Ok(Err(error)) => {
            let refused = store.data().limiter.exceeded();
            return failed(classify(&error, blueprint.host_copy()), refused);
        }
        Err(_elapsed) => return failed(Fault::Timeout, false),
    };
    Made::Ready(ReusedInstance {
        store,
        instance,
        exports,
        stdout,
        stderr,
        deadline,
        calls: 0,
    })
}

impl ReusedInstance {
    /// Calls it has served.
    pub(super) fn calls(&self) -> u64 {
        self.calls
    }

    /// Runs `request` on it, with its scratch directory as `scratch` says.
    pub(super) async fn serve(
        &mut self,
        blueprint: &Blueprint,
        request: Request,
        scratch: ScratchBetweenCalls,
        stderr: Option<&StderrListener>,
    ) -> Served {
        if let Err(fault) = self.begin_call(blueprint, scratch) {
            let report = report(Err(fault), Seen::default(), &self.stdout, &self.stderr);
            return Served {
                report,
                ended_well: false,
            };
        }
        self.stderr.listen(stderr.cloned());
        let (outcome, seen) = run_on(
            blueprint,
            &mut self.store,
            (&self.instance, self.exports),
            &self.deadline,
            request,
        )
        .await;
        self.stderr.listen(None);
        let memory_refused = seen.memory_refused;
        let report = report(outcome, seen, &self.stdout, &self.stderr);
        self.calls += 1;
        let ended_well = report.result.is_ok() && !memory_refused;
        Served { report, ended_well }
    }

    /// Drops it off the caller's path.
    pub(super) fn dispose(self, blueprint: &Blueprint) {
        self.dispose_into(blueprint.disposal());
    }

    /// Drops it in `disposal`.
    pub(super) fn dispose_into(self, disposal: &Disposal) {
        disposal.dispose(self.store, ());
    }

    /// Readies it for a new call: full fuel, empty output, the call's own
    /// write budget, its scratch directory as `scratch` says (its time
    /// starts in `run_on`).
    fn begin_call(
        &mut self,
        blueprint: &Blueprint,
        scratch: ScratchBetweenCalls,
    ) -> Result<(), Fault> {
        let limits = blueprint.limits();
        // Setting fuel only fails on an engine without fuel, which toolhost
        // never makes.
        let _ = self.store.set_fuel(limits.fuel);
        self.stdout.clear();
        self.stderr.clear();
        let state = self.store.data();
        let kept = match (&state.scratch, scratch) {
            (None, _) => Usage::default(),
            (Some(dir), ScratchBetweenCalls::Emptied) => {
                dir.clear()?;
                Usage::default()
            }
            // Counted no further than the call may create: past that, it is
            // full.
            (Some(dir), ScratchBetweenCalls::Kept) => dir.usage(limits.max_created_entries),
        };
        state.budget.next_call(kept);
        Ok(())
    }
}
