//! Whether a component implements the `toolhost:tool` world: its exports
//! and their types, and imports the host provides.

use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, Type};

use super::load_error::{LoadError, LoadErrorKind};

/// The exports the `toolhost:tool` world requires, with their WIT signatures.
const REQUIRED_EXPORTS: [(&str, &str); 2] = [
    ("tool-info", "func() -> string"),
    (
        "call",
        "func(name: string, arguments: string) -> result<string, string>",
    ),
];

/// Whether the component means to implement the `toolhost:tool` world: it
/// exports `tool-info` or `call` (then [`check_exports`] holds it to the
/// world; otherwise its exported functions are its tools).
pub(super) fn exports_contract(component: &Component) -> bool {
    let ty = component.component_type();
    let engine = component.engine();
    REQUIRED_EXPORTS
        .iter()
        .any(|(export, _)| ty.get_export(engine, export).is_some())
}

/// Checks that the component exports `tool-info` and `call` with the world's types.
pub(super) fn check_exports(name: &str, component: &Component) -> Result<(), LoadError> {
    let ty = component.component_type();
    let engine = component.engine();
    let wrong = |reason: String| {
        LoadError::new(
            name,
            LoadErrorKind::WrongWorld,
            format!("it does not implement the toolhost:tool world: {reason}; see wit/tool.wit"),
        )
    };
    for (export, signature) in REQUIRED_EXPORTS {
        let Some(item) = ty.get_export(engine, export) else {
            let exports: Vec<&str> = ty.exports(engine).map(|(n, _)| n).collect();
            let have = if exports.is_empty() {
                "none".to_string()
            } else {
                exports.join(", ")
            };
            return Err(wrong(format!(
                "it has no export `{export}` (its exports: {have})"
            )));
        };
        let fits = match &item.ty {
            ComponentItem::ComponentFunc(func) => signature_fits(export, func),
            _ => false,
        };
        if !fits {
            return Err(wrong(format!("export `{export}` is not `{signature}`")));
        }
    }
    Ok(())
}

fn signature_fits(export: &str, func: &ComponentFunc) -> bool {
    let params: Vec<Type> = func.params().map(|(_, t)| t).collect();
    let results: Vec<Type> = func.results().collect();
    let string_result = |r: &Type| match r {
        Type::Result(r) => {
            matches!(r.ok(), Some(Type::String)) && matches!(r.err(), Some(Type::String))
        }
        _ => false,
    };
    match export {
        "tool-info" => params.is_empty() && matches!(results.as_slice(), [Type::String]),
        _ => {
            matches!(params.as_slice(), [Type::String, Type::String])
                && matches!(results.as_slice(), [r] if string_result(r))
        }
    }
}

/// Why a component's imports cannot be satisfied, with what to do.
pub(super) fn import_error_reason(error: &str) -> String {
    let mut reason = format!(
        "{error}; toolhost provides the WASI 0.2 interfaces cli, clocks, filesystem, http, io, \
         random and sockets, and the WASI 0.3 interfaces cli, clocks, http and random \
         (granting nothing by default), and no others"
    );
    if error.contains("wasi:filesystem/") && error.contains("@0.3")
        || error.contains("wasi:sockets/") && error.contains("@0.3")
    {
        reason.push_str(
            "; WASI 0.3's filesystem and sockets are not provided (toolhost's checks of files, \
             sockets and name lookups are written for 0.2): build the component against WASI \
             0.2's filesystem and sockets, which wasi-libc and the Rust, Python and JavaScript \
             toolchains use",
        );
    }
    reason
}
