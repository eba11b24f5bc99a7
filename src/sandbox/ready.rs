//! [`ReadyInstances`]: fresh instances of a module, made before its calls.
//!
//! Making an instance (its store, its WASI context, and the component's
//! instantiation with its start functions) is most of what a small call
//! costs, and nearly all of what a Python or JavaScript tool's call costs.
//! So each module keeps a few instances made ahead of time, in the
//! background. A call takes one, uses it for exactly that call, and its
//! store is then dropped in the background too: no instance ever serves two
//! calls, so isolation is the same as when the call makes its own.
//!
//! A ready instance is made under its module's limits and access exactly as
//! a call's would be; its fuel and memory already count what instantiation
//! used, and its time starts again when the call takes it. The instances
//! are bounded per module and in all ([`PoolConfig`]), an instance no call
//! took for `ready_idle_ms` is dropped, and a call that finds none makes its
//! own, as it would without them.
//!
//! An interpreter packed in a component (CPython from componentize-py,
//! SpiderMonkey from ComponentizeJS) sets itself up on its first export
//! call after instantiation, work that otherwise falls in the tool call's
//! time. So an instance of such a module is also *primed* when it is made:
//! its `call` export is called once with an empty tool name, which is no
//! tool's (`wit/tool.wit` says so: the module answers with an error), the
//! answer and output discarded and the fuel put back to what instantiation
//! left. Only instances that can reach nothing (no grant at all, but a
//! scratch directory of their own, made for the instance and removed with
//! it) are primed, so that nothing the module does then can reach outside
//! it; an
//! instance whose priming fails (a trap, a limit) is dropped, and the
//! module's later instances are made without priming. Priming mostly moves
//! work (the setup the call would otherwise do) off the call's path: the
//! `cargo bench --bench reset` rows marked "primed" show how much.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use wasmtime::Store;
use wasmtime::component::Instance;

use super::blueprint::Blueprint;
use super::export::{Request, call_export};
use super::instantiate::{NewInstance, NotMade, instantiate};
use super::state::CallState;
use crate::engine::{Background, EPOCH_TICK, PoolConfig};
use crate::policy::to_usize;

/// How many instances are made ahead, per module and in all, and how long
/// they are kept: shared by every module of a runtime.
pub(crate) struct ReadyBudget {
    per_module: usize,
    limit: usize,
    idle: Duration,
    /// Instances made ahead that are alive now (on a shelf, being made, or
    /// not yet dropped after their call).
    held: AtomicUsize,
    /// Where they are made.
    background: Background,
}

impl ReadyBudget {
    /// The budget `pool` sets, for instances made on `background`.
    pub(crate) fn new(pool: &PoolConfig, background: Background) -> Self {
        Self {
            per_module: to_usize(u64::from(pool.ready_per_module)),
            limit: pool.ready_limit(),
            idle: Duration::from_millis(pool.ready_idle_ms),
            held: AtomicUsize::new(0),
            background,
        }
    }

    /// A new, empty shelf for one module's calls, or `None` when
    /// pre-instantiation is off.
    pub(crate) fn shelf(self: &Arc<Self>) -> Option<Arc<ReadyInstances>> {
        if self.per_module == 0 || self.limit == 0 {
            return None;
        }
        Some(Arc::new(ReadyInstances {
            budget: Arc::clone(self),
            shelf: Mutex::new(Shelf::default()),
        }))
    }

    /// A place for one more instance, if the budget has one.
    fn reserve(self: &Arc<Self>) -> Option<Held> {
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held < self.limit).then_some(held + 1)
            })
            .ok()?;
        Some(Held(Arc::clone(self)))
    }
}

