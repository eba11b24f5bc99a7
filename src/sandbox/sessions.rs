//! [`SessionStore`]: the instances of sessions (`sessions = true`), one per
//! session and module, kept from one call of the session to the next.
//!
//! - A session's instance is made on its first call and serves its later
//!   calls one at a time, keeping its memory and scratch directory; every
//!   call still runs under the module's whole limits.
//! - No other session, and no call without a key, ever reaches it.
//! - It is dropped after a call that trapped or hit a limit (that call's
//!   error says so, and the next call starts afresh), after `max_calls`
//!   calls, when it has been idle for `[sessions] idle_ms`, when more than
//!   `[sessions] max` are kept (the least recently used goes), and when the
//!   session ends. After the middle three, the session's next call is
//!   answered with an error saying its state was reset, and is not run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use indexmap::IndexMap;

use super::call::{CallReport, Request, Seen, Target, report};
use super::capture::Capture;
use super::fault::{Fault, SessionReset};
use super::ready::Disposal;
use super::reused::{Made, ReusedInstance, ScratchBetweenCalls, Served, make};
use crate::policy::SessionLimits;

/// Sessions whose reset is remembered (to tell their next call), as a
/// multiple of `max`: older ones are forgotten, and their next call simply
/// starts afresh.
const RESETS_REMEMBERED_PER_SESSION: usize = 2;

/// How often idle sessions are looked for, at most.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// One session's instance of one module: the session's key, the module's
/// number.
type Key = (Arc<str>, u64);

/// The session instances of every module of one runtime.
pub(crate) struct SessionStore {
    limits: SessionLimits,
    state: Mutex<State>,
    /// Numbers the modules whose sessions are kept here.
    next_module: AtomicU64,
}

/// The modules of a runtime that keep sessions, and their instances.
struct State {
    /// Live instances, least recently used first.
    live: IndexMap<Key, Arc<Slot>>,
    /// Sessions whose instance was dropped and whose next call has not yet
    /// been told, oldest first.
    reset: IndexMap<Key, SessionReset>,
    last_sweep: Instant,
}

/// A session's instance of a module, or none yet; its calls take turns.
struct Slot {
    instance: tokio::sync::Mutex<Option<ReusedInstance>>,
    /// When its last call started or ended.
    last_used: Mutex<Instant>,
    /// Where its store is dropped when the slot is.
    disposal: Arc<Disposal>,
}

impl Slot {
    fn new(disposal: Arc<Disposal>) -> Arc<Self> {
        Arc::new(Self {
            instance: tokio::sync::Mutex::new(None),
            last_used: Mutex::new(Instant::now()),
            disposal,
        })
    }

    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn idle_since(&self) -> Instant {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(instance) = self.instance.get_mut().take() {
            instance.dispose_into(&self.disposal);
        }
    }
}

/// Which sessions of a module a [`Target`] keeps: the store, and the
/// module's number in it.
#[derive(Clone)]
pub(crate) struct ModuleSessions {
    key: Arc<ModuleKey>,
    /// Calls one instance serves before it is renewed.
    max_calls: u64,
}

/// A module's number in the store; when the module (every copy of its
/// target) is gone, so are its sessions' instances.
struct ModuleKey {
    store: Arc<SessionStore>,
    module: u64,
}

impl Drop for ModuleKey {
    fn drop(&mut self) {
        self.store.forget_module(self.module);
    }
}

