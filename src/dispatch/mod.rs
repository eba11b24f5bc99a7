//! Dispatching OpenAI tool calls to the registered tools: one call, a batch
//! in parallel, an assistant message; blocking or async. Every failure is
//! an `Error: ...` text, never a panic.
//!
//! Adds the dispatch methods to [`ToolManager`].

mod arguments;
mod json;
mod openai;
mod session;
mod spawned;
mod unknown;

use std::cell::OnceCell;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};
use serde_json::Value;
use serde_json::value::RawValue;

pub use json::Json;
pub use openai::{Answer, ParsedCall, is_one_call, parse_tool_call, tool_calls_of, tool_message};

use crate::parallel::run_parallel;
use crate::policy::limit_key;
use crate::registry::ToolManager;
use crate::tool::{Arguments, SessionId, StderrListener, Tool, ToolError, ToolErrorKind};
use unknown::ActiveNames;

pub use session::Session;

/// A call that passed every check and is ready to run.
struct Ready {
    name: String,
    arguments: Arguments,
    provider: Arc<dyn Tool>,
    /// The session the call runs in, if any.
    session: Option<SessionId>,
    /// Where the tool's stderr goes while the call runs (async calls only).
    stderr: Option<StderrListener>,
}

impl Ready {
    /// The answer of a call its batch had no time left to start.
    fn too_late(&self, batch_timeout: Duration) -> ToolError {
        ToolError::new(
            ToolErrorKind::Timeout,
            format!(
                "tool '{}' was not run: its batch reached its time limit of {} ms (limits.{}).",
                self.name,
                batch_timeout.as_millis(),
                limit_key::batch_timeout_ms
            ),
        )
    }

    /// Runs the call on this thread, unless the batch's `deadline` has passed.
    fn run_before(&self, deadline: &Deadline) -> Result<String, ToolError> {
        if deadline.passed() {
            return Err(self.too_late(deadline.timeout));
        }
        self.run()
    }

    /// Runs the call on this thread.
    fn run(&self) -> Result<String, ToolError> {
        match &self.session {
            Some(session) => self
                .provider
                .call_in_session(session, &self.name, &self.arguments),
            None => self.provider.call(&self.name, &self.arguments),
        }
    }

    /// The call, with the tool's stderr handed to `stderr` (if given)
    /// while it runs.
    fn listened(self, stderr: Option<&StderrListener>) -> Self {
        Self {
            stderr: stderr.cloned(),
            ..self
        }
    }

    /// The call as a future that owns what it needs.
    fn run_async(self) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        let provider = Arc::clone(&self.provider);
        match (self.session, self.stderr) {
            (session, Some(stderr)) => {
                provider.call_listened_async(session, self.name, self.arguments, stderr)
            }
            (Some(session), None) => {
                provider.call_in_session_async(session, self.name, self.arguments)
            }
            (None, None) => provider.call_async(self.name, self.arguments),
        }
    }
}

/// When a batch must have started all its calls.
#[derive(Clone, Copy)]
struct Deadline {
    at: Instant,
    timeout: Duration,
}

impl Deadline {
    fn after(timeout: Duration) -> Self {
        Self {
            at: Instant::now() + timeout,
            timeout,
        }
    }

    fn passed(&self) -> bool {
        Instant::now() >= self.at
    }
}

/// The text a call is answered with.
fn answer(result: Result<String, ToolError>) -> String {
    result.unwrap_or_else(|e| e.to_string())
}

impl ToolManager {
    /// Dispatches an OpenAI tool call; returns the result or an `Error: ...` text.
    ///
    /// `tool_call` is `{"id","type":"function","function":{"name","arguments"}}`;
    /// `arguments` may be JSON text, an object, null or blank (both `{}`).
    /// Blocks until the call is done (see [`ToolManager::call_async`]).
    pub fn call(&self, tool_call: &Value) -> String {
        Scope::new(self, None).call(tool_call)
    }

    /// [`ToolManager::call`] with the error as a [`ToolError`].
    pub fn try_call(&self, tool_call: &Value) -> Result<String, ToolError> {
        Scope::new(self, None).try_call(tool_call)
    }