/// One instance's place in the [`ReadyBudget`], given back when dropped.
pub(crate) struct Held(Arc<ReadyBudget>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.held.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A store with a fresh instance in it, not yet used by any call.
pub(crate) struct Prepared {
    /// The store and instance, whose deadline restarts when the call begins.
    pub(super) made: NewInstance,
    /// Its place in the budget, to give back once the store is dropped.
    pub(super) held: Held,
    /// When it was made (it is dropped after the idle time).
    at: Instant,
}

/// The instances made ahead for one module (and one access).
pub(crate) struct ReadyInstances {
    budget: Arc<ReadyBudget>,
    shelf: Mutex<Shelf>,
}

#[derive(Default)]
struct Shelf {
    ready: Vec<Prepared>,
    /// Instances being made now.
    making: usize,
    /// Making one failed (other than for a full pool): calls make their own
    /// from now on, and report why it fails.
    broken: bool,
    /// Whether a task drops the instances left idle.
    sweeping: bool,
    /// Priming an instance failed once: later ones are not primed.
    unprimable: bool,
}

/// Why an instance could not be made ahead.
enum Unready {
    /// No room now (pool or budget); try again after a later call.
    NoRoom,
    /// It fails; calls will fail the same way, and say why.
    Broken,
    /// Priming it failed; instances are made without priming from now on.
    Unprimable,
}

impl ReadyInstances {
    /// An instance for one call, if one is ready.
    pub(crate) fn take(&self) -> Option<Prepared> {
        self.lock().ready.pop()
    }

    /// How many instances are ready now.
    pub(crate) fn count(&self) -> usize {
        self.lock().ready.len()
    }

    /// Makes one instance of `blueprint` now, on the caller's task, unless the
    /// shelf is full or broken.
    pub(crate) async fn fill_one(self: &Arc<Self>, blueprint: &Blueprint) {
        let Some((held, prime)) = self.start_making(blueprint) else {
            return;
        };
        let made = make(blueprint, held, prime).await;
        self.shelve(made);
    }

    /// After a call of `blueprint`: has as many instances made as the shelf
    /// lacks (and the budget allows), in the background. They are started
    /// at once when the call took the last one (the next call would wait
    /// for one); otherwise when the background next runs (see
    /// [`Background::soon`](crate::engine::Background::soon)), so that a
    /// call that found an instance ready wakes no thread, and calls that
    /// found none (the background is behind: the machine is busy) do not
    /// pile more work on it than a tick's worth.
    pub(crate) fn refill(self: &Arc<Self>, blueprint: &Blueprint, took_one: bool) {
        let background = &self.budget.background;
        let urgent = took_one && self.lock().ready.is_empty();
        while let Some((held, prime)) = self.start_making(blueprint) {
            let shelf = Arc::clone(self);
            let blueprint = blueprint.clone();
            let job = async move {
                let made = make(&blueprint, held, prime).await;
                shelf.shelve(made);
            };
            if urgent {
                background.now(job);
            } else {
                background.soon(job);
            }
        }
        self.start_sweeping();
    }

    /// A place on the shelf and in the budget for one more instance of
    /// `blueprint`, and whether to prime it.
    fn start_making(self: &Arc<Self>, blueprint: &Blueprint) -> Option<(Held, bool)> {
        let mut shelf = self.lock();
        if shelf.broken || shelf.ready.len() + shelf.making >= self.budget.per_module {
            return None;
        }
        let held = self.budget.reserve()?;
        shelf.making += 1;
        let prime = blueprint.primes_ready()
            && blueprint.access().reaches_only_its_own()
            && !shelf.unprimable;
        Some((held, prime))
    }

    fn shelve(&self, made: Result<Prepared, Unready>) {
        let mut shelf = self.lock();
        shelf.making -= 1;
        match made {
            Ok(prepared) => shelf.ready.push(prepared),
            Err(Unready::NoRoom) => {}
            Err(Unready::Broken) => shelf.broken = true,
            Err(Unready::Unprimable) => shelf.unprimable = true,
        }
    }

    /// Drops, from time to time, the instances no call took for the idle
    /// time; the job ends when the shelf is empty (or gone).
    fn start_sweeping(self: &Arc<Self>) {
        let idle = self.budget.idle;
        {
            let mut shelf = self.lock();
            if shelf.sweeping {
                return;
            }
            shelf.sweeping = true;
        }
        let shelf = Arc::downgrade(self);
        self.budget.background.soon(async move {
            loop {
                tokio::time::sleep(idle / 2).await;
                if !sweep(&shelf, idle) {
                    return;
                }
            }
        });
    }

    fn lock(&self) -> MutexGuard<'_, Shelf> {
        self.shelf.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Drops the instances of `shelf` older than `idle`; whether to go on
/// (not when the shelf is gone, or empty with nothing being made).
fn sweep(shelf: &Weak<ReadyInstances>, idle: Duration) -> bool {
    let Some(shelf) = shelf.upgrade() else {
        return false;
    };
    let mut guard = shelf.lock();
    let (stale, fresh): (Vec<Prepared>, Vec<Prepared>) = std::mem::take(&mut guard.ready)
        .into_iter()
        .partition(|p| p.at.elapsed() >= idle);
    guard.ready = fresh;
    let going_on = !guard.ready.is_empty() || guard.making > 0;
    guard.sweeping = going_on;
    drop(guard);
    drop(stale);
    going_on
}

/// A fresh store and instance for one call of `blueprint`, made under its
/// limits, and primed if `prime` says so.
async fn make(blueprint: &Blueprint, held: Held, prime: bool) -> Result<Prepared, Unready> {
    let linked = (blueprint.pre(), blueprint.exports());
    let mut made = match instantiate(blueprint, linked, None).await {
        Ok(made) => made,
        Err(NotMade::PoolFull) => return Err(Unready::NoRoom),
        Err(NotMade::Failed(_)) => return Err(Unready::Broken),
    };
    let timeout = Duration::from_millis(blueprint.limits().timeout_ms);
    if prime && !primed(blueprint, &mut made.store, &made.instance, timeout).await {
        return Err(Unready::Unprimable);
    }
    made.stdout.clear();
    made.stderr.clear();
    Ok(Prepared {
        made,
        held,
        at: Instant::now(),
    })
}

/// Calls `call` once with an empty tool name on `instance` (fresh, in
/// `store`), so that the guest's interpreter sets itself up now rather than
/// in the tool call, and puts back the fuel it used; whether it answered
/// (either way) within the limits. The caller clears what it printed.
async fn primed(
    blueprint: &Blueprint,
    store: &mut Store<CallState>,
    instance: &Instance,
    timeout: Duration,
) -> bool {
    let Ok(fuel) = store.get_fuel() else {
        return false;
    };
    let max_bytes = to_usize(blueprint.limits().max_output_bytes);
    let request = Request::Call {
        name: String::new(),
        arguments: Arc::from(""),
    };
    let call = call_export(store, instance, blueprint.exports(), request, max_bytes);
    let answered = matches!(
        tokio::time::timeout(timeout + EPOCH_TICK, call).await,
        Ok(Ok(Ok(_)))
    );
    answered && !store.data().limiter.exceeded() && store.set_fuel(fuel).is_ok()
}
