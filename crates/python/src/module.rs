//! `toolhost.WasmModule` and `toolhost.load_module`: a sandboxed tool
//! module, loaded with the config file's `limits` and `grants` keys.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView};
use serde_json::Value;
use toolhost::config::ModuleEntry;
use toolhost::{Arguments, Limits, Tool, WasmModule};

use crate::blocking::run_interruptibly;
use crate::errors::load_error;
use crate::json::{to_json, to_json_text, to_python};
use crate::runtime::default_runtime;

/// The name a module loaded from bytes gets when none is given.
const BYTES_MODULE_NAME: &str = "module";

/// A sandboxed tool module: one WebAssembly component and its tools,
/// exposed as `<module>_<tool>`. Each call runs in a fresh instance under
/// the module's limits (unless it was loaded with `warm=True`), with no
/// files, network or environment beyond its grants.
#[pyclass(name = "WasmModule", module = "toolhost", frozen)]
pub struct PyWasmModule {
    pub(crate) module: WasmModule,
}

#[pymethods]
impl PyWasmModule {
    /// The module's name, the prefix of its tools' names.
    #[getter]
    fn name(&self) -> &str {
        self.module.name()
    }

    /// The exposed names of the module's tools, in its `tool-info` order.
    #[getter]
    pub(crate) fn tools(&self) -> Vec<String> {
        self.module.infos().into_iter().map(|i| i.name).collect()
    }

    /// Whether calls in a session keep state (`sessions=True`).
    #[getter]
    fn sessions(&self) -> bool {
        self.module.sessions().is_some()
    }

    /// Whether instances are kept and reused across calls (`warm=True`).
    #[getter]
    fn warm(&self) -> bool {
        self.module.warm().is_some()
    }

    /// Every limit in force for this module's calls, by its config key.
    #[getter]
    fn limits(&self) -> Vec<(&'static str, u64)> {
        self.module.limits().values().to_vec()
    }

