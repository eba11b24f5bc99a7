//! The calls the two Python fronts make, `ToolManager` and `Session` alike:
//! [`Tools`], the handle to the tool set a manager swaps on register, and
//! the helpers that turn Python arguments into JSON text, run the calls
//! (blocking or as asyncio futures) and give their answers.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyMapping, PyString};
use serde_json::Value;
use toolhost::{SessionId, ToolManager};

use crate::errors::value_error;
use crate::json::{JsonOut, to_json_text};
use crate::module::type_name;

/// The tools a manager serves: a [`ToolManager`] that is never changed once
/// built, in a cell that registering swaps. A call takes the set as it is
/// when the call starts ([`Tools::current`]) and runs on it to the end.
/// Clones share the cell, so a session sees what its manager registers
/// later.
#[derive(Clone)]
pub(crate) struct Tools(Arc<Mutex<Arc<ToolManager>>>);

impl Tools {
    /// A cell holding `core`.
    pub(crate) fn new(core: ToolManager) -> Self {
        Self(Arc::new(Mutex::new(Arc::new(core))))
    }

    /// The tools as they are now.
    pub(crate) fn current(&self) -> Arc<ToolManager> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Puts `core` in place of the tools; calls already running go on with
    /// the set they started with.
    pub(crate) fn replace(&self, core: ToolManager) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(core);
    }

    /// A cell of its own holding the same tools (for a copy of a manager,
    /// whose registrations must not reach the original).
    pub(crate) fn detached(&self) -> Self {
        Self(Arc::new(Mutex::new(self.current())))
    }
}

/// One tool call (JSON text) through `core`, in `session` if there is one.
pub(crate) async fn call_future(
    core: Arc<ToolManager>,
    session: Option<SessionId>,
    call: String,
) -> String {
    match session {
        Some(id) => core.join_session(id).call_json_async(&call).await,
        None => core.call_json_async(&call).await,
    }
}

/// The calls of a message (JSON text) through `core`, in `session` if
/// there is one.
pub(crate) async fn message_future(
    core: Arc<ToolManager>,
    session: Option<SessionId>,
    message: String,
) -> Result<Vec<Value>, toolhost::ToolError> {
    match session {
        Some(id) => {
            core.join_session(id)
                .call_message_json_async(&message)
                .await
        }
        None => core.call_message_json_async(&message).await,
    }
}

/// `acall`'s future, started in the running loop.
pub(crate) fn start_acall<'py>(
    py: Python<'py>,
    core: Arc<ToolManager>,
    session: Option<SessionId>,
    tool_call: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let call = match call_json(tool_call) {
        Ok(call) => call_future(core, session, call),
        Err(error) => {
            return pyo3_async_runtimes::tokio::future_into_py(py, async move { Ok(error) });
        }
    };
    pyo3_async_runtimes::tokio::future_into_py(py, async move { Ok(call.await) })
}

/// `acall_many`'s future, started in the running loop.
pub(crate) fn start_acall_many<'py>(
    py: Python<'py>,
    core: Arc<ToolManager>,
    session: Option<SessionId>,
    tool_calls: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let calls = calls_json(tool_calls)?;
    pyo3_async_runtimes::tokio::future_into_py(py, async move {
        let messages = calls.answer(&core, session.as_ref()).await?;
        Ok(JsonOut(Value::Array(messages)))
    })
}

/// `acall_message`'s future, started in the running loop.
pub(crate) fn start_acall_message<'py>(
    py: Python<'py>,
    core: Arc<ToolManager>,
    session: Option<SessionId>,
    message: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let message = message_json(message)?;
    pyo3_async_runtimes::tokio::future_into_py(py, async move {
        match message_future(core, session, message).await {
            Ok(messages) => Ok(JsonOut(Value::Array(messages))),
            Err(e) => Err(value_error(e.to_string())),
        }
    })
}

/// A coroutine that calls `slf.<start>(argument)` when awaited, inside the
/// running loop (see `toolhost/_aio.py`).
pub(crate) fn started_when_awaited<'py>(
    slf: &Bound<'py, PyAny>,
    start: &str,
    argument: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let helper = py
        .import("toolhost._aio")?
        .getattr("started_when_awaited")?;
    helper.call1((slf.getattr(start)?, argument))
}

/// A tool call as JSON text, or the `Error: ...` text that answers it.
pub(crate) fn call_json(tool_call: &Bound<'_, PyAny>) -> Result<String, String> {
    to_json_text(tool_call).map_err(|e| format!("Error: the tool call is not JSON: {e}"))
}

/// An assistant message (or a list of calls) as JSON text, or `ValueError`.
pub(crate) fn message_json(message: &Bound<'_, PyAny>) -> PyResult<String> {
    to_json_text(message).map_err(|e| value_error(format!("the message is not JSON: {e}")))
}

/// A list of tool calls as the text of a JSON array, and why the ones that
/// are not JSON are not (each answered with an error of its own).
pub(crate) struct Calls {
    array: String,
    not_json: Vec<(usize, String)>,
}

impl Calls {
    /// One `{"role": "tool", ...}` message per call, in order, in
    /// `session` if there is one.
    pub(crate) async fn answer(
        &self,
        core: &ToolManager,
        session: Option<&SessionId>,
    ) -> PyResult<Vec<Value>> {
        let answered = match session {
            Some(id) => {
                core.join_session(id.clone())
                    .call_message_json_async(&self.array)
                    .await
            }
            None => core.call_message_json_async(&self.array).await,
        };
        let mut messages = answered.map_err(|e| value_error(e.to_string()))?;
        for (i, reason) in &self.not_json {
            if let Some(message) = messages.get_mut(*i) {
                message["content"] =
                    Value::String(format!("Error: the tool call is not JSON: {reason}"));
            }
        }
        Ok(messages)
    }
}

/// The calls of the list `tool_calls` (see [`Calls`]).
pub(crate) fn calls_json(tool_calls: &Bound<'_, PyAny>) -> PyResult<Calls> {
    if tool_calls.is_instance_of::<PyString>() || tool_calls.cast::<PyMapping>().is_ok() {
        return Err(PyTypeError::new_err(format!(
            "tool_calls must be a list of tool calls, got {}",
            type_name(tool_calls)
        )));
    }
    let mut array = String::from("[");
    let mut not_json = Vec::new();
    for (i, call) in tool_calls.try_iter()?.enumerate() {
        let call = call?;
        if i > 0 {
            array.push(',');
        }
        match to_json_text(&call) {
            Ok(text) => array.push_str(&text),
            Err(reason) => {
                // Answered as a malformed call, then with the reason.
                array.push_str("null");
                not_json.push((i, reason));
            }
        }
    }
    array.push(']');
    Ok(Calls { array, not_json })
}
