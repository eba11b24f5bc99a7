//! The package's exceptions, defined in Python (`toolhost/_errors.py`, so
//! that each is both a `ToolhostError` and a `ValueError`) and raised from
//! here with the core's message.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

static LOAD_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CONFIG_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `toolhost.LoadError(message)`: a module that cannot be loaded.
pub fn load_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, &LOAD_ERROR, "LoadError", message)
}

/// `toolhost.ConfigError(message)`: a config that cannot be read or used.
pub fn config_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, &CONFIG_ERROR, "ConfigError", message)
}

/// `ValueError(message)`.
pub fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

fn raise(py: Python<'_>, cell: &PyOnceLock<Py<PyType>>, name: &str, message: String) -> PyErr {
    match cell.import(py, "toolhost._errors", name) {
        Ok(class) => PyErr::from_type(class.clone(), message),
        // The package is broken (its Python half missing): still say what failed.
        Err(_) => value_error(message),
    }
}
