//! `toolhost.WasmModule` and `toolhost.load_module`: a sandboxed tool
//! module, loaded with the config file's `limits` and `grants` keys.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView, PyTuple};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost::config::ModuleEntry;
use toolhost::{Arguments, Limits, ModuleSource, Tool, WasmModule};

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
    /// How it was loaded, for pickling; `None` for a module from an OCI
    /// registry, which pickles only with its manager's config.
    pub(crate) recipe: Option<Arc<Recipe>>,
}

/// Where a module's component came from: what pickling ships.
enum Source {
    /// The bytes it was loaded from, kept.
    Bytes(Arc<[u8]>),
    /// A bundled module's bytes.
    Bundled(&'static [u8]),
    /// The file it was read from (an absolute path), and the hash of the
    /// bytes read then: a pickle reads the file again and refuses one that
    /// changed.
    File { path: PathBuf, hash: blake3::Hash },
}

/// `load_module`'s arguments besides the source, as given, and the folder
/// relative grant paths were taken from: with the component's bytes, what
/// another process needs to load the same module.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Settings {
    /// The name given (`None`: the file stem, or "module" for bytes); the
    /// name it got, once loaded.
    name: Option<String>,
    limits: Value,
    grants: Value,
    warm: bool,
    max_calls: Option<u64>,
    sessions: bool,
    base: PathBuf,
    /// The limits the module's `limits` apply over: its config's `[limits]`
    /// (`None`: the defaults, as for `load_module`).
    #[serde(default)]
    defaults: Option<Limits>,
}

/// How a module was loaded (see [`PyWasmModule::recipe`]).
pub(crate) struct Recipe {
    source: Source,
    settings: Settings,
}

impl Recipe {
    /// The component's bytes: those kept, or the file read again (an error
    /// if it changed since it was loaded).
    fn bytes(&self) -> Result<Arc<[u8]>, String> {
        match &self.source {
            Source::Bytes(bytes) => Ok(bytes.clone()),
            Source::Bundled(bytes) => Ok(Arc::from(*bytes)),
            Source::File { path, hash } => {
                let bytes = std::fs::read(path).map_err(|e| {
                    format!(
                        "cannot pickle module '{}': cannot read its component {} again: {e}",
                        self.settings.name.as_deref().unwrap_or_default(),
                        path.display()
                    )
                })?;
                if blake3::hash(&bytes) != *hash {
                    return Err(format!(
                        "cannot pickle module '{}': its component {} changed since it was loaded; \
                         load it again (toolhost.load_module) and pickle that",
                        self.settings.name.as_deref().unwrap_or_default(),
                        path.display()
                    ));
                }
                Ok(bytes.into())
            }
        }
    }
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

    /// Pickling: the component's bytes and `load_module`'s arguments; the
    /// other process loads the module again (its compiled code from the
    /// compile cache where it has one, never shipped).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let Some(recipe) = &self.recipe else {
            return Err(PyTypeError::new_err(format!(
                "module '{}' is from an OCI registry and cannot be pickled on its own: pickle \
                 the ToolManager made by ToolManager.from_config before registering or removing \
                 tools (it is made again from the config, which pins the module's digest), or \
                 load the component's bytes with toolhost.load_module",
                self.module.name()
            )));
        };
        let bytes = recipe.bytes().map_err(|e| load_error(py, e))?;
        let settings = serde_json::to_string(&recipe.settings)
            .map_err(|e| PyTypeError::new_err(format!("cannot pickle the module: {e}")))?;
        let rebuild = py
            .import("toolhost._native")?
            .getattr("_load_pickled_module")?;
        let args = (PyBytes::new(py, &bytes), settings);
        PyTuple::new(py, [rebuild, args.into_pyobject(py)?.into_any()])
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
    let given = |value: Option<&Bound<'_, PyAny>>, key: &str| match value.filter(|v| !v.is_none()) {
        None => Ok(Value::Object(Default::default())),
        Some(v) => to_json(v).map_err(|e| fail(format!("`{key}` must be a dict: {e}"))),
    };
    let (limits, grants) = (given(limits, "limits")?, given(grants, "grants")?);
    let source = match bytes_of(source)? {
        Some(bytes) => Given::Bytes(bytes),
        None => Given::File(path_of(source)?),
    };
    let settings = Settings {
        name,
        limits,
        grants,
        warm,
        max_calls,
        sessions,
        base: std::env::current_dir().unwrap_or_default(),
        defaults: None,
    };
    let runtime = default_runtime().map_err(fail)?;
    py.detach(|| load(runtime, source, settings))
        .map(|(module, recipe)| PyWasmModule {
            module,
            recipe: Some(Arc::new(recipe)),
        })
        .map_err(fail)
}

