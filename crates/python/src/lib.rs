//! The Python extension module `toolhost._native`: the classes behind the
//! Python package `toolhost` (see `python/toolhost/__init__.py`).
//!
//! Everything here is a thin layer over the core crate's public API: the
//! Python `ToolManager` dispatches through
//! [`toolhost::ToolManager`], so its `Error: ...` texts, limits and
//! isolation are the core's; native Python tools join it as
//! `PythonTool`s.
//!
//! Data flows one way: `load_module` and `from_config` load modules
//! (`module`, `config`), the manager registers them with native tools
//! (`manager`, `python_tool`), the controller decides (`controller`),
//! the manager and its sessions (`session`) run calls through `calls`,
//! and calls cross the GIL boundary in `json`.

mod blocking;
mod calls;
mod config;
mod controller;
mod errors;
mod json;
mod manager;
mod module;
mod python_tool;
mod runtime;
mod session;

use pyo3::prelude::*;

/// The native half of the `toolhost` package.
#[pymodule(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<module::PyWasmModule>()?;
    m.add_class::<controller::PyToolController>()?;
    m.add_class::<controller::PyToolControlPattern>()?;
    m.add_class::<manager::PyToolManager>()?;
    m.add_class::<session::PySession>()?;
    m.add_function(wrap_pyfunction!(module::load_module, m)?)?;
    m.add_function(wrap_pyfunction!(module::_load_pickled_module, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
