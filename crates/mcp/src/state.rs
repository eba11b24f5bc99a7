//! [`Served`]: what every connection of the server shares: the tool set in
//! force (swapped whole on reload), the bound on calls in flight, the
//! metrics, and who to tell when the tool list changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use rmcp::service::{Peer, RoleServer};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use toolhost::ToolManager;
use toolhost::config::{LoadedModule, ServeConfig};

use crate::calls::CallThreads;
use crate::catalog::Catalog;
use crate::metrics::Metrics;
use crate::tasks::{Owner, Tasks};

/// One set of loaded modules, served as a whole.
pub(crate) struct ToolSet {
    pub manager: ToolManager,
    pub catalog: Catalog,
    pub modules: Vec<LoadedModule>,
}

impl ToolSet {
    pub(crate) fn new(manager: ToolManager, modules: Vec<LoadedModule>) -> Self {
        let catalog = Catalog::of(&manager);
        Self {
            manager,
            catalog,
            modules,
        }
    }
}

/// The state the server's connections share.
pub(crate) struct Served {
    current: ArcSwap<ToolSet>,
    /// The number of times the tool list changed; `subscriptions/listen`
    /// streams wait on it.
    changes: watch::Sender<u64>,
    calls: Arc<Semaphore>,
    /// Where the calls run.
    pub threads: CallThreads,
    pub settings: ServeConfig,
    pub metrics: Metrics,
    /// The calls answered with a task, until they expire.
    pub tasks: Arc<Tasks>,
    /// Clients of sessions (protocol versions before 2026-07-28), by
    /// session, told of changes with `notifications/tools/list_changed`.
    /// A session is forgotten as soon as it ends.
    sessions: Mutex<HashMap<String, Peer<RoleServer>>>,
    /// The toolhost session key of each HTTP session that made a call,
    /// kept until the session ends: one key value for all its calls, which
    /// carries what its next call must be told (its state was reset).
    keys: Mutex<HashMap<String, toolhost::SessionId>>,
}

impl Served {
    pub(crate) fn new(tools: ToolSet, settings: ServeConfig) -> anyhow::Result<Arc<Self>> {
        let metrics = Metrics::new();
        metrics.modules.set(tools.modules.len() as i64);
        let calls = usize::try_from(settings.max_calls_in_flight).unwrap_or(usize::MAX);
        let tasks = Tasks::new(
            std::time::Duration::from_millis(settings.task_ttl_ms),
            settings.max_tasks,
        );
        Ok(Arc::new(Self {
            current: ArcSwap::from_pointee(tools),
            changes: watch::channel(0).0,
            calls: Arc::new(Semaphore::new(calls.min(Semaphore::MAX_PERMITS))),
            threads: CallThreads::new()?,
            settings,
            metrics,
            tasks,
            sessions: Mutex::new(HashMap::new()),
            keys: Mutex::new(HashMap::new()),
        }))
    }

    /// The tool set in force. Calls hold on to the set they started with.
    pub(crate) fn tools(&self) -> Arc<ToolSet> {
        self.current.load_full()
    }

    /// Serves `tools` from now on; tells clients if the tool list changed.
    pub(crate) async fn replace(&self, tools: ToolSet) {
        self.metrics.modules.set(tools.modules.len() as i64);
        let changed = !self.current.load().catalog.same_tools(&tools.catalog);
        self.current.store(Arc::new(tools));
        if changed {
            self.changes.send_modify(|n| *n += 1);
            self.notify_sessions().await;
        }
    }

    /// A place among the calls in flight, or `None` when all are taken.
    pub(crate) fn start_call(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.calls).try_acquire_owned().ok()
    }

    /// Waits until no call is in flight, and lets no new one start.
    pub(crate) async fn drain(&self) {
        let all = u32::try_from(self.settings.max_calls_in_flight).unwrap_or(u32::MAX);
        if let Ok(permits) = self.calls.acquire_many(all).await {
            permits.forget();
        }
    }

    /// A receiver that sees every change of the tool list.
    pub(crate) fn watch_changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Remembers the client of session `id`, to tell it of changes; forgets
    /// those whose connection is gone.
    pub(crate) fn add_session(&self, id: String, peer: Peer<RoleServer>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.retain(|_, peer| !peer.is_transport_closed());
        sessions.insert(id, peer);
    }

    /// Forgets the client of session `id`, which has ended, and drops the
    /// state its calls kept in modules with sessions on, and its tasks
    /// (stopping those that still run).
    pub(crate) fn forget_session(&self, id: &str) {
        self.tasks.forget(&Owner::Session(id.to_string()));
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        let kept = self
            .keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if let Some(key) = kept.or_else(|| toolhost::SessionId::parse(id).ok()) {
            self.tools().manager.end_session(&key);
        }
    }

    /// The toolhost session key of the HTTP session `id` (one the transport
    /// has checked is open): the same key value for all its calls until it
    /// ends; `None` for an id that is not a session key.
    pub(crate) fn session_key(&self, id: &str) -> Option<toolhost::SessionId> {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = keys.get(id) {
            return Some(key.clone());
        }
        let key = toolhost::SessionId::parse(id).ok()?;
        keys.insert(id.to_string(), key.clone());
        Some(key)
    }

    /// Tells every session's client that the tool list changed; forgets
    /// the clients that are gone.
    async fn notify_sessions(&self) {
        let peers: Vec<(String, Peer<RoleServer>)> = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(id, peer)| (id.clone(), peer.clone()))
            .collect();
        for (id, peer) in peers {
            if peer.notify_tool_list_changed().await.is_err() {
                self.forget_session(&id);
            }
        }
    }
}