/// Loads a module pickled by `WasmModule.__reduce__`: its component's bytes
/// and `load_module`'s arguments. Raises `toolhost.LoadError` when it cannot.
#[pyfunction]
pub fn _load_pickled_module(
    py: Python<'_>,
    bytes: &[u8],
    settings: &str,
) -> PyResult<PyWasmModule> {
    let fail = |message: String| load_error(py, message);
    let settings: Settings = serde_json::from_str(settings)
        .map_err(|e| fail(format!("not a pickled toolhost module: {e}")))?;
    let runtime = default_runtime().map_err(fail)?;
    let bytes = bytes.to_vec();
    py.detach(|| load(runtime, Given::Bytes(bytes), settings))
        .map(|(module, recipe)| PyWasmModule {
            module,
            recipe: Some(Arc::new(recipe)),
        })
        .map_err(fail)
}

/// How a config's module was loaded, so that it pickles as if `load_module`
/// had loaded it (its entry's limits over the config's `[limits]`, its
/// grants with relative paths from the config's folder): its file, with the
/// hash of the bytes loaded, or its bundled bytes. `None` for a module from
/// an OCI registry.
pub(crate) fn recipe_for_loaded(
    loaded: &toolhost::config::LoadedModule,
    base: &std::path::Path,
    defaults: Limits,
) -> Option<Arc<Recipe>> {
    let entry = &loaded.entry;
    let name = loaded.module.name();
    let source = match entry.origin(base).ok()? {
        toolhost::config::Origin::Local(ModuleSource::File(path)) => Source::File {
            path: std::path::absolute(&path).unwrap_or(path),
            hash: blake3::Hash::from_bytes(loaded.component_hash()),
        },
        toolhost::config::Origin::Local(source) => {
            match source.read(name, &entry.limits.apply(defaults)).ok()? {
                std::borrow::Cow::Borrowed(bytes) => Source::Bundled(bytes),
                std::borrow::Cow::Owned(bytes) => Source::Bytes(bytes.into()),
            }
        }
        toolhost::config::Origin::Oci(_) => return None,
    };
    let settings = Settings {
        name: Some(name.to_string()),
        limits: serde_json::to_value(entry.limits).ok()?,
        grants: serde_json::to_value(&entry.grants).ok()?,
        warm: entry.warm,
        max_calls: entry.max_calls,
        sessions: entry.sessions,
        base: base.to_path_buf(),
        defaults: Some(defaults),
    };
    Some(Arc::new(Recipe { source, settings }))
}

/// A component as `load_module` was given it.
enum Given {
    Bytes(Vec<u8>),
    File(PathBuf),
}

/// Loads the module `settings` describe from `source`; the module and how
/// it was loaded.
fn load(
    runtime: &toolhost::Runtime,
    source: Given,
    mut settings: Settings,
) -> Result<(WasmModule, Recipe), String> {
    let module_limits: toolhost::LimitOverrides = table(&settings.limits, "limits")?;
    module_limits
        .check_module_level()
        .map_err(|e| format!("invalid `limits`: {e}"))?;
    let entry = ModuleEntry {
        limits: module_limits,
        grants: table(&settings.grants, "grants")?,
        warm: settings.warm,
        max_calls: settings.max_calls,
        sessions: settings.sessions,
        ..ModuleEntry::default()
    };
    let (bytes, source): (Arc<[u8]>, _) = match source {
        Given::Bytes(bytes) => {
            settings
                .name
                .get_or_insert_with(|| BYTES_MODULE_NAME.to_string());
            let bytes: Arc<[u8]> = bytes.into();
            (bytes.clone(), Source::Bytes(bytes))
        }
        Given::File(path) => {
            let path = std::path::absolute(&path).unwrap_or(path);
            let name = settings
                .name
                .get_or_insert_with(|| toolhost::names::module_name_for_file(&path));
            let limits = entry.limits.apply(settings.defaults.unwrap_or_default());
            let bytes: Arc<[u8]> = ModuleSource::File(path.clone())
                .read(name, &limits)
                .map_err(|e| e.to_string())?
                .into_owned()
                .into();
            let hash = blake3::hash(&bytes);
            (bytes, Source::File { path, hash })
        }
    };
    let name = settings.name.clone().unwrap_or_default();
    let defaults = settings.defaults.unwrap_or_default();
    let module = entry
        .load_bytes(runtime, &settings.base, defaults, &name, &bytes)
        .map_err(|e| e.to_string())?;
    Ok((module, Recipe { source, settings }))
}

/// The `limits` or `grants` dict (`key` names it) as its config table;
/// `None` is the empty table.
fn table<T: serde::de::DeserializeOwned + Default>(value: &Value, key: &str) -> Result<T, String> {
    if !value.is_object() {
        return Err(format!("`{key}` must be a dict of its config keys"));
    }
    serde_json::from_value(value.clone()).map_err(|e| format!("invalid `{key}`: {e}"))
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

/// The name of `object`'s type, for error messages.
pub fn type_name(object: &Bound<'_, PyAny>) -> String {
    object
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}
