//! `toolhost.ToolManager`: the registry and dispatcher of OpenAI tool
//! calls, holding native Python tools and sandboxed modules side by side.
//!
//! The tools live in a [`toolhost::ToolManager`] that is never changed
//! once built: registering builds the next one and swaps it in, so a call
//! runs on the set it started with, without a lock and without the GIL.

use std::sync::{Arc, Mutex, MutexGuard};

use indexmap::IndexMap;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyMapping, PyString, PyTuple};
use serde_json::Value;
use toolhost::{RegisterError, SessionId, SharedController, ToolManager};

use crate::blocking::run_interruptibly;
use crate::calls::{
    Tools, call_future, call_json, calls_json, message_future, message_json, start_acall,
    start_acall_many, start_acall_message, started_when_awaited,
};
use crate::config::from_config;
use crate::controller::PyToolController;
use crate::errors::value_error;
use crate::json::to_python;
use crate::module::{PyWasmModule, type_name};
use crate::python_tool::{PythonTool, declared_name, is_tool};
use crate::session::PySession;

/// What a name is registered as, for `unregister` and `tool_infos`.
struct Entry {
    /// The object registered: the tool, or the module the tool is from.
    object: Py<PyAny>,
    /// Whether it is a native Python tool (else a `WasmModule`).
    native: bool,
}

/// The registered tools: the core manager and the Python objects behind them.
struct State {
    tools: Tools,
    entries: IndexMap<String, Entry>,
    controller: Option<Py<PyToolController>>,
    /// The config file this manager was made from (its absolute path and
    /// text), while no tool was registered or removed since: a pickle then
    /// rebuilds it from that file.
    config: Option<(String, String)>,
}

impl State {
    fn copy(&self, py: Python<'_>) -> State {
        State {
            tools: self.tools.detached(),
            entries: self
                .entries
                .iter()
                .map(|(name, entry)| {
                    let object = entry.object.clone_ref(py);
                    (
                        name.clone(),
                        Entry {
                            object,
                            native: entry.native,
                        },
                    )
                })
                .collect(),
            controller: self.controller.as_ref().map(|c| c.clone_ref(py)),
            config: self.config.clone(),
        }
    }
}

/// One thing to register: a module's tools, or one native tool under a name.
enum Addition {
    Module(Py<PyAny>, toolhost::WasmModule),
    Native(String, Py<PyAny>),
}

/// The registry of tools and the dispatcher of OpenAI tool calls.
///
/// `tools` is a list of tools (native `Tool`s and `WasmModule`s, keyed by
/// their names) or a dict `{name: tool}` (keys used verbatim). Calls never
/// raise: every failure comes back as an `Error: ...` text.
#[pyclass(name = "ToolManager", module = "toolhost", frozen)]
pub struct PyToolManager {
    state: Mutex<State>,
}

#[pymethods]
impl PyToolManager {
    #[new]
    #[pyo3(signature = (tools = None, tool_controller = None))]
    fn new(
        py: Python<'_>,
        tools: Option<&Bound<'_, PyAny>>,
        tool_controller: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let controller = controller_arg(tool_controller)?;
        let shared = controller.as_ref().map(|c| c.get().shared.clone());
        let mut core = ToolManager::new();
        if let Some(shared) = shared {
            core.set_shared_controller(shared);
        }
        let additions = match tools.filter(|t| !t.is_none()) {
            None => Vec::new(),
            Some(tools) => additions_of(tools)?,
        };
        let mut state = State {
            tools: Tools::new(core),
            entries: IndexMap::new(),
            controller,
            config: None,
        };
        add(py, &mut state, additions)?;
        Ok(Self {
            state: Mutex::new(state),
        })
    }