    /// Calls tool `name` with `arguments` (JSON text, an object, null or `None`).
    pub fn call_tool(&self, name: &str, arguments: Option<&Value>) -> Result<String, ToolError> {
        Scope::new(self, None).call_tool(name, arguments)
    }

    /// [`ToolManager::call`] as a future, for async code: it runs on the
    /// caller's executor without a thread of its own, yields while the tool
    /// waits or spins, and stops the tool's call when dropped. Every limit
    /// applies as in the blocking call.
    ///
    /// The call is checked (name, controller, arguments) before this
    /// returns; the future owns what it needs, so it can be spawned.
    pub fn call_async(&self, tool_call: &Value) -> impl Future<Output = String> + Send + 'static {
        Scope::new(self, None).call_async(tool_call)
    }

    /// [`ToolManager::call`] for a tool call given as JSON text: read only
    /// as far as needed, so that its arguments (JSON text or an object)
    /// reach the tool byte for byte.
    pub fn call_json(&self, tool_call: &str) -> String {
        Scope::new(self, None).call_json(tool_call)
    }

    /// [`ToolManager::call_json`] as a future (see [`ToolManager::call_async`]).
    pub fn call_json_async(
        &self,
        tool_call: &str,
    ) -> impl Future<Output = String> + Send + 'static {
        Scope::new(self, None).call_json_async(tool_call)
    }

    /// [`ToolManager::call_tool`] as a future (see [`ToolManager::call_async`]).
    pub fn call_tool_async(
        &self,
        name: &str,
        arguments: Option<&Value>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        Scope::new(self, None).call_tool_async(name, arguments)
    }

    /// [`ToolManager::call_tool_async`] with the arguments as JSON text: one
    /// object (blank for `{}`), which the tool receives byte for byte, as it
    /// was written (large integers, number forms, repeated keys, escapes).
    pub fn call_tool_json_async(
        &self,
        name: &str,
        arguments: &str,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        Scope::new(self, None).call_tool_json_async(name, arguments)
    }

    /// [`ToolManager::call_tool_async`] that passes what the tool writes to
    /// stderr to `stderr`, if given, while the call runs (a server sends it
    /// on as log messages); the answer is the same.
    pub fn call_tool_listened_async(
        &self,
        name: &str,
        arguments: Option<&Value>,
        stderr: Option<&StderrListener>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        Scope::new(self, None).call_tool_listened_async(name, arguments, stderr)
    }

    /// [`ToolManager::call_tool_json_async`] that passes what the tool
    /// writes to stderr to `stderr`, if given, while the call runs.
    pub fn call_tool_json_listened_async(
        &self,
        name: &str,
        arguments: &str,
        stderr: Option<&StderrListener>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        Scope::new(self, None).call_tool_json_listened_async(name, arguments, stderr)
    }

    /// Answers a batch of tool calls: malformed and unknown calls at once, the
    /// rest in parallel (at most [`DEFAULT_MAX_PARALLEL`](crate::DEFAULT_MAX_PARALLEL)
    /// at a time, see [`ToolManager::set_max_parallel`]). Calls not started
    /// within the batch timeout ([`ToolManager::set_batch_timeout`]) are
    /// answered with an error naming it. Returns one
    /// `{"role":"tool","tool_call_id","content"}` message per call, in order.
    pub fn call_many(&self, tool_calls: &[Value]) -> Vec<Value> {
        Scope::new(self, None).call_many(tool_calls)
    }

    /// [`ToolManager::call_many`] for async code: inside a tokio runtime the
    /// calls run as tasks of that runtime (at most
    /// [`ToolManager::max_parallel`] at a time), so they use its worker
    /// threads; elsewhere they run concurrently in this future.
    pub async fn call_many_async(&self, tool_calls: &[Value]) -> Vec<Value> {
        Scope::new(self, None).call_many_async(tool_calls).await
    }

    /// Answers the `tool_calls` of an assistant message (or an array of
    /// calls, or one call) with [`ToolManager::call_many`].
    pub fn call_message(&self, message: &Value) -> Result<Vec<Value>, ToolError> {
        Scope::new(self, None).call_message(message)
    }

    /// [`ToolManager::call_message`] for JSON text (a tool call, an
    /// assistant message, or an array of calls), as a command or a server
    /// receives it. The text is read only as far as needed: each call's
    /// arguments stay text, are checked against the tool's size limit before
    /// they are parsed, and reach the tool byte for byte.
    pub fn call_message_json(&self, text: &str) -> Result<Vec<Value>, ToolError> {
        Scope::new(self, None).call_message_json(text)
    }

    /// [`ToolManager::call_message_json`], each message with whether its
    /// call failed ([`Answer::error`]), for a caller that acts on failure:
    /// a tool's answer is never taken for an error because of its text.
    pub fn call_message_json_answers(&self, text: &str) -> Result<Vec<Answer>, ToolError> {
        Scope::new(self, None).call_message_json_answers(text)
    }

    /// [`ToolManager::call_message`] for async code (see
    /// [`ToolManager::call_many_async`]).
    pub async fn call_message_async(&self, message: &Value) -> Result<Vec<Value>, ToolError> {
        Scope::new(self, None).call_message_async(message).await
    }

    /// [`ToolManager::call_message_json`] for async code.
    pub async fn call_message_json_async(&self, text: &str) -> Result<Vec<Value>, ToolError> {
        Scope::new(self, None).call_message_json_async(text).await
    }
}

