//! [`Backpressured`]: a transport that stops reading requests while too
//! many are unanswered.
//!
//! rmcp reads every message a client sends and writes each answer from a
//! task of its own; a client that writes requests and never reads its
//! answers would make the server read all of them and keep every answer
//! in memory. Here a request counts from the moment it is read until its
//! answer is written (or the client cancels it); at `limit` of those,
//! reading waits. The client's writes then block in the pipe, and the
//! server's memory stays flat whatever it sends.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::Notify;

/// `inner`, reading no further while `limit` requests are unanswered.
pub(crate) struct Backpressured<T> {
    inner: T,
    unanswered: Arc<Unanswered>,
}

/// The requests read and not answered yet.
struct Unanswered {
    ids: Mutex<HashSet<RequestId>>,
    answered: Notify,
    limit: usize,
}

impl Unanswered {
    fn count(&self) -> usize {
        self.ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn add(&self, id: RequestId) {
        self.ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id);
    }

    fn remove(&self, id: &RequestId) {
        let removed = self
            .ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        if removed {
            self.answered.notify_waiters();
        }
    }
}

impl<T> Backpressured<T> {
    /// `inner`, with at most `limit` (at least 1) requests unanswered.
    pub(crate) fn new(inner: T, limit: usize) -> Self {
        Self {
            inner,
            unanswered: Arc::new(Unanswered {
                ids: Mutex::new(HashSet::new()),
                answered: Notify::new(),
                limit: limit.max(1),
            }),
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Backpressured<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let unanswered = Arc::clone(&self.unanswered);
        let sent = self.inner.send(item);
        async move {
            let result = sent.await;
            if let Some(id) = id {
                unanswered.remove(&id);
            }
            result
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let answered = self.unanswered.answered.notified();
            if self.unanswered.count() < self.unanswered.limit {
                break;
            }
            answered.await;
        }
        let message = self.inner.receive().await?;
        match &message {
            JsonRpcMessage::Request(request) => self.unanswered.add(request.id.clone()),
            // A cancelled request gets no answer.
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.unanswered.remove(id);
                }
            }
            _ => {}
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