    /// A manager with the modules and controller of the config file at
    /// `path` (the format `toolhost` reads). Raises `toolhost.ConfigError`
    /// if the config cannot be read or one of its modules cannot be loaded.
    #[staticmethod]
    fn from_config(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let (core, modules) = from_config(py, &path)?;
        // What a pickle rebuilds from; a config that cannot be read again
        // (it just loaded) only makes this manager one that cannot pickle.
        let config = std::path::absolute(&path).ok().and_then(|absolute| {
            let text = std::fs::read_to_string(&absolute).ok()?;
            Some((absolute.to_string_lossy().into_owned(), text))
        });
        let mut entries = IndexMap::new();
        for module in modules {
            let names: Vec<String> = module.tools();
            let object = Py::new(py, module)?.into_any();
            for name in names {
                let object = object.clone_ref(py);
                entries.insert(
                    name,
                    Entry {
                        object,
                        native: false,
                    },
                );
            }
        }
        let controller = Py::new(
            py,
            PyToolController {
                shared: core.shared_controller(),
            },
        )?;
        Ok(Self {
            state: Mutex::new(State {
                tools: Tools::new(core),
                entries,
                controller: Some(controller),
                config,
            }),
        })
    }

    /// Registers `tool`: a native tool under `name` (default: the name its
    /// `tool_info()` gives), or every tool of a `WasmModule`. A name that
    /// is already registered raises `ValueError`.
    #[pyo3(signature = (tool, name = None))]
    fn register(
        &self,
        py: Python<'_>,
        tool: &Bound<'_, PyAny>,
        name: Option<String>,
    ) -> PyResult<()> {
        let addition = addition_of(tool, name)?;
        let mut state = self.lock();
        add(py, &mut state, vec![addition])?;
        state.config = None;
        Ok(())
    }

    /// Removes tool `name`; returns the object it was registered as (the
    /// tool, or the `WasmModule` it is from), or `None` if there is none.
    fn unregister(&self, name: &str) -> Option<Py<PyAny>> {
        let mut state = self.lock();
        let entry = state.entries.shift_remove(name)?;
        state.config = None;
        let mut core = next_core(&state);
        core.unregister(name);
        state.tools.replace(core);
        Some(entry.object)
    }

    /// Every registered name, active or not, in registration order.
    fn names(&self) -> Vec<String> {
        self.lock().entries.keys().cloned().collect()
    }

    /// A shallow copy: the same tools and controller; registering into
    /// the copy leaves this manager unchanged.
    fn copy(&self, py: Python<'_>) -> Self {
        Self {
            state: Mutex::new(self.lock().copy(py)),
        }
    }

    fn __copy__(&self, py: Python<'_>) -> Self {
        self.copy(py)
    }