/// Where the calls of one dispatch run: the manager's tools, in a session
/// or not. Both [`ToolManager`]'s methods and [`Session`]'s go through it.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'m> {
    manager: &'m ToolManager,
    session: Option<&'m SessionId>,
}

impl<'m> Scope<'m> {
    /// The calls of `manager`, in `session` if there is one.
    pub(crate) fn new(manager: &'m ToolManager, session: Option<&'m SessionId>) -> Self {
        Self { manager, session }
    }

    /// See [`ToolManager::call`].
    pub(crate) fn call(self, tool_call: &Value) -> String {
        answer(self.try_call(tool_call))
    }

    /// See [`ToolManager::try_call`].
    pub(crate) fn try_call(self, tool_call: &Value) -> Result<String, ToolError> {
        let parsed = parse_tool_call(tool_call)?;
        self.prepare(&parsed.name, parsed.arguments)?.run()
    }

    /// See [`ToolManager::call_tool`].
    pub(crate) fn call_tool(
        self,
        name: &str,
        arguments: Option<&Value>,
    ) -> Result<String, ToolError> {
        self.prepare(name, arguments.map(Json::Tree))?.run()
    }

    /// See [`ToolManager::call_async`].
    pub(crate) fn call_async(
        self,
        tool_call: &Value,
    ) -> impl Future<Output = String> + Send + 'static {
        let ready = parse_tool_call(tool_call).and_then(|p| self.prepare(&p.name, p.arguments));
        async move {
            match ready {
                Ok(ready) => answer(ready.run_async().await),
                Err(error) => error.to_string(),
            }
        }
    }

    /// See [`ToolManager::call_json`].
    pub(crate) fn call_json(self, tool_call: &str) -> String {
        answer(
            raw_message(tool_call)
                .and_then(parse_tool_call)
                .and_then(|p| self.prepare(&p.name, p.arguments))
                .and_then(|ready| ready.run()),
        )
    }

    /// See [`ToolManager::call_json_async`].
    pub(crate) fn call_json_async(
        self,
        tool_call: &str,
    ) -> impl Future<Output = String> + Send + 'static {
        let ready = raw_message(tool_call)
            .and_then(parse_tool_call)
            .and_then(|p| self.prepare(&p.name, p.arguments));
        async move {
            match ready {
                Ok(ready) => answer(ready.run_async().await),
                Err(error) => error.to_string(),
            }
        }
    }

    /// See [`ToolManager::call_tool_async`].
    pub(crate) fn call_tool_async(
        self,
        name: &str,
        arguments: Option<&Value>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        self.call_tool_listened_async(name, arguments, None)
    }

    /// See [`ToolManager::call_tool_json_async`].
    pub(crate) fn call_tool_json_async(
        self,
        name: &str,
        arguments: &str,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        self.call_tool_json_listened_async(name, arguments, None)
    }

    /// See [`ToolManager::call_tool_listened_async`].
    pub(crate) fn call_tool_listened_async(
        self,
        name: &str,
        arguments: Option<&Value>,
        stderr: Option<&StderrListener>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        let ready = self.prepare(name, arguments.map(Json::Tree));
        let ready = ready.map(|ready| ready.listened(stderr));
        async move { ready?.run_async().await }
    }

    /// See [`ToolManager::call_tool_json_listened_async`].
    pub(crate) fn call_tool_json_listened_async(
        self,
        name: &str,
        arguments: &str,
        stderr: Option<&StderrListener>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        let ready = self.prepare_json(name, arguments);
        let ready = ready.map(|ready| ready.listened(stderr));
        async move { ready?.run_async().await }
    }

    /// [`Self::prepare`] for arguments given as JSON text.
    fn prepare_json(self, name: &str, arguments: &str) -> Result<Ready, ToolError> {
        if arguments.trim().is_empty() {
            return self.prepare(name, None);
        }
        match serde_json::from_str::<&RawValue>(arguments) {
            Ok(raw) => self.prepare(name, Some(Json::Raw(raw))),
            Err(e) => self.prepare(name, None).and_then(|_| {
                Err(ToolError::new(
                    ToolErrorKind::InvalidArguments,
                    format!("invalid JSON in arguments: {e}"),
                ))
            }),
        }
    }

    /// Checks everything that can be checked before running: the name, the
    /// controller, the arguments.
    fn prepare(self, name: &str, arguments: Option<Json<'_>>) -> Result<Ready, ToolError> {
        self.prepare_with(name, arguments, &OnceCell::new())
    }

    /// [`Self::prepare`], with the active names made at most once for a batch.
    fn prepare_with(
        self,
        name: &str,
        arguments: Option<Json<'_>>,
        active: &OnceCell<ActiveNames<'m>>,
    ) -> Result<Ready, ToolError> {
        let Some(entry) = self.manager.get(name) else {
            let active = active.get_or_init(|| self.active_names());
            let message = active.unknown_tool_message(name);
            return Err(ToolError::new(ToolErrorKind::UnknownTool, message));
        };
        if !self.manager.check_tool_status(name) {
            return Err(ToolError::new(
                ToolErrorKind::Deactivated,
                format!("tool '{name}' is deactivated."),
            ));
        }
        let limit = entry.provider.max_arguments_bytes();
        Ok(Ready {
            name: name.to_string(),
            arguments: arguments::read_arguments(arguments, name, limit)?,
            provider: Arc::clone(&entry.provider),
            session: self.session.cloned(),
            stderr: None,
        })
    }

    /// The active tool names, for the answer to unknown names.
    fn active_names(self) -> ActiveNames<'m> {
        let controller = self.manager.controller_read();
        ActiveNames::new(
            self.manager
                .registered()
                .map(|t| t.info.name.as_str())
                .filter(|n| controller.check_tool_status(n))
                .collect(),
        )
    }

    /// Each call of a batch, checked, with its id.
    fn prepare_all(self, tool_calls: Vec<Json<'_>>) -> Vec<(String, Result<Ready, ToolError>)> {
        let active = OnceCell::new();
        tool_calls
            .into_iter()
            .map(|call| match parse_tool_call(call) {
                Ok(parsed) => (
                    parsed.id.unwrap_or_default().into_owned(),
                    self.prepare_with(&parsed.name, parsed.arguments, &active),
                ),
                Err(e) => (
                    openai::call_id(call).unwrap_or_default().into_owned(),
                    Err(e),
                ),
            })
            .collect()
    }

    /// See [`ToolManager::call_many`].
    pub(crate) fn call_many(self, tool_calls: &[Value]) -> Vec<Value> {
        messages(self.answer_all(tool_calls.iter().map(Json::Tree).collect()))
    }

    /// Answers checked calls in parallel, in order; those not started within
    /// the batch timeout are answered with an error naming it.
    fn answer_all(self, tool_calls: Vec<Json<'_>>) -> Vec<Answer> {
        let deadline = Deadline::after(self.manager.batch_timeout());
        let prepared = self.prepare_all(tool_calls);
        let results = run_parallel(
            &prepared,
            self.manager.max_parallel(),
            |(_, ready)| match ready {
                Ok(ready) => ready.run_before(&deadline),
                Err(e) => Err(e.clone()),
            },
        );
        prepared
            .iter()
            .zip(results)
            .map(|((id, _), result)| Answer::new(id, result))
            .collect()
    }

    /// See [`ToolManager::call_many_async`].
    pub(crate) async fn call_many_async(self, tool_calls: &[Value]) -> Vec<Value> {
        let prepared = self.prepare_all(tool_calls.iter().map(Json::Tree).collect());
        messages(self.answer_all_async(prepared).await)
    }

    /// Answers checked calls concurrently, in order.
    async fn answer_all_async(
        self,
        prepared: Vec<(String, Result<Ready, ToolError>)>,
    ) -> Vec<Answer> {
        let deadline = Deadline::after(self.manager.batch_timeout());
        let runtime = tokio::runtime::Handle::try_current().ok();
        let (ids, readies): (Vec<String>, Vec<_>) = prepared.into_iter().unzip();
        let results: Vec<Result<String, ToolError>> = stream::iter(readies)
            .map(|ready| {
                let call = async move {
                    match ready {
                        Ok(ready) if deadline.passed() => Err(ready.too_late(deadline.timeout)),
                        Ok(ready) => ready.run_async().await,
                        Err(e) => Err(e),
                    }
                };
                spawned::on(runtime.as_ref(), call)
            })
            .buffered(self.manager.max_parallel())
            .collect()
            .await;
        ids.iter()
            .zip(results)
            .map(|(id, result)| Answer::new(id, result))
            .collect()
    }

    /// See [`ToolManager::call_message`].
    pub(crate) fn call_message(self, message: &Value) -> Result<Vec<Value>, ToolError> {
        Ok(messages(self.answer_all(calls_in(Json::Tree(message))?)))
    }

    /// See [`ToolManager::call_message_json`].
    pub(crate) fn call_message_json(self, text: &str) -> Result<Vec<Value>, ToolError> {
        self.call_message_json_answers(text).map(messages)
    }

    /// See [`ToolManager::call_message_json_answers`].
    pub(crate) fn call_message_json_answers(self, text: &str) -> Result<Vec<Answer>, ToolError> {
        let raw = raw_message(text)?;
        Ok(self.answer_all(calls_in(Json::Raw(raw))?))
    }

    /// See [`ToolManager::call_message_async`].
    pub(crate) async fn call_message_async(self, message: &Value) -> Result<Vec<Value>, ToolError> {
        let prepared = self.prepare_all(calls_in(Json::Tree(message))?);
        Ok(messages(self.answer_all_async(prepared).await))
    }

    /// See [`ToolManager::call_message_json_async`].
    pub(crate) async fn call_message_json_async(self, text: &str) -> Result<Vec<Value>, ToolError> {
        let raw = raw_message(text)?;
        let prepared = self.prepare_all(calls_in(Json::Raw(raw))?);
        Ok(messages(self.answer_all_async(prepared).await))
    }
}

/// The tool messages of `answers`, in order.
fn messages(answers: Vec<Answer>) -> Vec<Value> {
    answers.into_iter().map(Answer::into_message).collect()
}

/// The calls of a message, or why it has none.
fn calls_in(message: Json<'_>) -> Result<Vec<Json<'_>>, ToolError> {
    tool_calls_of(message).map_err(|e| ToolError::new(ToolErrorKind::MalformedCall, e))
}

/// `text` checked to be one JSON value, without building it.
fn raw_message(text: &str) -> Result<&RawValue, ToolError> {
    serde_json::from_str(text).map_err(|e| {
        ToolError::new(
            ToolErrorKind::MalformedCall,
            format!(
                "the input is not JSON ({e}): give a tool call, an assistant message with tool_calls, or an array of tool calls"
            ),
        )
    })
}
