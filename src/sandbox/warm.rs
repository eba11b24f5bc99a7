//! [`WarmInstances`]: long-lived instances of a module that opted in
//! (`warm = true`), reused from call to call.
//!
//! A warm module trades isolation between calls for speed: an instance
//! keeps its memory (its caches, and whatever else a call left behind) for
//! the next call, which may come from another caller. Each call still runs
//! under the module's whole limits: its fuel and time start afresh, its
//! output is captured alone, and the memory limit bounds the instance as it
//! grows over calls. An instance is dropped, never reused, after a call
//! that trapped or hit a limit (fuel, time, memory, output), and after
//! [`Warm::max_calls`] calls; the next call gets a fresh one.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use wasmtime::Store;
use wasmtime::component::Instance;

use super::call::{CallReport, Outcome, Request, Seen, Target, report, run_fresh, run_on};
use super::capture::Capture;
use super::deadline::Deadline;
use super::fault::{Fault, classify};
use super::overflow::pool_was_full;
use super::state::CallState;
use super::store::new_store;
use super::wasi_context::Outputs;
use crate::engine::EPOCH_TICK;
use crate::policy::{Warm, to_usize};

/// Idle instances a warm module keeps; more are made when more calls run
/// at once, and dropped when they end.
const MAX_IDLE: usize = 8;

/// The idle instances of one warm module (and one access).
pub(crate) struct WarmInstances {
    warm: Warm,
    idle: Mutex<Vec<WarmInstance>>,
}

/// An instance that serves call after call.
struct WarmInstance {
    store: Store<CallState>,
    instance: Instance,
    stdout: Capture,
    stderr: Capture,
    deadline: Deadline,
    /// Calls it has served.
    calls: u64,
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

    fn lock(&self) -> MutexGuard<'_, Vec<WarmInstance>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes an idle instance back, or drops it when enough are idle.
    fn give_back(&self, instance: WarmInstance, target: &Target) {
        let mut idle = self.lock();
        if idle.len() < MAX_IDLE {
            idle.push(instance);
            return;
        }
        drop(idle);
        target.disposal.dispose(instance.store, None);
    }
}

/// Runs `request` in an idle instance of `warm` (or a new one), and keeps
/// the instance for the next call if this one ended well.
pub(crate) async fn run(target: &Target, warm: &WarmInstances, request: Request) -> CallReport {
    let taken = warm.lock().pop();
    let mut instance = match taken {
        Some(instance) => instance,
        None => match make(target).await {
            Made::Ready(instance) => instance,
            Made::Failed(fault, refused, stdout, stderr) => {
                let seen = Seen {
                    memory_refused: refused,
                    http_problem: None,
                };
                return report(Err(fault), seen, &stdout, &stderr);
            }
            // No slot for a long-lived instance: serve this call as a
            // module that is not warm would.
            Made::PoolFull => return run_fresh(target, request).await,
        },
    };
    instance.begin_call(target);
    let (outcome, seen) = run_on(
        target,
        &mut instance.store,
        &instance.instance,
        &instance.deadline,
        request,
    )
    .await;
    let memory_refused = seen.memory_refused;
    let answer = report(outcome, seen, &instance.stdout, &instance.stderr);
    instance.calls += 1;
    if ended_well(&answer.result, memory_refused) && instance.calls < warm.warm.max_calls {
        warm.give_back(instance, target);
    } else {
        target.disposal.dispose(instance.store, None);
    }
    answer
}

/// Whether an instance may serve another call after this outcome: the
/// guest answered (`ok` or its own `err`) and no limit was reached.
fn ended_well(result: &Outcome, memory_refused: bool) -> bool {
    result.is_ok() && !memory_refused
}

impl WarmInstance {
    /// Readies the instance for a new call: full fuel, empty output, the
    /// call's own write budget (its time starts in `run_on`).
    fn begin_call(&mut self, target: &Target) {
        let limits = &target.limits;
        // Setting fuel only fails on an engine without fuel, which toolhost
        // never makes.
        let _ = self.store.set_fuel(limits.fuel);
        self.stdout.clear();
        self.stderr.clear();
        self.store.data().budget.next_call();
    }
}

/// How making a warm instance went.
enum Made {
    Ready(WarmInstance),
    /// Instantiating failed: the call's answer (and whether a memory
    /// growth was refused), with what the guest wrote.
    Failed(Fault, bool, Capture, Capture),
    /// The instance pool had no room.
    PoolFull,
}

/// A new long-lived instance of `target`, made on the caller's task under
/// the module's limits.
async fn make(target: &Target) -> Made {
    let limits = &target.limits;
    let captured = to_usize(limits.max_captured_bytes);
    let stdout = Capture::new(captured);
    let stderr = Capture::new(captured);
    let timeout = Duration::from_millis(limits.timeout_ms);
    let deadline = Deadline::after(timeout);
    let outputs = Outputs {
        stdout: &stdout,
        stderr: &stderr,
    };
    let mut store = match new_store(target, target.pre.engine(), outputs, &deadline) {
        Ok(store) => store,
        Err(fault) => return Made::Failed(fault, false, stdout, stderr),
    };
    let instantiate = target.pre.instantiate_async(&mut store);
    let instance = match tokio::time::timeout(timeout + EPOCH_TICK, instantiate).await {
        Ok(Ok(instance)) => instance,
        Ok(Err(error)) if pool_was_full(&error) => return Made::PoolFull,
        Ok(Err(error)) => {
            let refused = store.data().limiter.exceeded();
            return Made::Failed(classify(&error, target), refused, stdout, stderr);
        }
        Err(_elapsed) => return Made::Failed(Fault::Timeout, false, stdout, stderr),
    };
    Made::Ready(WarmInstance {
        store,
        instance,
        stdout,
        stderr,
        deadline,
        calls: 0,
    })
}
