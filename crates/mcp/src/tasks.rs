//! [`Tasks`]: `tools/call` answered with a task (the MCP Tasks extension,
//! `io.modelcontextprotocol/tasks`, SEP-2663), so that a call that runs
//! longer than a client waits for an answer is polled with `tasks/get`
//! instead of timing out, and stopped with `tasks/cancel`.
//!
//! The wire types are rmcp's ([`Task`], [`DetailedTask`]); the store is
//! toolhost's, because rmcp's `TaskManager` keeps any number of tasks,
//! shows every task to every caller, fails a task that runs past its TTL
//! and leaves stopping to the operation. Here:
//! - a task is seen only by the session (or stdio connection) that made it
//!   (a request without a session sees only tasks made without one, and
//!   needs the task's id, a random UUID, to see it); another one's task
//!   answers as unknown;
//! - `tasks/cancel` stops the call at once, as a cancelled request does:
//!   the guest stops at its next epoch tick and the task reads `cancelled`;
//! - a finished task is kept `[serve] task_ttl_ms` after its call ended,
//!   and at most `[serve] max_tasks` are kept at once: a new task past it
//!   drops the finished one that ended first (or, if all are running, is
//!   not made and the call is answered with an error text);
//! - a running task is bounded by its tool's time limit, not by the TTL.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use rmcp::task_manager::current_timestamp;
use tokio_util::sync::CancellationToken;

/// How often a client is asked to poll a running task, in milliseconds.
const POLL_INTERVAL_MS: u64 = 1_000;

/// How long a cancelled call has to end on its own before it is dropped.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// Who may see a task: the session (or stdio connection) that made it, or
/// every request without a session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Owner {
    /// An HTTP session (its `Mcp-Session-Id`) or a stdio connection.
    Session(String),
    /// Requests without a session (protocol 2026-07-28).
    Sessionless,
}

/// Why a task was not made.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TasksFull {
    /// The bound, `[serve] max_tasks`.
    pub max_tasks: u64,
}

impl TasksFull {
    /// The call's answer when no task could be made for it.
    pub(crate) fn text(&self) -> String {
        format!(
            "Error: toolhost keeps at most {} tasks (serve.max_tasks) and all of them are \
             still running; try again when one has finished, or cancel one with tasks/cancel.",
            self.max_tasks
        )
    }
}

enum State {
    /// The call runs; cancelling `stop` ends it.
    Working { stop: CancellationToken },
    /// The call ended (or was cancelled) at `at`.
    Done { payload: TaskPayload, at: Instant },
}

struct Entry {
    owner: Owner,
    task: Task,
    created: Instant,
    state: State,
}

impl Entry {
    /// The task as `tasks/get` shows it now: its TTL counted from its
    /// creation, so that a finished task is kept `ttl` after it ended.
    fn detailed(&self, ttl: Duration) -> DetailedTask {
        let mut task = self.task.clone();
        let (payload, ran) = match &self.state {
            State::Working { .. } => (TaskPayload::Working, self.created.elapsed()),
            State::Done { payload, at } => (payload.clone(), *at - self.created),
        };
        task.ttl_ms = Some(millis(ran + ttl));
        if !matches!(payload, TaskPayload::Working) {
            task.poll_interval_ms = None;
        }
        DetailedTask::new(task, payload)
    }

    fn expired(&self, now: Instant, ttl: Duration) -> bool {
        matches!(self.state, State::Done { at, .. } if now.duration_since(at) >= ttl)
    }

    /// Ends the task with `payload`, unless it has ended already.
    fn settle(&mut self, payload: TaskPayload) {
        if let State::Working { stop } = &self.state {
            stop.cancel();
            self.task.status = payload.status();
            self.task.last_updated_at = current_timestamp();
            self.state = State::Done {
                payload,
                at: Instant::now(),
            };
        }
    }
}

/// The tasks of a server, shared by all its sessions.
pub(crate) struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
    ttl: Duration,
    max_tasks: u64,
}

impl Tasks {
    /// Tasks whose results are kept `ttl` after their calls end, at most
    /// `max_tasks` at once.
    pub(crate) fn new(ttl: Duration, max_tasks: u64) -> Arc<Self> {
        Arc::new(Self {
            entries: Mutex::new(HashMap::new()),
            ttl,
            max_tasks,
        })
    }

