//! [`Target`]: what every call of one module needs, the [`Blueprint`] its
//! instances are made from and the shelves they come from (made ahead,
//! warm, a session's).
//!
//! Changing what a call may reach, or whether instances are warm, renews
//! the shelves: no instance made before serves a call after, so instances
//! made for one access never serve another.

use std::sync::Arc;

use super::blueprint::Blueprint;
use super::ready::ReadyInstances;
use super::runtime::Runtime;
use super::sessions::ModuleSessions;
use super::warm::WarmInstances;
use crate::policy::{Access, Limits, Warm};

/// What every call of one module needs: what its instances are made from,
/// and where they come from.
#[derive(Clone)]
pub(crate) struct Target {
    /// What its instances are made from.
    blueprint: Blueprint,
    /// Instances made ahead of calls (`None` when that is off, or the
    /// module is warm).
    ready: Option<Arc<ReadyInstances>>,
    /// The long-lived instances of a warm module (`None`: every call gets
    /// a fresh instance).
    warm: Option<Arc<WarmInstances>>,
    /// The instances of its sessions (`None`: sessions are off, and a call
    /// in a session is a fresh call).
    sessions: Option<ModuleSessions>,
}

impl Target {
    /// The target of `blueprint`'s calls in `runtime`: a fresh instance for
    /// every call (made ahead when the runtime makes instances ahead), no
    /// sessions. Call [`prepare_first`](Self::prepare_first) once it is
    /// ready to serve.
    pub(crate) fn new(runtime: &Runtime, blueprint: Blueprint) -> Self {
        Self {
            blueprint,
            ready: runtime.ready_instances(),
            warm: None,
            sessions: None,
        }
    }

    /// A target for reading `tool-info` once: `blueprint`'s instances under
    /// `limits`, reaching nothing, each made when it is called (instances
    /// made ahead are for calls, with the call limits).
    pub(crate) fn for_tool_info(&self, limits: Limits) -> Self {
        Self {
            blueprint: self
                .blueprint
                .clone()
                .with_limits(limits)
                .with_access(Access::default()),
            ready: None,
            warm: None,
            sessions: None,
        }
    }

    /// This target with calls reaching what `access` allows, and new
    /// shelves: instances made for the old access must not serve the new
    /// one. Unchanged if the access is the same.
    pub(crate) fn with_access(self, runtime: &Runtime, access: Access) -> Self {
        if **self.blueprint.access() == access {
            return self;
        }
        let warm = self.warm();
        let target = Self {
            blueprint: self.blueprint.with_access(access),
            ..self
        };
        target.renewed(runtime, warm)
    }

    /// This target with warm instances as `warm` says (each serving at
    /// least one call), or a fresh instance for every call when it is
    /// `None`; either way with new shelves, as at load.
    pub(crate) fn with_warmth(self, runtime: &Runtime, warm: Option<Warm>) -> Self {
        let warm = warm.map(|w| Warm {
            max_calls: w.max_calls.max(1),
        });
        self.renewed(runtime, warm)
    }

    /// This target with sessions whose instances each serve at most
    /// `max_calls` calls (new ones: sessions made before start anew), or
    /// with sessions off when it is `None`.
    pub(crate) fn with_sessions(self, runtime: &Runtime, max_calls: Option<u64>) -> Self {
        Self {
            sessions: max_calls.map(|max| runtime.sessions().for_module(max)),
            ..self
        }
    }

    /// Makes the first instance ahead of this target's calls now, so that
    /// even the first call finds one ready; the rest are made after calls,
    /// in the background.
    pub(crate) fn prepare_first(&self, runtime: &Runtime) {
        if let Some(ready) = &self.ready {
            let clock = runtime.clock();
            clock.block_on(clock.drive(ready.fill_one(&self.blueprint)));
        }
    }

    /// New, empty shelves (made ahead, or warm if `warm` says so, and the
    /// sessions' if they are on), the first instance made ahead now.
    fn renewed(self, runtime: &Runtime, warm: Option<Warm>) -> Self {
        let sessions = self.session_calls();
        let target = Self {
            ready: warm.is_none().then(|| runtime.ready_instances()).flatten(),
            warm: warm.map(WarmInstances::new),
            ..self
        }
        .with_sessions(runtime, sessions);
        target.prepare_first(runtime);
        target
    }

    /// What its instances are made from.
    pub(crate) fn blueprint(&self) -> &Blueprint {
        &self.blueprint
    }

    /// The limits of each call.
    pub(crate) fn limits(&self) -> &Limits {
        self.blueprint.limits()
    }

    /// What each call may reach.
    pub(crate) fn access(&self) -> &Access {
        self.blueprint.access()
    }

    /// Its instances made ahead of calls, if they are.
    pub(super) fn ready(&self) -> Option<&Arc<ReadyInstances>> {
        self.ready.as_ref()
    }

    /// Its warm instances, if it is warm.
    pub(super) fn warm_instances(&self) -> Option<&Arc<WarmInstances>> {
        self.warm.as_ref()
    }

    /// How calls reuse warm instances (`None`: a fresh instance each).
    pub(crate) fn warm(&self) -> Option<Warm> {
        self.warm.as_ref().map(|w| w.warm())
    }

    /// How many warm instances wait for calls.
    pub(crate) fn idle_warm_instances(&self) -> usize {
        self.warm.as_ref().map_or(0, |w| w.idle())
    }

    /// How many instances are ready, made ahead of the next calls.
    pub(crate) fn ready_count(&self) -> usize {
        self.ready.as_ref().map_or(0, |r| r.count())
    }

    /// The instances of its sessions, if sessions are on.
    pub(crate) fn sessions(&self) -> Option<&ModuleSessions> {
        self.sessions.as_ref()
    }

    /// The calls one session instance serves at most (`None`: sessions are
    /// off).
    pub(crate) fn session_calls(&self) -> Option<u64> {
        self.sessions.as_ref().map(ModuleSessions::max_calls)
    }

    /// Whether calls take their instances from the instance pool.
    pub(crate) fn pooled(&self) -> bool {
        self.blueprint.overflow().is_some()
    }

    /// How many calls found the instance pool full and ran in an instance
    /// allocated on demand.
    pub(crate) fn calls_off_the_pool(&self) -> u64 {
        self.blueprint.overflow().map_or(0, |o| o.calls())
    }
}
