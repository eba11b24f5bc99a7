//! [`Session`]: calls that share state, for one conversation.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::Scope;
use crate::registry::ToolManager;
use crate::tool::{SessionId, StderrListener, ToolError};

/// The calls of one conversation: in a module with sessions on
/// (`sessions = true`), every call made through the same session runs in
/// that session's own instance, so what one call leaves (variables, files)
/// is there for the next; other sessions and calls made without one never
/// see it. In other modules a session's calls are ordinary fresh calls.
///
/// A session from [`ToolManager::session`] ends when dropped (or by
/// [`Session::end`]): its state is dropped at once. One from
/// [`ToolManager::join_session`] does not: it is a view of a session whose
/// owner (a server's connection, say) ends it with
/// [`ToolManager::end_session`].
///
/// ```
/// use serde_json::json;
/// use toolhost::ToolManager;
///
/// let manager = ToolManager::new();
/// let session = manager.session();
/// let call = json!({"function": {"name": "nothing_here", "arguments": "{}"}});
/// assert!(session.call(&call).starts_with("Error: "));
/// ```
pub struct Session<'m> {
    manager: &'m ToolManager,
    id: SessionId,
    ends_on_drop: bool,
}

impl ToolManager {
    /// A new session of this manager's tools, with a fresh key; its state is
    /// dropped when it is.
    pub fn session(&self) -> Session<'_> {
        Session {
            manager: self,
            id: SessionId::new(),
            ends_on_drop: true,
        }
    }

    /// The session `id` of this manager's tools, made on its first call; it
    /// lives until [`ToolManager::end_session`] (or its modules' bounds:
    /// `[sessions]`), not until the value returned is dropped.
    pub fn join_session(&self, id: SessionId) -> Session<'_> {
        Session {
            manager: self,
            id,
            ends_on_drop: false,
        }
    }

    /// Ends session `id` in every tool that keeps state for it; its next
    /// call starts afresh.
    pub fn end_session(&self, id: &SessionId) {
        let mut ended: Vec<*const ()> = Vec::new();
        for registered in self.registered() {
            let provider = Arc::as_ptr(&registered.provider).cast::<()>();
            if !ended.contains(&provider) {
                ended.push(provider);
                registered.provider.end_session(id);
            }
        }
    }
}

impl Session<'_> {
    /// The session's key.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Ends the session now (as dropping one from [`ToolManager::session`]
    /// does).
    pub fn end(self) {
        self.manager.end_session(&self.id);
    }

    fn scope(&self) -> Scope<'_> {
        Scope::new(self.manager, Some(&self.id))
    }

    /// [`ToolManager::call`] in this session.
    pub fn call(&self, tool_call: &Value) -> String {
        self.scope().call(tool_call)
    }

    /// [`ToolManager::try_call`] in this session.
    pub fn try_call(&self, tool_call: &Value) -> Result<String, ToolError> {
        self.scope().try_call(tool_call)
    }

    /// [`ToolManager::call_tool`] in this session.
    pub fn call_tool(&self, name: &str, arguments: Option<&Value>) -> Result<String, ToolError> {
        self.scope().call_tool(name, arguments)
    }

    /// [`ToolManager::call_json`] in this session.
    pub fn call_json(&self, tool_call: &str) -> String {
        self.scope().call_json(tool_call)
    }

    /// [`ToolManager::call_async`] in this session. Calls of one session
    /// run one at a time, in the order they reach its instance.
    pub fn call_async(&self, tool_call: &Value) -> impl Future<Output = String> + Send + 'static {
        self.scope().call_async(tool_call)
    }

    /// [`ToolManager::call_json_async`] in this session.
    pub fn call_json_async(
        &self,
        tool_call: &str,
    ) -> impl Future<Output = String> + Send + 'static {
        self.scope().call_json_async(tool_call)
    }

    /// [`ToolManager::call_tool_async`] in this session.
    pub fn call_tool_async(
        &self,
        name: &str,
        arguments: Option<&Value>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        self.scope().call_tool_async(name, arguments)
    }

    /// [`ToolManager::call_tool_json_async`] in this session.
    pub fn call_tool_json_async(
        &self,
        name: &str,
        arguments: &str,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        self.scope().call_tool_json_async(name, arguments)
    }

    /// [`ToolManager::call_tool_listened_async`] in this session.
    pub fn call_tool_listened_async(
        &self,
        name: &str,
        arguments: Option<&Value>,
        stderr: Option<&StderrListener>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        self.scope()
            .call_tool_listened_async(name, arguments, stderr)
    }

    /// [`ToolManager::call_tool_json_listened_async`] in this session.
    pub fn call_tool_json_listened_async(
        &self,
        name: &str,
        arguments: &str,
        stderr: Option<&StderrListener>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        self.scope()
            .call_tool_json_listened_async(name, arguments, stderr)
    }

    /// [`ToolManager::call_many`] in this session (calls of one module run
    /// one after another in its instance).
    pub fn call_many(&self, tool_calls: &[Value]) -> Vec<Value> {
        self.scope().call_many(tool_calls)
    }

    /// [`ToolManager::call_many_async`] in this session.
    pub async fn call_many_async(&self, tool_calls: &[Value]) -> Vec<Value> {
        self.scope().call_many_async(tool_calls).await
    }

    /// [`ToolManager::call_message`] in this session.
    pub fn call_message(&self, message: &Value) -> Result<Vec<Value>, ToolError> {
        self.scope().call_message(message)
    }

    /// [`ToolManager::call_message_json`] in this session.
    pub fn call_message_json(&self, text: &str) -> Result<Vec<Value>, ToolError> {
        self.scope().call_message_json(text)
    }

    /// [`ToolManager::call_message_async`] in this session.
    pub async fn call_message_async(&self, message: &Value) -> Result<Vec<Value>, ToolError> {
        self.scope().call_message_async(message).await
    }

    /// [`ToolManager::call_message_json_async`] in this session.
    pub async fn call_message_json_async(&self, text: &str) -> Result<Vec<Value>, ToolError> {
        self.scope().call_message_json_async(text).await
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if self.ends_on_drop {
            self.manager.end_session(&self.id);
        }
    }
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("ends_on_drop", &self.ends_on_drop)
            .finish_non_exhaustive()
    }
}
