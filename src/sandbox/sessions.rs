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
//!   answered with an error saying its state was reset, and is not run:
//!   the session's key carries that note, so the store needs nothing for
//!   sessions it no longer holds, however many came after (it also recalls
//!   the latest resets, for keys made again from their text).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use indexmap::IndexMap;

use super::blueprint::Blueprint;
use super::capture::Capture;
use super::disposal::Disposal;
use super::export::Request;
use super::fault::Fault;
use super::instantiate::instantiate_anywhere;
use super::report::{CallReport, Seen, report};
use super::reused::{ReusedInstance, ScratchBetweenCalls, Served};
use crate::policy::SessionLimits;
use crate::tool::{SessionId, SessionReset, StderrListener};

/// Resets also remembered by the store, for keys made again from their
/// text (which carry no note of their own), as a multiple of `max`: older
/// ones are forgotten. A key kept by its session's owner is always told.
const RESETS_RECALLED_PER_SESSION: usize = 2;

/// How often idle sessions are looked for, at most.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// One session's instance of one module: the session's key, the module's
/// number.
type Key = (Arc<str>, u64);

/// The session instances of every module of one runtime.
pub(crate) struct SessionStore {
    limits: SessionLimits,
    state: Mutex<State>,
}

/// Numbers the modules with sessions of every store, so that a session's
/// key can note resets of modules of several runtimes apart.
static NEXT_MODULE: AtomicU64 = AtomicU64::new(0);

/// The modules of a runtime that keep sessions, and their instances.
struct State {
    /// Live instances, least recently used first.
    live: IndexMap<Key, Arc<Slot>>,
    /// The latest resets not yet told, oldest first, at most
    /// [`RESETS_RECALLED_PER_SESSION`] times `max`.
    recent: IndexMap<Key, SessionReset>,
    last_sweep: Instant,
}

impl State {
    /// Notes that `slot`'s state, of `key`, was dropped for `reason` (if it
    /// had any): in its session's key, and among the recent resets, of
    /// which at most `most` are kept.
    fn note_reset(&mut self, key: Key, slot: &Slot, reason: SessionReset, most: usize) {
        if !slot.made.load(Ordering::Relaxed) {
            return;
        }
        slot.session().note_reset(key.1, reason);
        self.recent.insert(key, reason);
        while self.recent.len() > most {
            self.recent.shift_remove_index(0);
        }
    }

    /// Takes the reset of `key` not yet told, noted in `session` or
    /// recalled by the store.
    fn take_reset(&mut self, key: &Key, session: &SessionId) -> Option<SessionReset> {
        let recalled = self.recent.shift_remove(key);
        session.take_reset(key.1).or(recalled)
    }
}

/// A session's instance of a module, or none yet; its calls take turns.
struct Slot {
    instance: tokio::sync::Mutex<Option<ReusedInstance>>,
    /// The key of its session's latest call: where a reset is noted.
    session: Mutex<SessionId>,
    /// Whether an instance was made in it (so that the session has state
    /// to lose).
    made: AtomicBool,
    /// When its last call started or ended.
    last_used: Mutex<Instant>,
    /// Where its store is dropped when the slot is.
    disposal: Arc<Disposal>,
}

