//! [`Sessions`]: the sessions of 2025-11-25 clients over HTTP, bounded in
//! number and in idle time.
//!
//! rmcp's session manager keeps every session until the client deletes
//! it. This one, around it, closes a session that has had no request for
//! `session_idle_ms`, and when `max_sessions` are open and a client asks
//! for another, closes the one idle longest first. A session closed any
//! way (deleted, expired, evicted) is forgotten by the server at once, and
//! its id gets 404 from then on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

use crate::state::Served;

/// The sessions: rmcp's, and when each last had a request.
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    last_seen: Mutex<HashMap<SessionId, Instant>>,
    max: usize,
    idle: Duration,
    served: Arc<Served>,
}

impl Sessions {
    /// At most `max` sessions, each closed after `idle` without a request.
    pub(crate) fn new(served: Arc<Served>, max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        // rmcp ends a session's worker after this long without traffic;
        // the sweep below also forgets it.
        inner.session_config.keep_alive = Some(idle);
        Self {
            inner,
            last_seen: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
            served,
        }
    }

    /// How long to wait between sweeps for expired sessions.
    pub(crate) fn sweep_every(&self) -> Duration {
        (self.idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60))
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.last_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes a request of session `id`; whether the session is still open
    /// (one that expired is closed here).
    async fn touch(&self, id: &SessionId) -> bool {
        let now = Instant::now();
        let expired = {
            let mut seen = self.seen();
            match seen.get_mut(id) {
                Some(last) if now.duration_since(*last) < self.idle => {
                    *last = now;
                    return true;
                }
                Some(_) => true,
                None => false,
            }
        };
        if expired {
            self.close(id).await;
        }
        false
    }

    /// Closes session `id` and forgets it.
    async fn close(&self, id: &SessionId) {
        self.seen().remove(id);
        self.served.forget_session(id);
        if let Err(e) = self.inner.close_session(id).await {
            tracing::debug!("closing a session: {e}");
        }
        self.count();
    }

    fn count(&self) {
        let open = self.seen().len();
        self.served.metrics.sessions.set(open as i64);
    }

    /// Closes the sessions idle past `idle`, and then, while `room` more
    /// would not fit under `max`, those idle longest.
    pub(crate) async fn sweep(&self, room: usize) {
        let now = Instant::now();
        let doomed: Vec<SessionId> = {
            let seen = self.seen();
            let mut by_age: Vec<(&SessionId, &Instant)> = seen.iter().collect();
            by_age.sort_by_key(|(_, last)| **last);
            let over = (seen.len() + room).saturating_sub(self.max);
            by_age
                .iter()
                .enumerate()
                .filter(|(i, (_, last))| *i < over || now.duration_since(**last) >= self.idle)
                .map(|(_, (id, _))| Arc::clone(id))
                .collect()
        };
        for id in doomed {
            self.close(&id).await;
        }
    }

    fn not_found(id: &SessionId) -> LocalSessionManagerError {
        LocalSessionManagerError::SessionNotFound(Arc::clone(id))
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.sweep(1).await;
        let (id, transport) = self.inner.create_session().await?;
        self.seen().insert(Arc::clone(&id), Instant::now());
        self.count();
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if !self.touch(id).await {
            return Err(Self::not_found(id));
        }
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if !self.touch(id).await {
            return Ok(false);
        }
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.close(id).await;
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id).await {
            return Err(Self::not_found(id));
        }
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        if !self.touch(id).await {
            return Err(Self::not_found(id));
        }
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id).await {
            return Err(Self::not_found(id));
        }
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id).await {
            return Err(Self::not_found(id));
        }
        self.inner.resume(id, last_event_id).await
    }

    // restore_session: not supported (the default): an unknown session id
    // gets 404, and no client can make sessions under ids of its choosing.
}
