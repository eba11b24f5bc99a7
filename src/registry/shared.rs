//! [`SharedController`]: one [`ToolController`] that several managers (and
//! their owner) see, so that a change through any handle holds in all of
//! them at once.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::controller::{ControllerError, Decision, ToolController};

/// A handle to a [`ToolController`] shared by every clone of the handle.
///
/// Each [`ToolManager`](crate::ToolManager) decides through one of these;
/// give several managers the same handle
/// ([`ToolManager::with_shared_controller`](crate::ToolManager::with_shared_controller))
/// and an override made through any of them, or through the handle, takes
/// effect in all of them for their next call.
///
/// ```
/// use toolhost::{Mode, SharedController, ToolController, ToolManager};
///
/// let shared = SharedController::new(ToolController::new(Mode::Deactivate, [])?);
/// let manager = ToolManager::new().with_shared_controller(shared.clone());
/// assert!(!manager.check_tool_status("text_translator"));
/// shared.activate_tool("text_translator")?;
/// assert!(manager.check_tool_status("text_translator"));
/// # Ok::<(), toolhost::ControllerError>(())
/// ```
#[derive(Clone, Default)]
pub struct SharedController {
    inner: Arc<RwLock<ToolController>>,
}

impl std::fmt::Debug for SharedController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.read().fmt(f)
    }
}

impl SharedController {
    /// A new shared controller, starting as `controller`.
    pub fn new(controller: ToolController) -> Self {
        Self {
            inner: Arc::new(RwLock::new(controller)),
        }
    }

    /// A copy of the controller as it is now.
    pub fn get(&self) -> ToolController {
        self.read().clone()
    }

    /// Replaces the controller, for every holder of this handle.
    pub fn set(&self, controller: ToolController) {
        *self.write() = controller;
    }

    /// Whether tool `name` is active.
    pub fn check_tool_status(&self, name: &str) -> bool {
        self.read().check_tool_status(name)
    }

    /// Which rule makes tool `name` active or not.
    pub fn explain(&self, name: &str) -> Decision {
        self.read().explain(name)
    }

    /// Activates `name` ahead of every rule (see [`ToolController::activate_tool`]).
    pub fn activate_tool(&self, name: &str) -> Result<(), ControllerError> {
        self.write().activate_tool(name)
    }

    /// Deactivates `name` ahead of every rule.
    pub fn deactivate_tool(&self, name: &str) -> Result<(), ControllerError> {
        self.write().deactivate_tool(name)
    }

    /// Reads the controller; a poisoned lock is read as it was left, since
    /// no update leaves a controller half-changed.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, ToolController> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, ToolController> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
}
