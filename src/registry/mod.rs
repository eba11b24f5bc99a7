//! [`ToolManager`]: the registry of tools, and the [`ToolController`] that
//! decides which of them are active.
//!
//! Dispatching calls to the registered tools is [`dispatch`](crate::dispatch)'s
//! job, one layer up.

mod controller;
mod shared;

use std::sync::{Arc, RwLockReadGuard};
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::Value;

pub use controller::{
    ControllerError, ControllerSpec, Decision, Mode, Rule, RuleSpec, ToolController,
};
pub use shared::SharedController;

use crate::names;
use crate::policy::Limits;
use crate::tool::{Tool, ToolInfo};

/// A registered tool: its schema and the provider that runs it.
#[derive(Clone)]
pub struct Registered {
    /// The tool's schema, under its exposed name.
    pub info: ToolInfo,
    /// The provider ([`WasmModule`](crate::WasmModule) or native tool) that runs it.
    pub provider: Arc<dyn Tool>,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Why a provider's tools could not be registered. Nothing was registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// A name is already registered; use [`ToolManager::replace`] to replace it on purpose.
    #[error("tool '{0}' is already registered; unregister it first or use replace")]
    Duplicate(String),
    /// A name is not a valid OpenAI function name.
    #[error("invalid tool name '{name}': {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The default number of calls [`ToolManager::call_many`] runs at once.
pub const DEFAULT_MAX_PARALLEL: usize = 8;

/// The registry of tools and the dispatcher of OpenAI tool calls.
///
/// Tools are kept in registration order. A [`ToolController`] decides which
/// are active: only active tools are listed by [`ToolManager::tool_infos`],
/// and a call to an inactive one is refused. Dispatch never panics and always
/// answers with a string; failures start with `Error: `.
///
/// `ToolManager` is `Send + Sync`: share it (for example in an `Arc`) and
/// call it from many threads at once; each call runs in its own sandbox.
pub struct ToolManager {
    tools: IndexMap<String, Registered>,
    controller: SharedController,
    max_parallel: usize,
    batch_timeout: Duration,
}

impl Default for ToolManager {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ToolManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolManager")
            .field("tools", &self.names())
            .field("controller", &*self.controller_read())
            .finish()
    }
}

impl ToolManager {
    /// An empty manager whose controller activates every tool.
    pub fn new() -> Self {
        Self {
            tools: IndexMap::new(),
            controller: SharedController::default(),
            max_parallel: DEFAULT_MAX_PARALLEL,
            batch_timeout: Limits::default().batch_timeout(),
        }
    }

    /// This manager with `controller` deciding which tools are active.
    pub fn with_controller(self, controller: ToolController) -> Self {
        self.set_controller(controller);
        self
    }

    /// Sets how many calls [`ToolManager::call_many`] runs at once (at least 1).
    pub fn set_max_parallel(&mut self, max_parallel: usize) {
        self.max_parallel = max_parallel.max(1);
    }

    /// How many calls [`ToolManager::call_many`] runs at once.
    pub fn max_parallel(&self) -> usize {
        self.max_parallel
    }

    /// Sets how long a batch ([`ToolManager::call_many`] and the like) may
    /// take: calls not started by then are answered with an error naming
    /// `limits.batch_timeout_ms` (default: its default).
    pub fn set_batch_timeout(&mut self, timeout: Duration) {
        self.batch_timeout = timeout;
    }

    /// How long a batch may take.
    pub fn batch_timeout(&self) -> Duration {
        self.batch_timeout
    }

    /// Registers every tool `tool` provides. All or nothing: a name that is
    /// already registered (or invalid) is an error and registers none.
    pub fn register(&mut self, tool: impl Tool) -> Result<(), RegisterError> {
        self.register_arc(Arc::new(tool))
    }

    /// [`ToolManager::register`] for a provider that is already shared.
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegisterError> {
        let infos = checked_infos(tool.as_ref())?;
        if let Some(taken) = infos.iter().find(|i| self.tools.contains_key(&i.name)) {
            return Err(RegisterError::Duplicate(taken.name.clone()));
        }
        self.insert_all(infos, &tool);
        Ok(())
    }

    /// Registers every tool `tool` provides, replacing tools of the same
    /// names (in place); returns what was replaced.
    pub fn replace(&mut self, tool: impl Tool) -> Result<Vec<Registered>, RegisterError> {
        let tool: Arc<dyn Tool> = Arc::new(tool);
        let infos = checked_infos(tool.as_ref())?;
        let mut replaced = Vec::new();
        for info in infos {
            let entry = Registered {
                info: info.clone(),
                provider: Arc::clone(&tool),
            };
            if let Some(old) = self.tools.insert(info.name, entry) {
                replaced.push(old);
            }
        }
        Ok(replaced)
    }

