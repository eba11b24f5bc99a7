//! Dispatching OpenAI tool calls to the registered tools: one call, a batch
//! in parallel, an assistant message; blocking or async. Every failure is
//! an `Error: ...` text, never a panic.
//!
//! Adds the dispatch methods to [`ToolManager`]; imports
//! [`registry`](crate::registry) and [`tool`](crate::tool).

mod openai;
mod spawned;

use std::future::Future;
use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use serde_json::Value;

pub use openai::{ParsedCall, parse_tool_call, tool_calls_of, tool_message};

use crate::names;
use crate::parallel::run_parallel;
use crate::registry::ToolManager;
use crate::tool::{Arguments, Tool, ToolError, ToolErrorKind};

/// A call that passed every check and is ready to run.
struct Ready {
    name: String,
    arguments: Arguments,
    provider: Arc<dyn Tool>,
}

impl Ready {
    /// Runs the call on this thread.
    fn run(&self) -> Result<String, ToolError> {
        self.provider.call(&self.name, &self.arguments)
    }

    /// The call as a future that owns what it needs.
    fn run_async(self) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        Arc::clone(&self.provider).call_async(self.name, self.arguments)
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
        answer(self.try_call(tool_call))
    }

    /// [`ToolManager::call`] with the error as a [`ToolError`].
    pub fn try_call(&self, tool_call: &Value) -> Result<String, ToolError> {
        let parsed = parse_tool_call(tool_call)?;
        self.call_tool(parsed.name, parsed.arguments)
    }

    /// Calls tool `name` with `arguments` (JSON text, an object, null or `None`).
    pub fn call_tool(&self, name: &str, arguments: Option<&Value>) -> Result<String, ToolError> {
        self.prepare(name, arguments)?.run()
    }

    /// [`ToolManager::call`] as a future, for async code: it runs on the
    /// caller's executor without a thread of its own, yields while the tool
    /// waits or spins, and stops the tool's call when dropped. Every limit
    /// applies as in the blocking call.
    ///
    /// The call is checked (name, controller, arguments) before this
    /// returns; the future owns what it needs, so it can be spawned.
    pub fn call_async(&self, tool_call: &Value) -> impl Future<Output = String> + Send + 'static {
        let ready = parse_tool_call(tool_call).and_then(|p| self.prepare(p.name, p.arguments));
        async move {
            match ready {
                Ok(ready) => answer(ready.run_async().await),
                Err(error) => error.to_string(),
            }
        }
    }

    /// [`ToolManager::call_tool`] as a future (see [`ToolManager::call_async`]).
    pub fn call_tool_async(
        &self,
        name: &str,
        arguments: Option<&Value>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        let ready = self.prepare(name, arguments);
        async move { ready?.run_async().await }
    }

    /// Checks everything that can be checked before running: the name, the
    /// controller, the arguments.
    fn prepare(&self, name: &str, arguments: Option<&Value>) -> Result<Ready, ToolError> {
        let Some(entry) = self.get(name) else {
            return Err(self.unknown_tool(name));
        };
        if !self.check_tool_status(name) {
            return Err(ToolError::new(
                ToolErrorKind::Deactivated,
                format!("tool '{name}' is deactivated."),
            ));
        }
        Ok(Ready {
            name: name.to_string(),
            arguments: Arguments::from_value(arguments)?,
            provider: Arc::clone(&entry.provider),
        })
    }

    fn unknown_tool(&self, name: &str) -> ToolError {
        let controller = self.controller_read();
        let mut active: Vec<&str> = self
            .registered()
            .map(|t| t.info.name.as_str())
            .filter(|n| controller.check_tool_status(n))
            .collect();
        active.sort_unstable();
        let available = if active.is_empty() {
            "(none)".to_string()
        } else {
            active.join(", ")
        };
        let mut message = format!("unknown tool '{name}'. Available: {available}.");
        let guesses: Vec<&&str> = active
            .iter()
            .filter(|n| names::split_exposed(n).is_some_and(|(_, local)| local == name))
            .collect();
        if let [only] = guesses.as_slice() {
            message.push_str(&format!(" Did you mean '{only}'?"));
        }
        ToolError::new(ToolErrorKind::UnknownTool, message)
    }

    /// Each call of a batch, checked, with its id.
    fn prepare_all(&self, tool_calls: &[Value]) -> Vec<(String, Result<Ready, ToolError>)> {
        tool_calls
            .iter()
            .map(|call| match parse_tool_call(call) {
                Ok(parsed) => (
                    parsed.id.unwrap_or("").to_string(),
                    self.prepare(parsed.name, parsed.arguments),
                ),
                Err(e) => {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                    (id.to_string(), Err(e))
                }
            })
            .collect()
    }

    /// Answers a batch of tool calls: malformed and unknown calls at once, the
    /// rest in parallel (at most [`DEFAULT_MAX_PARALLEL`](crate::DEFAULT_MAX_PARALLEL)
    /// at a time, see [`ToolManager::set_max_parallel`]). Returns one
    /// `{"role":"tool","tool_call_id","content"}` message per call, in order.
    pub fn call_many(&self, tool_calls: &[Value]) -> Vec<Value> {
        let prepared = self.prepare_all(tool_calls);
        let contents = run_parallel(&prepared, self.max_parallel(), |(_, ready)| match ready {
            Ok(ready) => answer(ready.run()),
            Err(e) => e.to_string(),
        });
        prepared
            .iter()
            .zip(contents)
            .map(|((id, _), content)| tool_message(id, &content))
            .collect()
    }

    /// [`ToolManager::call_many`] for async code: inside a tokio runtime the
    /// calls run as tasks of that runtime (at most
    /// [`ToolManager::max_parallel`] at a time), so they use its worker
    /// threads; elsewhere they run concurrently in this future.
    pub async fn call_many_async(&self, tool_calls: &[Value]) -> Vec<Value> {
        let prepared = self.prepare_all(tool_calls);
        let runtime = tokio::runtime::Handle::try_current().ok();
        let (ids, readies): (Vec<String>, Vec<_>) = prepared.into_iter().unzip();
        let contents: Vec<String> = stream::iter(readies)
            .map(|ready| {
                let call = async move {
                    match ready {
                        Ok(ready) => answer(ready.run_async().await),
                        Err(e) => e.to_string(),
                    }
                };
                spawned::on(runtime.as_ref(), call)
            })
            .buffered(self.max_parallel())
            .collect()
            .await;
        ids.iter()
            .zip(contents)
            .map(|(id, content)| tool_message(id, &content))
            .collect()
    }

    /// Answers the `tool_calls` of an assistant message (or an array of
    /// calls, or one call) with [`ToolManager::call_many`].
    pub fn call_message(&self, message: &Value) -> Result<Vec<Value>, ToolError> {
        let calls =
            tool_calls_of(message).map_err(|e| ToolError::new(ToolErrorKind::MalformedCall, e))?;
        Ok(self.call_many(&calls))
    }

    /// [`ToolManager::call_message`] for async code (see
    /// [`ToolManager::call_many_async`]).
    pub async fn call_message_async(&self, message: &Value) -> Result<Vec<Value>, ToolError> {
        let calls =
            tool_calls_of(message).map_err(|e| ToolError::new(ToolErrorKind::MalformedCall, e))?;
        Ok(self.call_many_async(&calls).await)
    }
}
