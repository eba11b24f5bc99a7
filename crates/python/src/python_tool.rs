//! [`PythonTool`]: a native Python tool (an object with `tool_info()` and
//! `__call__(tool_name, arguments)`) as a [`toolhost::Tool`], so that the
//! core manager dispatches to it like to any other tool. It runs in the
//! Python process, unsandboxed.

use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;
use toolhost::{Arguments, Tool, ToolError, ToolInfo};

use crate::errors::value_error;
use crate::json::{to_json, to_python};
use crate::module::type_name;

/// A native Python tool registered under `name`.
pub struct PythonTool {
    info: ToolInfo,
    object: Py<PyAny>,
}

impl PythonTool {
    /// `object` registered as `name`.
    pub fn new(name: String, object: Py<PyAny>) -> Self {
        let info = ToolInfo::new(name, "", ToolInfo::empty_parameters());
        Self { info, object }
    }
}

/// The name `tool.tool_info()` gives: `["function"]["name"]` (or a bare
/// schema's `["name"]`); it must be a non-empty string.
pub fn declared_name(tool: &Bound<'_, PyAny>) -> PyResult<String> {
    let info = tool.call_method0("tool_info")?;
    let info = to_json(&info).map_err(|e| {
        value_error(format!(
            "tool_info() of {} is not JSON: {e}",
            type_name(tool)
        ))
    })?;
    let function = info.get("function").unwrap_or(&info);
    match function.get("name") {
        Some(Value::String(name)) if !name.is_empty() => Ok(name.clone()),
        _ => Err(value_error(format!(
            "tool_info() of {} has no function name: tool_info()[\"function\"][\"name\"] \
             must be a non-empty string",
            type_name(tool)
        ))),
    }
}

/// Whether `object` can be a native tool: it has `tool_info` and is callable.
pub fn is_tool(object: &Bound<'_, PyAny>) -> bool {
    object.hasattr("tool_info").unwrap_or(false) && object.is_callable()
}

impl Tool for PythonTool {
    fn infos(&self) -> Vec<ToolInfo> {
        vec![self.info.clone()]
    }

    fn call(&self, name: &str, arguments: &Arguments) -> Result<String, ToolError> {
        let arguments = Value::Object(arguments.object()?);
        Python::attach(|py| {
            let failed = |e: PyErr| ToolError::failed(name, &describe(py, &e));
            let arguments = to_python(py, &arguments).map_err(failed)?;
            let result = self
                .object
                .bind(py)
                .call1((name, arguments))
                .map_err(failed)?;
            text_of(&result).map_err(failed)
        })
    }
}

/// A tool's result as text: a `str` as it is, anything else as `str()` gives it.
fn text_of(result: &Bound<'_, PyAny>) -> PyResult<String> {
    match result.cast::<PyString>() {
        Ok(text) => text.extract::<String>(),
        Err(_) => result.str()?.extract::<String>(),
    }
}

/// An exception as `Type: message`, as Python prints its last line.
fn describe(py: Python<'_>, error: &PyErr) -> String {
    let kind = error
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let message = error.value(py).to_string();
    if message.is_empty() {
        kind
    } else {
        format!("{kind}: {message}")
    }
}
