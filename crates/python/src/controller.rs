//! `toolhost.ToolController` and `toolhost.ToolControlPattern`: which tools
//! are active, from a default mode and ordered glob rules (the first rule
//! that matches decides), over the core's [`toolhost::ToolController`].

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use toolhost::{ControllerSpec, RuleSpec, SharedController, ToolController};

use crate::errors::value_error;
use crate::json::to_json;
use crate::module::type_name;

/// One rule: `mode` (`"activate"` or `"deactivate"`) for the tools whose
/// names match `pattern` (a Unix shell glob such as `math_*`).
#[pyclass(name = "ToolControlPattern", module = "toolhost", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub struct PyToolControlPattern {
    /// `"activate"` or `"deactivate"`.
    #[pyo3(get)]
    mode: String,
    /// The glob over tool names.
    #[pyo3(get)]
    pattern: String,
}

#[pymethods]
impl PyToolControlPattern {
    /// A rule; a bad mode or pattern raises `ValueError`.
    #[new]
    fn new(mode: String, pattern: String) -> PyResult<Self> {
        let spec = RuleSpec { mode, pattern };
        checked(ControllerSpec {
            default_mode: "activate".into(),
            rules: vec![spec.clone()],
        })?;
        Ok(Self {
            mode: spec.mode,
            pattern: spec.pattern,
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ToolControlPattern(mode={}, pattern={})",
            py_repr(py, &self.mode)?,
            py_repr(py, &self.pattern)?
        ))
    }
}

/// Decides which tools are active: `default_mode` for names no rule
/// matches, else the first matching rule of `rules`. `activate_tool` and
/// `deactivate_tool` take effect at once, ahead of every rule.
///
/// A controller given to a `ToolManager` is shared with it, not copied:
/// changes made here take effect in that manager at once.
#[pyclass(name = "ToolController", module = "toolhost", frozen)]
pub struct PyToolController {
    pub(crate) shared: SharedController,
}

#[pymethods]
impl PyToolController {
    /// `rules` is a list of `{"mode": ..., "pattern": ...}` dicts (or
    /// `ToolControlPattern`s), highest priority first. A bad mode or
    /// pattern raises `ValueError`.
    #[new]
    #[pyo3(signature = (default_mode = "activate".to_string(), rules = None))]
    fn new(default_mode: String, rules: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let rules = match rules.filter(|r| !r.is_none()) {
            None => Vec::new(),
            Some(rules) => rule_specs(rules)?,
        };
        let controller = checked(ControllerSpec {
            default_mode,
            rules,
        })?;
        Ok(Self {
            shared: SharedController::new(controller),
        })
    }

    /// Pickling: the default mode and the rules in force (those
    /// `activate_tool` and `deactivate_tool` added among them).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let spec = self.shared.get().to_spec();
        let rules = pyo3::types::PyList::empty(py);
        for rule in spec.rules {
            let item = pyo3::types::PyDict::new(py);
            item.set_item("mode", rule.mode)?;
            item.set_item("pattern", rule.pattern)?;
            rules.append(item)?;
        }
        let class = py.get_type::<PyToolController>().into_any();
        let args = (spec.default_mode, rules).into_pyobject(py)?.into_any();
        pyo3::types::PyTuple::new(py, [class, args])
    }

    /// The mode for tools no rule matches: `"activate"` or `"deactivate"`.
    #[getter]
    fn default_mode(&self) -> String {
        self.shared.get().default_mode().to_string()
    }

    /// The rules in force, highest priority first, as `ToolControlPattern`s.
    #[getter]
    fn rules(&self) -> Vec<PyToolControlPattern> {
        self.shared
            .get()
            .to_spec()
            .rules
            .into_iter()
            .map(|r| PyToolControlPattern {
                mode: r.mode,
                pattern: r.pattern,
            })
            .collect()
    }

    /// Whether tool `name` is active.
    fn check_tool_status(&self, name: &str) -> bool {
        self.shared.check_tool_status(name)
    }

    /// Activates `name` (a name or a glob) at once, ahead of every rule.
    fn activate_tool(&self, name: &str) -> PyResult<()> {
        self.shared
            .activate_tool(name)
            .map_err(|e| value_error(e.to_string()))
    }

    /// Deactivates `name` (a name or a glob) at once, ahead of every rule.
    fn deactivate_tool(&self, name: &str) -> PyResult<()> {
        self.shared
            .deactivate_tool(name)
            .map_err(|e| value_error(e.to_string()))
    }

    /// The active entries of `tools`, in order: `{"name": ...}` dicts or
    /// OpenAI function schemas (`{"function": {"name": ...}}`). Entries
    /// without a name are left out. Returns the same objects.
    fn filter_tool_list<'py>(&self, tools: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let controller = self.shared.get();
        let kept = PyList::empty(tools.py());
        for tool in tools.try_iter()? {
            let tool = tool?;
            if schema_name(&tool).is_some_and(|name| controller.check_tool_status(&name)) {
                kept.append(tool)?;
            }
        }
        Ok(kept)
    }

    /// Why tool `name` is active or not: the rule that matched first, or
    /// the default mode.
    fn explain(&self, name: &str) -> String {
        self.shared.explain(name).to_string()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let rules = self
            .rules()
            .iter()
            .map(|r| r.__repr__(py))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(format!(
            "ToolController(default_mode={}, rules=[{}])",
            py_repr(py, &self.default_mode())?,
            rules.join(", ")
        ))
    }
}

/// The rules of a `rules=` argument, or why one is wrong.
fn rule_specs(rules: &Bound<'_, PyAny>) -> PyResult<Vec<RuleSpec>> {
    if rules.is_instance_of::<pyo3::types::PyString>() || rules.is_instance_of::<PyDict>() {
        return Err(value_error(format!(
            "rules must be a list of {{\"mode\": ..., \"pattern\": ...}} dicts, got {}",
            type_name(rules)
        )));
    }
    let mut specs = Vec::new();
    for (i, rule) in rules.try_iter()?.enumerate() {
        let rule = rule?;
        if let Ok(pattern) = rule.cast::<PyToolControlPattern>() {
            let pattern = pattern.get();
            specs.push(RuleSpec {
                mode: pattern.mode.clone(),
                pattern: pattern.pattern.clone(),
            });
            continue;
        }
        let value = to_json(&rule).map_err(|e| value_error(format!("rule {}: {e}", i + 1)))?;
        let spec: RuleSpec = serde_json::from_value(value).map_err(|e| {
            value_error(format!(
                "rule {} must be {{\"mode\": \"activate\" | \"deactivate\", \"pattern\": \"<glob>\"}}: {e}",
                i + 1
            ))
        })?;
        specs.push(spec);
    }
    Ok(specs)
}

/// The controller `spec` describes, or `ValueError` saying what is wrong.
fn checked(spec: ControllerSpec) -> PyResult<ToolController> {
    ToolController::from_spec(&spec).map_err(|e| value_error(e.to_string()))
}

/// The tool name of a `{"name"}` dict or an OpenAI function schema.
fn schema_name(tool: &Bound<'_, PyAny>) -> Option<String> {
    fn item<'py>(object: &Bound<'py, PyAny>, key: &str) -> Option<Bound<'py, PyAny>> {
        object.get_item(key).ok()
    }
    let name = item(tool, "name").or_else(|| item(&item(tool, "function")?, "name"))?;
    name.extract::<String>().ok()
}

/// `repr(text)`.
fn py_repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(pyo3::types::PyString::new(py, text).repr()?.to_string())
}