    /// The schemas of the active tools, in registration order, for an API
    /// request's `tools`: a native tool's `tool_info()` as it returns it, a
    /// module's tools as OpenAI function schemas.
    fn tool_infos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let (core, entries) = {
            let state = self.lock();
            let entries: Vec<(String, Py<PyAny>, bool)> = state
                .entries
                .iter()
                .map(|(n, e)| (n.clone(), e.object.clone_ref(py), e.native))
                .collect();
            (state.tools.current(), entries)
        };
        let infos = PyList::empty(py);
        for (name, object, native) in entries {
            if !core.check_tool_status(&name) {
                continue;
            }
            if native {
                infos.append(object.bind(py).call_method0("tool_info")?)?;
            } else if let Some(registered) = core.get(&name) {
                infos.append(to_python(py, &registered.info.to_openai())?)?;
            }
        }
        Ok(infos)
    }

    /// Pickling, so that a manager can be captured in a Ray task or actor:
    /// a manager made by `from_config` (and not changed since) is rebuilt
    /// from the same config file on the other side, which must be there
    /// with the same text; any other is rebuilt from its tools (each
    /// `WasmModule` from its component's bytes, each native tool by
    /// pickle), in order, with its controller.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let pickling = py.import("toolhost._pickling")?;
        let state = self.lock().copy(py);
        let controller = state
            .controller
            .as_ref()
            .map(|c| c.clone_ref(py).into_any());
        let controller = controller.unwrap_or_else(|| py.None());
        if let Some((path, text)) = &state.config {
            let args = (path.clone(), text.clone(), controller);
            return PyTuple::new(
                py,
                [
                    pickling.getattr("manager_from_config")?,
                    args.into_pyobject(py)?.into_any(),
                ],
            );
        }
        let entries = PyList::empty(py);
        for (name, entry) in &state.entries {
            entries.append((name.clone(), entry.object.clone_ref(py), entry.native))?;
        }
        PyTuple::new(
            py,
            [
                pickling.getattr("manager_from_tools")?,
                (entries, controller).into_pyobject(py)?.into_any(),
            ],
        )
    }

    /// The controller deciding which tools are active (shared, not
    /// copied), or `None`.
    #[getter]
    fn tool_controller(&self, py: Python<'_>) -> Option<Py<PyToolController>> {
        self.lock().controller.as_ref().map(|c| c.clone_ref(py))
    }

    #[setter]
    fn set_tool_controller(&self, controller: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let controller = controller_arg(controller)?;
        let shared = match &controller {
            Some(c) => c.get().shared.clone(),
            None => SharedController::default(),
        };
        let mut state = self.lock();
        let mut core = state.tools.current().copy();
        core.set_shared_controller(shared);
        state.tools.replace(core);
        state.controller = controller;
        Ok(())
    }

    /// Dispatches one OpenAI tool call (`{"id", "type": "function",
    /// "function": {"name", "arguments"}}`; `id` and `type` may be
    /// omitted; `arguments` may be JSON text, a dict, `None` or blank).
    /// Returns the result or an `Error: ...` text; never raises. The GIL is
    /// released while a sandboxed call runs.
    fn __call__(&self, py: Python<'_>, tool_call: &Bound<'_, PyAny>) -> PyResult<String> {
        let tool_call = match call_json(tool_call) {
            Ok(call) => call,
            Err(error) => return Ok(error),
        };
        run_interruptibly(py, call_future(self.core(), None, tool_call))
    }

    /// Answers `tool_calls` (a list of tool calls) in parallel; returns one
    /// `{"role": "tool", "tool_call_id", "content"}` message per call, in order.
    fn call_many<'py>(
        &self,
        py: Python<'py>,
        tool_calls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let calls = calls_json(tool_calls)?;
        let core = self.core();
        let messages = run_interruptibly(py, async move { calls.answer(&core, None).await })??;
        to_python(py, &Value::Array(messages))
    }

    /// Answers the `tool_calls` of an assistant message (a dict, or an
    /// OpenAI SDK message) like `call_many`. A message that is neither a
    /// tool call nor has `tool_calls` raises `ValueError`.
    fn call_message<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let message = message_json(message)?;
        let messages = run_interruptibly(py, message_future(self.core(), None, message))?
            .map_err(|e| value_error(e.to_string()))?;
        to_python(py, &Value::Array(messages))
    }

    /// `await manager.acall(tool_call)`: `__call__` for asyncio code; the
    /// call runs off the event loop, which stays free. Cancelling the
    /// awaiting task stops the call.
    fn acall<'py>(
        slf: &Bound<'py, Self>,
        tool_call: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        started_when_awaited(slf.as_any(), "_start_acall", tool_call)
    }

    /// `await manager.acall_many(tool_calls)`: `call_many` for asyncio code.
    fn acall_many<'py>(
        slf: &Bound<'py, Self>,
        tool_calls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        started_when_awaited(slf.as_any(), "_start_acall_many", tool_calls)
    }

    /// `await manager.acall_message(message)`: `call_message` for asyncio code.
    fn acall_message<'py>(
        slf: &Bound<'py, Self>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        started_when_awaited(slf.as_any(), "_start_acall_message", message)
    }

    /// Starts `acall`'s call inside the running loop; returns its future.
    fn _start_acall<'py>(
        &self,
        py: Python<'py>,
        tool_call: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        start_acall(py, self.core(), None, tool_call)
    }

    /// Starts `acall_many`'s calls inside the running loop.
    fn _start_acall_many<'py>(
        &self,
        py: Python<'py>,
        tool_calls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        start_acall_many(py, self.core(), None, tool_calls)
    }

    /// Starts `acall_message`'s calls inside the running loop.
    fn _start_acall_message<'py>(
        &self,
        py: Python<'py>,
        message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        start_acall_message(py, self.core(), None, message)
    }

    /// A new session of this manager's tools: `with manager.session() as s:
    /// s(tool_call)`. In modules loaded with `sessions=True` (or
    /// `sessions = true` in the config) every call of the session runs in
    /// the session's own instance, so that what one call leaves (variables,
    /// files) is there for the next; other sessions and calls without one
    /// never see it. Closing the session (leaving the `with` block, or
    /// `close()`) drops that state.
    fn session(&self) -> PySession {
        PySession::new(self.lock().tools.clone(), SessionId::new())
    }

    fn __len__(&self) -> usize {
        self.lock().entries.len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.lock().entries.contains_key(name)
    }

    fn __repr__(&self) -> String {
        format!("ToolManager(names={:?})", self.names())
    }
}