    /// The OpenAI function schemas of the module's tools
    /// (`{"type": "function", "function": {...}}`), in order.
    fn tool_infos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let infos: Vec<Value> = self.module.infos().iter().map(|i| i.to_openai()).collect();
        let items = infos
            .iter()
            .map(|info| to_python(py, info))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Runs tool `tool_name` (an exposed name) with `arguments` (a dict,
    /// JSON text or `None`), as a framework's `Tool` is called. Returns the
    /// result, or an `Error: ...` text; never raises for the call itself
    /// (Ctrl-C stops it and raises `KeyboardInterrupt`).
    #[pyo3(signature = (tool_name, arguments = None))]
    fn __call__(
        &self,
        py: Python<'_>,
        tool_name: &str,
        arguments: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let arguments = match arguments_of(arguments) {
            Ok(arguments) => arguments,
            Err(error) => return Ok(error.to_string()),
        };
        let call =
            std::sync::Arc::new(self.module.clone()).call_async(tool_name.to_string(), arguments);
        match run_interruptibly(py, call)? {
            Ok(result) => Ok(result),
            Err(error) => Ok(error.to_string()),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "WasmModule(name={:?}, tools={:?})",
            self.module.name(),
            self.tools()
        )
    }
}

/// The arguments of a direct module call: a dict, JSON text, `None` or blank.
fn arguments_of(arguments: Option<&Bound<'_, PyAny>>) -> Result<Arguments, toolhost::ToolError> {
    let invalid = |e: String| {
        toolhost::ToolError::new(
            toolhost::ToolErrorKind::InvalidArguments,
            format!("arguments are not JSON: {e}"),
        )
    };
    let Some(arguments) = arguments.filter(|a| !a.is_none()) else {
        return Ok(Arguments::empty());
    };
    if let Ok(text) = arguments.extract::<String>() {
        return Arguments::from_json(&text);
    }
    Arguments::from_json(&to_json_text(arguments).map_err(invalid)?)
}

/// Loads a sandboxed tool module from a file path or from its bytes.
///
/// `name` defaults to the file's stem (`"module"` for bytes). `limits` and
/// `grants` are dicts with the keys of a config file's `[[modules]]`
/// `limits` and `grants` tables; relative paths in `grants` are taken from
/// the working directory. `warm=True` keeps instances across calls (up to
/// `max_calls` calls each); `sessions=True` keeps one instance per session
/// (`manager.session()`), so that state lives from one call of a session
/// to the next. Raises `toolhost.LoadError` with the reason when the module
/// cannot be loaded.
#[pyfunction]
#[pyo3(signature = (source, name = None, limits = None, grants = None, warm = false, max_calls = None, sessions = false))]
#[allow(clippy::too_many_arguments)]
pub fn load_module(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    name: Option<String>,
    limits: Option<&Bound<'_, PyAny>>,
    grants: Option<&Bound<'_, PyAny>>,
    warm: bool,
    max_calls: Option<u64>,
    sessions: bool,
) -> PyResult<PyWasmModule> {
    let fail = |message: String| load_error(py, message);
    let bytes = bytes_of(source)?;
    let path = match &bytes {
        Some(_) => None,
        None => Some(path_of(source)?),
    };
    let module_limits: toolhost::LimitOverrides = table(limits, "limits").map_err(fail)?;
    module_limits
        .check_module_level()
        .map_err(|e| fail(format!("invalid `limits`: {e}")))?;
    let entry = ModuleEntry {
        limits: module_limits,
        grants: table(grants, "grants").map_err(fail)?,
        warm,
        max_calls,
        sessions,
        ..ModuleEntry::default()
    };
    let runtime = default_runtime().map_err(fail)?;
    let module = py.detach(|| match (&bytes, &path) {
        (Some(bytes), _) => load_bytes(runtime, entry, name, bytes),
        (None, Some(path)) => load_path(runtime, entry, name, path),
        (None, None) => unreachable!("a source is bytes or a path"),
    });
    module.map(|module| PyWasmModule { module }).map_err(fail)
}

/// The `limits` or `grants` dict (`key` names it) as its config table;
/// `None` is the empty table.
fn table<T: serde::de::DeserializeOwned + Default>(
    value: Option<&Bound<'_, PyAny>>,
    key: &str,
) -> Result<T, String> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(T::default());
    };
    let json = to_json(value).map_err(|e| format!("`{key}` must be a dict: {e}"))?;
    if !json.is_object() {
        return Err(format!("`{key}` must be a dict of its config keys"));
    }
    serde_json::from_value(json).map_err(|e| format!("invalid `{key}`: {e}"))
}

/// `source`'s bytes if it is bytes, a bytearray or a memoryview.
fn bytes_of(source: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(bytes) = source.cast::<PyBytes>() {
        return Ok(Some(bytes.as_bytes().to_vec()));
    }
    if source.is_instance_of::<PyByteArray>() || source.is_instance_of::<PyMemoryView>() {
        let bytes = source.py().get_type::<PyBytes>().call1((source,))?;
        return Ok(Some(bytes.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Ok(None)
}

/// `source` as a path: a `str` or an `os.PathLike`.
fn path_of(source: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    source.extract::<PathBuf>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "load_module expects a path (str or os.PathLike) or bytes, got {}",
            type_name(source)
        ))
    })
}

fn load_path(
    runtime: &toolhost::Runtime,
    mut entry: ModuleEntry,
    name: Option<String>,
    path: &Path,
) -> Result<WasmModule, String> {
    entry.path = Some(path.to_path_buf());
    entry.name = name;
    let base = std::env::current_dir().unwrap_or_default();
    entry
        .load(runtime, &base, Limits::default())
        .map_err(|e| e.to_string())
}

fn load_bytes(
    runtime: &toolhost::Runtime,
    entry: ModuleEntry,
    name: Option<String>,
    bytes: &[u8],
) -> Result<WasmModule, String> {
    let name = name.unwrap_or_else(|| BYTES_MODULE_NAME.to_string());
    let base = std::env::current_dir().unwrap_or_default();
    entry
        .load_bytes(runtime, &base, Limits::default(), &name, bytes)
        .map_err(|e| e.to_string())
}

/// The name of `object`'s type, for error messages.
pub fn type_name(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}