    /// Makes a task for `owner` and runs `call` for it (on the current
    /// tokio runtime): its result is the task's. `call` gets the token
    /// that stops it; it should end soon after the token is cancelled,
    /// and is dropped [`STOP_GRACE`] after that in any case. The task can be seen with
    /// [`get`](Self::get) before this returns.
    pub(crate) fn start<F, C>(self: &Arc<Self>, owner: Owner, call: F) -> Result<Task, TasksFull>
    where
        F: FnOnce(CancellationToken) -> C,
        C: Future<Output = CallToolResult> + Send + 'static,
    {
        let id = uuid::Uuid::new_v4().to_string();
        let now = current_timestamp();
        let task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now)
            .with_ttl_ms(millis(self.ttl))
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        let stop = CancellationToken::new();
        {
            let mut entries = self.lock();
            self.make_room(&mut entries)?;
            entries.insert(
                id.clone(),
                Entry {
                    owner,
                    task: task.clone(),
                    created: Instant::now(),
                    state: State::Working { stop: stop.clone() },
                },
            );
        }
        let running = AssertUnwindSafe(call(stop.clone())).catch_unwind();
        let tasks = Arc::downgrade(self);
        tokio::spawn(async move {
            let payload = tokio::select! {
                ended = running => match ended {
                    Ok(result) => TaskPayload::Completed { result: object(&result) },
                    Err(_) => TaskPayload::Failed {
                        error: object(&ErrorData::internal_error(
                            "the call stopped in the host before it answered; the server's \
                             log says why",
                            None,
                        )),
                    },
                },
                // Cancelled (or forgotten): the call ends on its own token
                // (and counts itself cancelled), or is dropped here.
                () = async {
                    stop.cancelled().await;
                    tokio::time::sleep(STOP_GRACE).await;
                } => return,
            };
            if let Some(tasks) = tasks.upgrade()
                && let Some(entry) = tasks.lock().get_mut(&id)
            {
                entry.settle(payload);
            }
        });
        Ok(task)
    }

    /// `tasks/get`: the task `id` as `owner` may see it.
    pub(crate) fn get(&self, owner: &Owner, id: &str) -> Result<DetailedTask, ErrorData> {
        let mut entries = self.lock();
        self.sweep(&mut entries);
        match entries.get(id) {
            Some(entry) if entry.owner == *owner => Ok(entry.detailed(self.ttl)),
            _ => Err(unknown(id)),
        }
    }

    /// `tasks/cancel`: stops task `id`'s call if it still runs; the task
    /// reads `cancelled` from now on. A finished task is left as it is.
    pub(crate) fn cancel(&self, owner: &Owner, id: &str) -> Result<(), ErrorData> {
        let mut entries = self.lock();
        self.sweep(&mut entries);
        match entries.get_mut(id) {
            Some(entry) if entry.owner == *owner => {
                entry.settle(TaskPayload::Cancelled);
                Ok(())
            }
            _ => Err(unknown(id)),
        }
    }

    /// `tasks/update`: toolhost's tasks never ask for input, so there is
    /// nothing to deliver; the task must exist for `owner`.
    pub(crate) fn check(&self, owner: &Owner, id: &str) -> Result<(), ErrorData> {
        self.get(owner, id).map(|_| ())
    }

    /// Drops every task of `owner` (a session that ended), stopping the
    /// calls that still run.
    pub(crate) fn forget(&self, owner: &Owner) {
        self.lock().retain(|_, entry| {
            if entry.owner != *owner {
                return true;
            }
            if let State::Working { stop } = &entry.state {
                stop.cancel();
            }
            false
        });
    }

    /// Tasks running now.
    #[cfg(test)]
    fn running(&self) -> usize {
        self.lock()
            .values()
            .filter(|e| matches!(e.state, State::Working { .. }))
            .count()
    }

    /// Drops expired tasks, then, if `max_tasks` are still kept, the
    /// finished one that ended first.
    fn make_room(&self, entries: &mut HashMap<String, Entry>) -> Result<(), TasksFull> {
        self.sweep(entries);
        if (entries.len() as u64) < self.max_tasks {
            return Ok(());
        }
        let oldest = entries
            .iter()
            .filter_map(|(id, entry)| match entry.state {
                State::Done { at, .. } => Some((at, id.clone())),
                State::Working { .. } => None,
            })
            .min();
        match oldest {
            Some((_, id)) => {
                entries.remove(&id);
                Ok(())
            }
            None => Err(TasksFull {
                max_tasks: self.max_tasks,
            }),
        }
    }

    fn sweep(&self, entries: &mut HashMap<String, Entry>) {
        let now = Instant::now();
        entries.retain(|_, entry| !entry.expired(now, self.ttl));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        for entry in self.lock().values() {
            if let State::Working { stop } = &entry.state {
                stop.cancel();
            }
        }
    }
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "no task '{id}' here: it never existed, it expired (finished tasks are kept \
             serve.task_ttl_ms), or it belongs to another session"
        ),
        None,
    )
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;

    use super::*;

    fn answer(text: &str) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }

    fn session(name: &str) -> Owner {
        Owner::Session(name.to_string())
    }

    async fn settled(tasks: &Tasks, owner: &Owner, id: &str) -> DetailedTask {
        for _ in 0..500 {
            let task = tasks.get(owner, id).expect("task");
            if task.status().is_terminal() {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("task {id} did not finish");
    }

    #[tokio::test]
    async fn a_task_carries_its_calls_result_and_only_its_owner_sees_it() {
        let tasks = Tasks::new(Duration::from_secs(60), 10);
        let task = tasks
            .start(session("a"), |_| async { answer("42") })
            .expect("made");
        assert_eq!(task.status, TaskStatus::Working);
        let done = settled(&tasks, &session("a"), &task.task_id).await;
        let TaskPayload::Completed { result } = done.payload else {
            panic!("not completed: {done:?}");
        };
        assert_eq!(result["content"][0]["text"], "42");
        for other in [session("b"), Owner::Sessionless] {
            let error = tasks.get(&other, &task.task_id).expect_err("hidden");
            assert!(error.message.contains("no task"), "{}", error.message);
            assert!(tasks.cancel(&other, &task.task_id).is_err());
        }
    }

    #[tokio::test]
    async fn cancelling_drops_the_call_and_the_task_reads_cancelled() {
        let tasks = Tasks::new(Duration::from_secs(60), 10);
        let (dropped_tx, dropped_rx) = tokio::sync::oneshot::channel::<()>();
        let task = tasks
            .start(Owner::Sessionless, move |_| async move {
                let _held = dropped_tx;
                std::future::pending::<CallToolResult>().await
            })
            .expect("made");
        tasks
            .cancel(&Owner::Sessionless, &task.task_id)
            .expect("ack");
        // The call's future is dropped: its sender is gone.
        assert!(dropped_rx.await.is_err());
        let task = tasks.get(&Owner::Sessionless, &task.task_id).expect("kept");
        assert_eq!(task.status(), TaskStatus::Cancelled);
        assert_eq!(tasks.running(), 0);
    }

    #[tokio::test]
    async fn finished_tasks_expire_and_the_oldest_makes_room() {
        let tasks = Tasks::new(Duration::from_millis(200), 2);
        let owner = session("a");
        let first = tasks
            .start(owner.clone(), |_| async { answer("1") })
            .expect("made");
        settled(&tasks, &owner, &first.task_id).await;
        let second = tasks
            .start(owner.clone(), |_| async { answer("2") })
            .expect("made");
        settled(&tasks, &owner, &second.task_id).await;
        // Full of finished tasks: the one that ended first goes.
        let third = tasks
            .start(owner.clone(), |_| std::future::pending())
            .expect("made");
        assert!(tasks.get(&owner, &first.task_id).is_err());
        assert!(tasks.get(&owner, &second.task_id).is_ok());
        let fourth = tasks
            .start(owner.clone(), |_| std::future::pending())
            .expect("made");
        // Two running: no room for a fifth.
        let full = tasks
            .start(owner.clone(), |_| std::future::pending())
            .expect_err("full");
        assert!(full.text().contains("serve.max_tasks"), "{}", full.text());
        tokio::time::sleep(Duration::from_millis(250)).await;
        // Still running: kept past the TTL.
        assert!(tasks.get(&owner, &third.task_id).is_ok());
        tasks.forget(&owner);
        assert!(tasks.get(&owner, &fourth.task_id).is_err());
        assert_eq!(tasks.running(), 0);
    }

    #[tokio::test]
    async fn a_finished_task_is_gone_after_its_ttl() {
        let tasks = Tasks::new(Duration::from_millis(100), 10);
        let task = tasks
            .start(Owner::Sessionless, |_| async { answer("x") })
            .expect("made");
        let done = settled(&tasks, &Owner::Sessionless, &task.task_id).await;
        assert!(done.task.ttl_ms.is_some_and(|ttl| ttl >= 100));
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(tasks.get(&Owner::Sessionless, &task.task_id).is_err());
    }
}