impl PyToolManager {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tools as they are now; calls run on this set to the end.
    fn core(&self) -> Arc<ToolManager> {
        self.lock().tools.current()
    }
}

/// A copy of the state's core manager, deciding through the same controller.
fn next_core(state: &State) -> ToolManager {
    let current = state.tools.current();
    let mut core = current.copy();
    core.set_shared_controller(current.shared_controller());
    core
}

/// Registers `additions` into `state`, all or none.
fn add(py: Python<'_>, state: &mut State, additions: Vec<Addition>) -> PyResult<()> {
    if additions.is_empty() {
        return Ok(());
    }
    let mut core = next_core(state);
    let mut entries = Vec::new();
    for addition in additions {
        match addition {
            Addition::Module(object, module) => {
                let names: Vec<String> = toolhost::Tool::infos(&module)
                    .into_iter()
                    .map(|i| i.name)
                    .collect();
                core.register(module).map_err(register_error)?;
                for name in names {
                    entries.push((
                        name,
                        Entry {
                            object: object.clone_ref(py),
                            native: false,
                        },
                    ));
                }
            }
            Addition::Native(name, object) => {
                let tool = PythonTool::new(name.clone(), object.clone_ref(py));
                core.register(tool).map_err(register_error)?;
                entries.push((
                    name,
                    Entry {
                        object,
                        native: true,
                    },
                ));
            }
        }
    }
    state.tools.replace(core);
    state.entries.extend(entries);
    Ok(())
}

fn register_error(error: RegisterError) -> PyErr {
    value_error(error.to_string())
}

/// The tools of a constructor's `tools`: a dict (keys verbatim) or an
/// iterable of tools.
fn additions_of(tools: &Bound<'_, PyAny>) -> PyResult<Vec<Addition>> {
    let expects = || {
        PyTypeError::new_err(format!(
            "ToolManager expects dict | Iterable[Tool] | None for `tools`, got {}",
            type_name(tools)
        ))
    };
    if tools.is_instance_of::<PyString>() || tools.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(expects());
    }
    if let Ok(mapping) = tools.cast::<PyMapping>() {
        let mut additions = Vec::new();
        for item in mapping.items()?.iter() {
            let (key, tool): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let name = key.extract::<String>().map_err(|_| {
                PyTypeError::new_err(format!("tool names must be str, got {}", type_name(&key)))
            })?;
            additions.push(addition_of(&tool, Some(name))?);
        }
        return Ok(additions);
    }
    let Ok(items) = tools.try_iter() else {
        return Err(expects());
    };
    items.map(|tool| addition_of(&tool?, None)).collect()
}

/// What registering `tool` (under `name`, for a native tool) adds.
fn addition_of(tool: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<Addition> {
    if let Ok(module) = tool.cast::<PyWasmModule>() {
        let inner = module.get().module.clone();
        return Ok(Addition::Module(tool.clone().unbind(), inner));
    }
    if !is_tool(tool) {
        return Err(PyTypeError::new_err(format!(
            "a tool must be a toolhost.Tool (callable, with tool_info()) or a WasmModule, got {}",
            type_name(tool)
        )));
    }
    let name = match name {
        Some(name) if name.is_empty() => {
            return Err(value_error("a tool's name must be non-empty"));
        }
        Some(name) => name,
        None => declared_name(tool)?,
    };
    Ok(Addition::Native(name, tool.clone().unbind()))
}

/// `tool_controller=`: a `ToolController` or `None`.
fn controller_arg(controller: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Py<PyToolController>>> {
    match controller.filter(|c| !c.is_none()) {
        None => Ok(None),
        Some(c) => match c.cast::<PyToolController>() {
            Ok(c) => Ok(Some(c.clone().unbind())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "tool_controller must be a toolhost.ToolController or None, got {}",
                type_name(c)
            ))),
        },
    }
}