    fn insert_all(&mut self, infos: Vec<ToolInfo>, tool: &Arc<dyn Tool>) {
        for info in infos {
            let entry = Registered {
                info: info.clone(),
                provider: Arc::clone(tool),
            };
            self.tools.insert(info.name, entry);
        }
    }

    /// Removes tool `name`; returns it, or `None` if it was not registered.
    pub fn unregister(&mut self, name: &str) -> Option<Registered> {
        self.tools.shift_remove(name)
    }

    /// Removes every tool of module `module` (the names `<module>_*`); returns them.
    pub fn unregister_module(&mut self, module: &str) -> Vec<Registered> {
        let doomed: Vec<String> = self
            .tools
            .keys()
            .filter(|n| names::split_exposed(n).is_some_and(|(m, _)| m == module))
            .cloned()
            .collect();
        doomed
            .iter()
            .filter_map(|n| self.tools.shift_remove(n))
            .collect()
    }

    /// Every registered name, active or not, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Every registered tool, active or not, in registration order.
    pub fn registered(&self) -> impl Iterator<Item = &Registered> {
        self.tools.values()
    }

    /// The registered tool `name`, active or not.
    pub fn get(&self, name: &str) -> Option<&Registered> {
        self.tools.get(name)
    }

    /// A shallow copy: it shares the compiled modules, but registering into
    /// it (or changing its controller) leaves this manager unchanged.
    pub fn copy(&self) -> Self {
        Self {
            tools: self.tools.clone(),
            controller: SharedController::new(self.controller()),
            max_parallel: self.max_parallel,
            batch_timeout: self.batch_timeout,
        }
    }

    /// The OpenAI schemas of the active tools, in registration order, ready
    /// to send as the `tools` of an API request.
    pub fn tool_infos(&self) -> Vec<Value> {
        let controller = self.controller_read();
        self.tools
            .values()
            .filter(|t| controller.check_tool_status(&t.info.name))
            .map(|t| t.info.to_openai())
            .collect()
    }

    // ---- the controller -------------------------------------------------

    /// A copy of the controller in force.
    pub fn controller(&self) -> ToolController {
        self.controller.get()
    }

    /// Replaces the controller in force; takes effect for the next call, in
    /// every manager that shares it.
    pub fn set_controller(&self, controller: ToolController) {
        self.controller.set(controller);
    }

    /// This manager deciding through `shared`, which other managers (and
    /// the caller) may hold too: a change through any of them takes effect
    /// here at once.
    pub fn with_shared_controller(mut self, shared: SharedController) -> Self {
        self.set_shared_controller(shared);
        self
    }

    /// Makes this manager decide through `shared` from now on.
    pub fn set_shared_controller(&mut self, shared: SharedController) {
        self.controller = shared;
    }

    /// The handle this manager decides through; changes made through it
    /// take effect here.
    pub fn shared_controller(&self) -> SharedController {
        self.controller.clone()
    }

    /// Activates `name` at once, with the highest priority (see [`ToolController::activate_tool`]).
    pub fn activate_tool(&self, name: &str) -> Result<(), ControllerError> {
        self.controller.activate_tool(name)
    }

    /// Deactivates `name` at once, with the highest priority.
    pub fn deactivate_tool(&self, name: &str) -> Result<(), ControllerError> {
        self.controller.deactivate_tool(name)
    }

    /// Whether tool `name` is active under the controller.
    pub fn check_tool_status(&self, name: &str) -> bool {
        self.controller.check_tool_status(name)
    }

    /// Which rule makes tool `name` active or not.
    pub fn explain(&self, name: &str) -> Decision {
        self.controller.explain(name)
    }

    pub(crate) fn controller_read(&self) -> RwLockReadGuard<'_, ToolController> {
        self.controller.read()
    }
}

/// A provider's infos, checked: valid exposed names, no duplicates among them.
fn checked_infos(tool: &dyn Tool) -> Result<Vec<ToolInfo>, RegisterError> {
    let infos = tool.infos();
    let mut seen = std::collections::HashSet::new();
    for info in &infos {
        names::check_exposed_name(&info.name).map_err(|reason| RegisterError::InvalidName {
            name: info.name.clone(),
            reason,
        })?;
        if !seen.insert(info.name.as_str()) {
            return Err(RegisterError::Duplicate(info.name.clone()));
        }
    }
    Ok(infos)
}
