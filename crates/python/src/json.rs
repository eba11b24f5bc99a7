//! Python objects to and from JSON values, at the GIL boundary.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;

/// `object` as a JSON value, or why it is not one (a set, a non-string
/// key, an object JSON has no form for...). Pydantic models (the OpenAI
/// SDK's tool calls and messages) are read through their `model_dump()`.
pub fn to_json(object: &Bound<'_, PyAny>) -> Result<Value, String> {
    if !is_plain(object) && object.hasattr("model_dump").unwrap_or(false) {
        let dumped = object
            .call_method0("model_dump")
            .map_err(|e| format!("model_dump() failed: {e}"))?;
        return to_json(&dumped);
    }
    pythonize::depythonize::<Value>(object).map_err(|e| e.to_string())
}

/// A JSON value as Python objects (dicts, lists, str, int, float, bool, None).
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, value)?)
}

/// Whether `object` is a dict, list or str, which JSON reads directly.
fn is_plain(object: &Bound<'_, PyAny>) -> bool {
    object.is_instance_of::<PyDict>()
        || object.is_instance_of::<PyList>()
        || object.is_instance_of::<PyString>()
}

/// A JSON value handed back to Python when a future completes.
pub struct JsonOut(pub Value);

impl<'py> IntoPyObject<'py> for JsonOut {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        to_python(py, &self.0)
    }
}