impl SessionStore {
    /// An empty store bounded by `limits`.
    pub(crate) fn new(limits: SessionLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            state: Mutex::new(State {
                live: IndexMap::new(),
                reset: IndexMap::new(),
                last_sweep: Instant::now(),
            }),
            next_module: AtomicU64::new(0),
        })
    }

    /// The bounds.
    pub(crate) fn limits(&self) -> SessionLimits {
        self.limits
    }

    /// The sessions of a newly loaded module, whose instances each serve at
    /// most `max_calls` calls.
    pub(crate) fn for_module(self: &Arc<Self>, max_calls: u64) -> ModuleSessions {
        let key = ModuleKey {
            store: Arc::clone(self),
            module: self.next_module.fetch_add(1, Ordering::Relaxed),
        };
        ModuleSessions {
            key: Arc::new(key),
            max_calls: max_calls.max(1),
        }
    }

    /// Drops every instance of module `module` (it is gone).
    fn forget_module(&self, module: u64) {
        let mut state = self.lock();
        let mut gone = Vec::new();
        state.live.retain(|(_, m), slot| {
            if *m == module {
                gone.push(Arc::clone(slot));
            }
            *m != module
        });
        state.reset.retain(|(_, m), _| *m != module);
        drop(state);
        drop(gone);
    }

    /// How many session instances are kept now.
    pub(crate) fn live(&self) -> usize {
        self.lock().live.len()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The slot of `key` (made now if it has none, which may evict the
    /// least recently used one), or why its state was reset.
    fn enter(&self, key: &Key, disposal: &Arc<Disposal>) -> Result<Arc<Slot>, SessionReset> {
        let mut state = self.lock();
        self.sweep(&mut state);
        if let Some(index) = state.live.get_index_of(key) {
            let last = state.live.len() - 1;
            state.live.move_index(index, last);
            let slot = Arc::clone(&state.live[last]);
            slot.touch();
            return Ok(slot);
        }
        if let Some(reason) = state.reset.shift_remove(key) {
            return Err(reason);
        }
        let slot = Slot::new(Arc::clone(disposal));
        state.live.insert(key.clone(), Arc::clone(&slot));
        let max = usize::try_from(self.limits.max).unwrap_or(usize::MAX);
        while state.live.len() > max {
            let Some((evicted, _)) = state.live.shift_remove_index(0) else {
                break;
            };
            let reason = SessionReset::Evicted {
                max: self.limits.max,
            };
            self.remember(&mut state, evicted, reason);
        }
        Ok(slot)
    }

    /// Moves the sessions idle for longer than `idle_ms` (and not in a call)
    /// out of `state.live`, at most every [`SWEEP_EVERY`].
    fn sweep(&self, state: &mut State) {
        let now = Instant::now();
        if now.duration_since(state.last_sweep) < SWEEP_EVERY {
            return;
        }
        state.last_sweep = now;
        let idle = Duration::from_millis(self.limits.idle_ms);
        let expired: Vec<Key> = state
            .live
            .iter()
            .filter(|(_, slot)| {
                now.duration_since(slot.idle_since()) >= idle && slot.instance.try_lock().is_ok()
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in expired {
            state.live.shift_remove(&key);
            let reason = SessionReset::Idle {
                idle_ms: self.limits.idle_ms,
            };
            self.remember(state, key, reason);
        }
    }

    /// Remembers that `key`'s state was reset, to tell its next call.
    fn remember(&self, state: &mut State, key: Key, reason: SessionReset) {
        state.reset.insert(key, reason);
        let most = usize::try_from(self.limits.max)
            .unwrap_or(usize::MAX)
            .saturating_mul(RESETS_REMEMBERED_PER_SESSION);
        while state.reset.len() > most {
            state.reset.shift_remove_index(0);
        }
    }

    /// Drops `slot` of `key` if it is still the live one; remembers `reset`
    /// for the next call if there is one.
    fn leave(&self, key: &Key, slot: &Arc<Slot>, reset: Option<SessionReset>) {
        let mut state = self.lock();
        if state
            .live
            .get(key)
            .is_some_and(|live| Arc::ptr_eq(live, slot))
        {
            state.live.shift_remove(key);
            if let Some(reason) = reset {
                self.remember(&mut state, key.clone(), reason);
            }
        }
    }

    /// Forgets `key` (its session ended).
    fn end(&self, key: &Key) {
        let mut state = self.lock();
        let slot = state.live.shift_remove(key);
        state.reset.shift_remove(key);
        // The store is dropped after the lock, by the slot's disposal.
        drop(state);
        drop(slot);
    }

    /// Whether `slot` is still `key`'s live one.
    fn is_live(&self, key: &Key, slot: &Arc<Slot>) -> bool {
        self.lock()
            .live
            .get(key)
            .is_some_and(|live| Arc::ptr_eq(live, slot))
    }
}

impl ModuleSessions {
    /// Calls one instance serves before it is renewed.
    pub(crate) fn max_calls(&self) -> u64 {
        self.max_calls
    }

    /// Ends the instance of this module of the session with key `session`.
    pub(crate) fn end(&self, session: &str) {
        self.key.store.end(&(session.into(), self.key.module));
    }
}

/// How a session's call ended, besides its report.
pub(crate) struct SessionCall {
    pub report: CallReport,
    /// The session's instance was dropped after this call (it trapped or hit
    /// a limit): the next call starts afresh.
    pub dropped: bool,
}

/// Runs `request` in the instance of `target` of the session with key
/// `session` (made now if it has none), after the session's calls before
/// it.
pub(crate) async fn run(
    target: &Target,
    sessions: &ModuleSessions,
    session: &str,
    request: Request,
) -> SessionCall {
    let key = (Arc::<str>::from(session), sessions.key.module);
    let store = &sessions.key.store;
    let slot = match store.enter(&key, &target.disposal) {
        Ok(slot) => slot,
        Err(reason) => return not_run(Fault::SessionReset(reason)),
    };
    let mut guard = slot.instance.lock().await;
    if guard.is_none() {
        match make_instance(target).await {
            Ok(instance) => *guard = Some(instance),
            Err(report) => {
                drop(guard);
                store.leave(&key, &slot, None);
                return SessionCall {
                    report,
                    dropped: false,
                };
            }
        }
    }
    let Some(instance) = guard.as_mut() else {
        return not_run(Fault::Host("the session's instance is missing".into()));
    };
    let Served { report, ended_well } = instance
        .serve(target, request, ScratchBetweenCalls::Kept)
        .await;
    slot.touch();
    let worn_out = instance.calls() >= sessions.max_calls;
    if ended_well && !worn_out && store.is_live(&key, &slot) {
        return SessionCall {
            report,
            dropped: false,
        };
    }
    if let Some(instance) = guard.take() {
        instance.dispose(target);
    }
    drop(guard);
    let reset = (ended_well && worn_out).then_some(SessionReset::MaxCalls {
        max_calls: sessions.max_calls,
    });
    store.leave(&key, &slot, reset);
    SessionCall {
        report,
        dropped: !ended_well,
    }
}

/// A new instance of `target` for a session: from the pool, or made on
/// demand when the pool is full (a session's instance must hold its state,
/// so it is never served as a fresh call).
async fn make_instance(target: &Target) -> Result<ReusedInstance, CallReport> {
    match make(target, (&target.pre, target.exports)).await {
        Made::Ready(instance) => return Ok(instance),
        Made::Failed(report) => return Err(report),
        Made::PoolFull => {}
    }
    let linked = match target.overflow.as_deref().map(|o| o.pre()) {
        Some(Ok(linked)) => linked,
        Some(Err(fault)) => return Err(not_run(fault).report),
        None => return Err(not_run(Fault::Host("the instance pool is full".into())).report),
    };
    match make(target, linked).await {
        Made::Ready(instance) => Ok(instance),
        Made::Failed(report) => Err(report),
        Made::PoolFull => Err(not_run(Fault::Host("the instance pool is full".into())).report),
    }
}

/// The answer of a call that did not run.
fn not_run(fault: Fault) -> SessionCall {
    let nothing = Capture::new(0);
    SessionCall {
        report: report(Err(fault), Seen::default(), &nothing, &nothing),
        dropped: false,
    }
}