impl Slot {
    fn new(session: &SessionId, disposal: Arc<Disposal>) -> Arc<Self> {
        Arc::new(Self {
            instance: tokio::sync::Mutex::new(None),
            session: Mutex::new(session.clone()),
            made: AtomicBool::new(false),
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

    /// Takes `session` (the key of the call entering now) as the one to
    /// note a reset in.
    fn entered_by(&self, session: &SessionId) {
        *self.session.lock().unwrap_or_else(PoisonError::into_inner) = session.clone();
    }

    /// The key of its session's latest call.
    fn session(&self) -> MutexGuard<'_, SessionId> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
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
                recent: IndexMap::new(),
                last_sweep: Instant::now(),
            }),
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
            module: NEXT_MODULE.fetch_add(1, Ordering::Relaxed),
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
        state.recent.retain(|(_, m), _| *m != module);
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

    /// How many resets the store recalls for keys made again from text.
    fn recalled(&self) -> usize {
        usize::try_from(self.limits.max)
            .unwrap_or(usize::MAX)
            .saturating_mul(RESETS_RECALLED_PER_SESSION)
    }

    /// The slot of `key`, the key of `session`'s state (made now if it has
    /// none, which may evict the least recently used one), or why its state
    /// was reset since its last call.
    fn enter(
        &self,
        key: &Key,
        session: &SessionId,
        disposal: &Arc<Disposal>,
    ) -> Result<Arc<Slot>, SessionReset> {
        let mut state = self.lock();
        self.sweep(&mut state);
        if let Some(index) = state.live.get_index_of(key) {
            let last = state.live.len() - 1;
            state.live.move_index(index, last);
            let slot = Arc::clone(&state.live[last]);
            slot.touch();
            slot.entered_by(session);
            return Ok(slot);
        }
        if let Some(reason) = state.take_reset(key, session) {
            return Err(reason);
        }
        let slot = Slot::new(session, Arc::clone(disposal));
        state.live.insert(key.clone(), Arc::clone(&slot));
        let max = usize::try_from(self.limits.max).unwrap_or(usize::MAX);
        while state.live.len() > max {
            let Some((evicted_key, evicted)) = state.live.shift_remove_index(0) else {
                break;
            };
            let reason = SessionReset::Evicted {
                max: self.limits.max,
            };
            state.note_reset(evicted_key, &evicted, reason, self.recalled());
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
            if let Some(slot) = state.live.shift_remove(&key) {
                let reason = SessionReset::Idle {
                    idle_ms: self.limits.idle_ms,
                };
                state.note_reset(key, &slot, reason, self.recalled());
            }
        }
    }

    /// Drops `slot` of `key` if it is still the live one, and notes `reset`
    /// in its session's key for the next call; with no reset (the call's
    /// own error said the state was dropped), forgets any noted before,
    /// such as an eviction while the call ran.
    fn leave(&self, key: &Key, slot: &Arc<Slot>, reset: Option<SessionReset>) {
        let mut state = self.lock();
        if state
            .live
            .get(key)
            .is_some_and(|live| Arc::ptr_eq(live, slot))
        {
            state.live.shift_remove(key);
        }
        match reset {
            Some(reason) => state.note_reset(key.clone(), slot, reason, self.recalled()),
            None => {
                state.take_reset(key, &slot.session());
            }
        }
    }

    /// Forgets `key`, the key of `session` (its session ended): its next
    /// call starts afresh, untold.
    fn end(&self, key: &Key, session: &SessionId) {
        let mut state = self.lock();
        let slot = state.live.shift_remove(key);
        state.take_reset(key, session);
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
    pub(crate) fn end(&self, session: &SessionId) {
        let key = (Arc::clone(session.key()), self.key.module);
        self.key.store.end(&key, session);
    }
}

/// How a session's call ended, besides its report.
pub(crate) struct SessionCall {
    pub report: CallReport,
    /// The session's instance was dropped after this call (it trapped or hit
    /// a limit): the next call starts afresh.
    pub dropped: bool,
}

/// Runs `request` in the instance of `blueprint` of the session with key
/// `session` (made now if it has none), after the session's calls before
/// it.
pub(crate) async fn run(
    blueprint: &Blueprint,
    sessions: &ModuleSessions,
    session: &SessionId,
    request: Request,
    stderr: Option<&StderrListener>,
) -> SessionCall {
    let key = (Arc::clone(session.key()), sessions.key.module);
    let store = &sessions.key.store;
    let slot = match store.enter(&key, session, blueprint.disposal()) {
        Ok(slot) => slot,
        Err(reason) => return not_run(Fault::SessionReset(reason)),
    };
    let mut guard = slot.instance.lock().await;
    if guard.is_none() {
        match make_instance(blueprint).await {
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
    slot.made.store(true, Ordering::Relaxed);
    let Served { report, ended_well } = instance
        .serve(blueprint, request, ScratchBetweenCalls::Kept, stderr)
        .await;
    slot.touch();
    let worn_out = instance.calls() >= sessions.max_calls;
    // Evicted while this call ran (the store made room for newer sessions).
    let evicted = !store.is_live(&key, &slot);
    if ended_well && !worn_out && !evicted {
        return SessionCall {
            report,
            dropped: false,
        };
    }
    if let Some(instance) = guard.take() {
        instance.dispose(blueprint);
    }
    drop(guard);
    let reset = match (ended_well, worn_out) {
        // This call's error says the state was dropped.
        (false, _) => None,
        (true, true) => Some(SessionReset::MaxCalls {
            max_calls: sessions.max_calls,
        }),
        // Evicted while the call ran.
        (true, false) => Some(SessionReset::Evicted {
            max: store.limits.max,
        }),
    };
    store.leave(&key, &slot, reset);
    SessionCall {
        report,
        dropped: !ended_well,
    }
}

/// A new instance of `blueprint` for a session: from the pool, or made on
/// demand when the pool is full (a session's instance must hold its state,
/// so it is never served as a fresh call).
async fn make_instance(blueprint: &Blueprint) -> Result<ReusedInstance, CallReport> {
    instantiate_anywhere(blueprint, None)
        .await
        .map(ReusedInstance::new)
}

/// The answer of a call that did not run.
fn not_run(fault: Fault) -> SessionCall {
    let nothing = Capture::new(0);
    SessionCall {
        report: report(Err(fault), Seen::default(), &nothing, &nothing),
        dropped: false,
    }
}
