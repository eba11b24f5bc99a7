//! [`ReusedInstance`]: an instance that serves call after call, for a warm
//! module's instances and for a session's.
//!
//! Each call still runs under the module's whole limits: its fuel and time
//! start afresh, its output is captured alone, and the memory limit bounds
//! the instance as it grows over calls. The owner drops an instance after
//! a call that did not [end well](Served::ended_well).

use super::blueprint::Blueprint;
use super::dir_tree::Usage;
use super::disposal::Disposal;
use super::export::Request;
use super::fault::Fault;
use super::instantiate::NewInstance;
use super::on_instance::{Clock, run_on};
use super::report::{CallReport, Seen, report};
use crate::tool::StderrListener;

/// An instance kept from call to call.
pub(super) struct ReusedInstance {
    made: NewInstance,
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

impl ReusedInstance {
    /// `made`, to serve call after call.
    pub(super) fn new(made: NewInstance) -> Self {
        Self { made, calls: 0 }
    }

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
            let made = &self.made;
            let report = report(Err(fault), Seen::default(), &made.stdout, &made.stderr);
            return Served {
                report,
                ended_well: false,
            };
        }
        let made = &mut self.made;
        made.stderr.listen(stderr.cloned());
        let linked = (&made.instance, made.exports);
        let (outcome, seen) = run_on(
            blueprint,
            &mut made.store,
            linked,
            &made.deadline,
            request,
            Clock::Restart,
        )
        .await;
        made.stderr.listen(None);
        let memory_refused = seen.memory_refused;
        let report = report(outcome, seen, &made.stdout, &made.stderr);
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
        disposal.dispose(self.made.store, ());
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
        let made = &mut self.made;
        let _ = made.store.set_fuel(limits.fuel);
        made.stdout.clear();
        made.stderr.clear();
        let state = made.store.data();
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
