//! What a call runs in an instance: the export a [`Request`] names (toolhost's
//! `tool-info` or `call`, or a typed export), and its answer within the
//! output limit.

use std::sync::Arc;
use std::time::Instant;

use wasmtime::Store;
use wasmtime::component::{Component, ComponentExportIndex, Instance, Val};

use super::fault::Fault;
use super::report::Outcome;
use super::state::CallState;
use crate::policy::{Limits, to_usize};

/// The indices of a component's `tool-info` and `call` exports, so that a
/// call does not look them up by name (both `None` for a component written
/// for another host, whose calls are [`Request::Typed`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exports {
    tool_info: Option<ComponentExportIndex>,
    call: Option<ComponentExportIndex>,
}

impl Exports {
    /// The `tool-info` and `call` exports of `component`, as far as it has them.
    pub(crate) fn of(component: &Component) -> Self {
        Self {
            tool_info: component.get_export_index(None, "tool-info"),
            call: component.get_export_index(None, "call"),
        }
    }
}

/// Which export to run.
#[derive(Debug, Clone)]
pub(crate) enum Request {
    /// `tool-info()`.
    ToolInfo,
    /// `call(name, arguments)`, with the module-local name.
    Call { name: String, arguments: Arc<str> },
    /// One exported function of a component written for another host,
    /// with its parameters' values.
    Typed(TypedCall),
}

/// A call of an exported function with its parameters' values.
#[derive(Debug, Clone)]
pub(crate) struct TypedCall {
    /// The function's export in the module's component.
    pub export: ComponentExportIndex,
    /// The interface it is exported from (`None`: the world) and its
    /// name, to find it in an instance of another compilation of the same
    /// component (the on-demand twin of a full pool).
    pub interface: Option<Arc<str>>,
    pub name: Arc<str>,
    pub params: Arc<[Val]>,
    /// How many results it gives back (0 or 1).
    pub results: usize,
    /// Its results as the answer text (`Ok`) or the tool's error (`Err`),
    /// written up to the output limit (the `usize`) and the deadline.
    pub render: Render,
}

/// Writes a typed call's results as text, within the output limit (the
/// `usize`) and before the deadline.
pub(crate) type Render =
    fn(Vec<Val>, usize, Instant) -> Result<Result<String, String>, TextStopped>;

/// Why turning a typed call's results into text stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TextStopped {
    /// The text passed the output limit; what was written up to it.
    PastLimit(String),
    /// The call's deadline passed while it was written.
    PastDeadline,
}

/// The most bytes `request`'s answer may have.
pub(super) fn max_bytes(limits: &Limits, request: &Request) -> usize {
    to_usize(match request {
        Request::ToolInfo => limits.max_tool_info_bytes,
        Request::Call { .. } | Request::Typed(_) => limits.max_output_bytes,
    })
}

/// Runs `request`'s export of `instance`.
pub(super) async fn call_export(
    store: &mut Store<CallState>,
    instance: &Instance,
    exports: Exports,
    request: Request,
    max_bytes: usize,
) -> wasmtime::Result<Outcome> {
    let missing = |export: &str| wasmtime::Error::msg(format!("the component has no `{export}`"));
    match request {
        Request::ToolInfo => {
            let index = exports.tool_info.ok_or_else(|| missing("tool-info"))?;
            let func = instance.get_typed_func::<(), (String,)>(&mut *store, index)?;
            let (info,) = func.call_async(&mut *store, ()).await?;
            Ok(check_size(info, max_bytes).map(Ok))
        }
        Request::Call { name, arguments } => {
            let index = exports.call.ok_or_else(|| missing("call"))?;
            let func = instance
                .get_typed_func::<(&str, &str), (Result<String, String>,)>(&mut *store, index)?;
            let (answer,) = func
                .call_async(&mut *store, (name.as_str(), &*arguments))
                .await?;
            Ok(sized(answer, max_bytes))
        }
        Request::Typed(call) => {
            let func = typed_func(store, instance, &call).ok_or_else(|| missing(&call.name))?;
            let mut results = vec![Val::Bool(false); call.results];
            func.call_async(&mut *store, &call.params, &mut results)
                .await?;
            let deadline = store.data().deadline.get();
            Ok(match (call.render)(results, max_bytes, deadline) {
                Ok(answer) => sized(answer, max_bytes),
                Err(TextStopped::PastLimit(_)) => Err(Fault::OutputTooLarge(None)),
                Err(TextStopped::PastDeadline) => Err(Fault::Timeout),
            })
        }
    }
}

/// The answer within `max_bytes`: a larger answer is a fault, a larger
/// error is cut.
fn sized(answer: Result<String, String>, max_bytes: usize) -> Outcome {
    match answer {
        Ok(text) => check_size(text, max_bytes).map(Ok),
        Err(text) => Ok(Err(truncate(&text, max_bytes))),
    }
}

/// The function `call` names in `instance`: by its index, or by its names
/// in an instance of another compilation of the component.
fn typed_func(
    store: &mut Store<CallState>,
    instance: &Instance,
    call: &TypedCall,
) -> Option<wasmtime::component::Func> {
    if let Some(func) = instance.get_func(&mut *store, call.export) {
        return Some(func);
    }
    let parent = match &call.interface {
        Some(interface) => Some(instance.get_export_index(&mut *store, None, interface)?),
        None => None,
    };
    let index = instance.get_export_index(&mut *store, parent.as_ref(), &call.name)?;
    instance.get_func(&mut *store, index)
}

/// The answer, or its size if it is larger than `max_bytes`.
fn check_size(text: String, max_bytes: usize) -> Result<String, Fault> {
    if text.len() > max_bytes {
        return Err(Fault::OutputTooLarge(Some(text.len())));
    }
    Ok(text)
}

/// `text`, cut at a char boundary to at most `limit` bytes, with its full size.
fn truncate(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes in all)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_errors_are_cut_at_a_char_boundary() {
        assert_eq!(truncate("héllo", 2), "h... (6 bytes in all)");
        assert_eq!(truncate("abc", 5), "abc");
    }
}
