//! `toolhost.Session`: the calls of one conversation, sharing state in the
//! modules loaded with `sessions=True` (see `ToolManager.session()`).

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use serde_json::Value;
use toolhost::SessionId;

use crate::blocking::run_interruptibly;
use crate::calls::{
    Tools, call_future, call_json, calls_json, message_future, message_json, start_acall,
    start_acall_many, start_acall_message, started_when_awaited,
};
use crate::errors::value_error;
use crate::json::to_python;

/// The calls of one conversation (`manager.session()`): the same methods
/// as `ToolManager` (`__call__`, `call_many`, `call_message` and their
/// `a...` coroutines), each call run in this session. A context manager,
/// sync (`with`) and async (`async with`); closing it drops the session's
/// state, and a closed session refuses calls.
#[pyclass(name = "Session", module = "toolhost", frozen)]
pub struct PySession {
    tools: Tools,
    id: SessionId,
    closed: AtomicBool,
}

impl PySession {
    /// The session `id` of the manager whose tools are `tools`.
    pub(crate) fn new(tools: Tools, id: SessionId) -> Self {
        Self {
            tools,
            id,
            closed: AtomicBool::new(false),
        }
    }

    /// The manager's tools as they are now, unless the session is closed.
    fn core(&self) -> PyResult<std::sync::Arc<toolhost::ToolManager>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PyRuntimeError::new_err(
                "this session is closed: start another with manager.session()",
            ));
        }
        Ok(self.tools.current())
    }

    fn session(&self) -> Option<SessionId> {
        Some(self.id.clone())
    }
}

#[pymethods]
impl PySession {
    /// The session's key.
    #[getter]
    fn id(&self) -> String {
        self.id.to_string()
    }

    /// Whether `close()` was called (or the `with` block left).
    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Dispatches one tool call in this session; like `ToolManager.__call__`.
    fn __call__(&self, py: Python<'_>, tool_call: &Bound<'_, PyAny>) -> PyResult<String> {
        let core = self.core()?;
        let tool_call = match call_json(tool_call) {
            Ok(call) => call,
            Err(error) => return Ok(error),
        };
        run_interruptibly(py, call_future(core, self.session(), tool_call))
    }

    /// `ToolManager.call_many` in this session.
    fn call_many<'py>(
        &self,
        py: Python<'py>,
        tool_calls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core()?;
        let calls = calls_json(tool_calls)?;
        let session = self.session();
        let messages =
            run_interruptibly(
                py,
                async move { calls.answer(&core, session.as_ref()).await },
            )??;
        to_python(py, &Value::Array(messages))
    }

    /// `ToolManager.call_message` in this session.
    fn call_message<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core()?;
        let message = message_json(message)?;
        let messages = run_interruptibly(py, message_future(core, self.session(), message))?
            .map_err(|e| value_error(e.to_string()))?;
        to_python(py, &Value::Array(messages))
    }

    /// `await session.acall(tool_call)`: `__call__` for asyncio code.
    fn acall<'py>(
        slf: &Bound<'py, Self>,
        tool_call: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        started_when_awaited(slf.as_any(), "_start_acall", tool_call)
    }

    /// `await session.acall_many(tool_calls)`: `call_many` for asyncio code.
    fn acall_many<'py>(
        slf: &Bound<'py, Self>,
        tool_calls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        started_when_awaited(slf.as_any(), "_start_acall_many", tool_calls)
    }

    /// `await session.acall_message(message)`: `call_message` for asyncio code.
    fn acall_message<'py>(
        slf: &Bound<'py, Self>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        started_when_awaited(slf.as_any(), "_start_acall_message", message)
    }

    fn _start_acall<'py>(
        &self,
        py: Python<'py>,
        tool_call: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        start_acall(py, self.core()?, self.session(), tool_call)
    }

    fn _start_acall_many<'py>(
        &self,
        py: Python<'py>,
        tool_calls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        start_acall_many(py, self.core()?, self.session(), tool_calls)
    }

    fn _start_acall_message<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        start_acall_message(py, self.core()?, self.session(), message)
    }

    /// Ends the session: its state in every module is dropped, and later
    /// calls raise `RuntimeError`. Closing twice is harmless.
    fn close(&self) {
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.tools.current().end_session(&self.id);
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __aenter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.clone().unbind();
        pyo3_async_runtimes::tokio::future_into_py(py, async move { Ok(this) })
    }

    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _exc: &Bound<'py, pyo3::types::PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.close();
        pyo3_async_runtimes::tokio::future_into_py(py, async move { Ok(false) })
    }

    fn __repr__(&self) -> String {
        format!(
            "Session(id={:?}, closed={})",
            self.id.as_str(),
            self.closed()
        )
    }
}

impl Drop for PySession {
    fn drop(&mut self) {
        self.close();
    }
}
