//! Components written for other hosts: a component that does not export
//! toolhost's `tool-info` and `call` offers each function it exports (at
//! the world level or in an exported interface) as a tool, its schema made
//! from the function's WIT types ([`schema`]), its JSON arguments checked
//! and converted before the instance runs ([`to_val`]), and its results
//! given back as text ([`from_val`]). Descriptions come from the doc
//! comments the component carries ([`docs`]).
//!
//! The naming rule: a world function `f` is tool `<module>_f`; function
//! `f` of an exported interface `ns:pkg/iface@1.0.0` (or a world's own
//! `iface`) is `<module>_iface_f`; a resource's static function `r.f` is
//! `<module>_iface_r-f`. WIT names have no `_`, so no interface function
//! can take a world function's name.

mod docs;
mod from_val;
mod schema;
mod to_val;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, ComponentExportIndex, Type, Val};

use crate::names;
use crate::policy::{Limits, limit_key};
use crate::tool::{OUTPUT_SCHEMA_BOUNDS, ToolInfo};

use super::load_error::{LoadError, LoadErrorKind};
use super::producers::Producers;

pub(crate) use from_val::answer;
pub(crate) use to_val::WrongArgument;

/// An exported function served as a tool: where it is and its types.
#[derive(Debug)]
pub(crate) struct TypedFunc {
    /// Its export, looked up once.
    pub export: ComponentExportIndex,
    /// The interface it is exported from (`None`: the world) and its name.
    pub interface: Option<Arc<str>>,
    pub name: Arc<str>,
    /// Its parameters, by name.
    pub params: Vec<(String, Type)>,
    /// Its result type, if it has one.
    pub result: Option<Type>,
}

impl TypedFunc {
    /// The values of a call's parameters from its JSON object of arguments
    /// (`argument_bytes` long), or what is wrong with them: the values may
    /// take host memory in proportion to the arguments' bytes, and at most
    /// `memory_bytes` (the call's `memory_mib`).
    pub(crate) fn arguments(
        &self,
        object: &Map<String, Value>,
        argument_bytes: usize,
        memory_bytes: u64,
    ) -> Result<Vec<Val>, WrongArgument> {
        let mut budget = to_val::argument_budget(argument_bytes, memory_bytes);
        to_val::arguments(&self.params, object, &mut budget)
    }

    /// How many results a call gives back (0 or 1).
    pub(crate) fn results(&self) -> usize {
        usize::from(self.result.is_some())
    }
}

/// One function as a tool: its module-local name, schema and function.
#[derive(Debug)]
pub(crate) struct TypedTool {
    pub local: String,
    pub info: ToolInfo,
    pub func: Arc<TypedFunc>,
}

/// An exported function that is not offered as a tool, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The function as WIT names it: `echo`, or `test:plain/text@0.1.0#echo`.
    pub function: String,
    /// Why it is not a tool (for example, it takes a resource).
    pub reason: String,
}

/// The tools of a component that does not export `tool-info` and `call`,
/// and the functions left out.
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    pub tools: Vec<TypedTool>,
    pub left_out: Vec<LeftOut>,
}

/// One exported function as found: its WIT path, the interface it is in
/// (export name and short name) and its type.
struct Found {
    path: String,
    interface: Option<(String, String)>,
    name: String,
    export: ComponentExportIndex,
    ty: ComponentFunc,
}

/// Every exported function of `component` as a tool of module `module`;
/// a load error when none can be, or when two would share a name.
pub(crate) fn discover(
    module: &str,
    component: &Component,
    bytes: &[u8],
    limits: &Limits,
    producers: &Producers,
) -> Result<Discovered, LoadError> {
    let fail = |reason: String| LoadError::new(module, LoadErrorKind::WrongWorld, reason);
    let found = exported_functions(component);
    let mut discovered = Discovered::default();
    // Names first: what could be a tool is counted against `max_tools`
    // before any schema is built.
    let mut candidates = Vec::with_capacity(found.len());
    for f in found {
        let named = match toolchain_hook(&f, producers) {
            Some(reason) => Err(reason.to_string()),
            None => local_name(f.interface.as_ref().map(|(_, s)| s.as_str()), &f.name),
        };
        match named {
            Ok(local) => candidates.push((f, local)),
            Err(reason) => discovered.left_out.push(LeftOut {
                function: f.path,
                reason,
            }),
        }
    }
    if candidates.len() as u64 > limits.max_tools {
        return Err(LoadError::new(
            module,
            LoadErrorKind::InvalidToolInfo,
            format!(
                "it exports {} functions, more than the limit of {} tools (limits.{})",
                candidates.len(),
                limits.max_tools,
                limit_key::max_tools
            ),
        ));
    }
    let docs = docs::PackageDocs::of(bytes);
    let mut taken: HashMap<String, String> = HashMap::new();
    let mut schema_bytes_left = usize::try_from(limits.max_tool_info_bytes).unwrap_or(usize::MAX);
    for (f, local) in candidates {
        let info = match tool_info(&f, &docs, schema_bytes_left, limits.max_tool_info_bytes) {
            Ok((info, bytes)) => {
                schema_bytes_left = schema_bytes_left.saturating_sub(bytes);
                info
            }
            Err(reason) => {
                discovered.left_out.push(LeftOut {
                    function: f.path,
                    reason,
                });
                continue;
            }
        };
        let exposed = names::exposed_name(module, &local).map_err(|e| {
            fail(format!(
                "function `{}` would be tool '{module}_{local}', which is not a valid tool name: \
                 {e}; give the module a shorter name (`name = \"...\"` in the config)",
                f.path
            ))
        })?;
        if let Some(other) = taken.insert(exposed.clone(), f.path.clone()) {
            return Err(fail(format!(
                "functions `{other}` and `{}` would both be tool '{exposed}'; \
                 toolhost names an interface's functions by the interface's name without \
                 its package, so two exported interfaces of one name cannot be served together",
                f.path
            )));
        }
        let params = f.ty.params().map(|(n, t)| (n.to_string(), t)).collect();
        let result = f.ty.results().next();
        discovered.tools.push(TypedTool {
            local,
            info: ToolInfo {
                name: exposed,
                ..info
            },
            func: Arc::new(TypedFunc {
                export: f.export,
                interface: f.interface.as_ref().map(|(e, _)| Arc::from(e.as_str())),
                name: Arc::from(f.name.as_str()),
                params,
                result,
            }),
        });
    }
    if discovered.tools.is_empty() {
        return Err(fail(nothing_usable(component, &discovered.left_out)));
    }
    for left in &discovered.left_out {
        tracing::warn!(
            module,
            function = %left.function,
            "exported function left out: {}",
            left.reason
        );
    }
    Ok(discovered)
}

/// The component's exported functions, world-level first, then those of
/// each exported interface, in export order.
fn exported_functions(component: &Component) -> Vec<Found> {
    let ty = component.component_type();
    let engine = component.engine();
    let mut found = Vec::new();
    for (name, item) in ty.exports(engine) {
        match item.ty {
            ComponentItem::ComponentFunc(func) => {
                if let Some(export) = component.get_export_index(None, name) {
                    found.push(Found {
                        path: name.to_string(),
                        interface: None,
                        name: name.to_string(),
                        export,
                        ty: func,
                    });
                }
            }
            ComponentItem::ComponentInstance(instance) => {
                let Some(parent) = component.get_export_index(None, name) else {
                    continue;
                };
                let short = short_interface_name(name).to_string();
                for (func_name, item) in instance.exports(engine) {
                    let ComponentItem::ComponentFunc(func) = item.ty else {
                        continue;
                    };
                    if let Some(export) = component.get_export_index(Some(&parent), func_name) {
                        found.push(Found {
                            path: format!("{name}#{func_name}"),
                            interface: Some((name.to_string(), short.clone())),
                            name: func_name.to_string(),
                            export,
                            ty: func,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// Why `f` is not a tool if it is a toolchain's own export rather than the
/// author's: componentize-py's initialization hook `exports#init`, which
/// ran when the component was built.
fn toolchain_hook(f: &Found, producers: &Producers) -> Option<&'static str> {
    let hook = f.path == "exports#init" && producers.componentize_py();
    hook.then_some("componentize-py's initialization hook, run when the component was built")
}

/// `iface` of `ns:pkg/iface@1.0.0`; a plain name as it is.
fn short_interface_name(export: &str) -> &str {
    let without_version = export.split('@').next().unwrap_or(export);
    without_version
        .rsplit('/')
        .next()
        .unwrap_or(without_version)
}

/// The module-local tool name of function `func` (of `interface`, by its
/// short name), or why it is not offered.
fn local_name(interface: Option<&str>, func: &str) -> Result<String, String> {
    let func = if let Some(rest) = func.strip_prefix("[static]") {
        rest.replace('.', "-")
    } else if func.starts_with('[') {
        return Err("it is a resource's constructor or method".into());
    } else {
        func.to_string()
    };
    Ok(match interface {
        Some(interface) => format!("{interface}_{func}"),
        None => func,
    })
}

/// The tool's schema: description, parameters and, where every answer is
/// a JSON object, its output schema; and the most bytes it takes as JSON.
/// It may take at most [`schema::MAX_TOOL_SCHEMA_BYTES`], and at most
/// `module_left`, what is left of the module's `max_tool_info_bytes`.
fn tool_info(
    f: &Found,
    docs: &docs::PackageDocs,
    module_left: usize,
    max_tool_info_bytes: u64,
) -> Result<(ToolInfo, usize), String> {
    let unsupported = |e: schema::Unsupported| e.0;
    let mut builder = if module_left < schema::MAX_TOOL_SCHEMA_BYTES {
        schema::SchemaBuilder::new(
            module_left,
            format!(
                "what is left of limits.{} = {}, which bounds \
                 the schemas of all of one module's tools",
                limit_key::max_tool_info_bytes,
                max_tool_info_bytes
            ),
        )
    } else {
        schema::SchemaBuilder::new(
            schema::MAX_TOOL_SCHEMA_BYTES,
            "the most one tool's schema may take".into(),
        )
    };
    let description = docs
        .function(
            f.interface.as_ref().map(|(e, s)| (e.as_str(), s.as_str())),
            &f.name,
        )
        .unwrap_or_else(|| default_description(f));
    builder.take_text(&description).map_err(unsupported)?;
    let params: Vec<(String, Type)> = f.ty.params().map(|(n, t)| (n.to_string(), t)).collect();
    let parameters = builder.object(&params, 1).map_err(unsupported)?;
    let result = f.ty.results().next();
    let mut output = None;
    if let Some(ty) = &result {
        let schema = builder.schema(ty).map_err(unsupported)?;
        output = object_answer(ty, &schema);
    }
    let mut info = ToolInfo::new("", description, parameters);
    if let Some(schema) = output
        && fits_output_bounds(&schema)
    {
        info.extra.insert("outputSchema".into(), schema);
    }
    Ok((info, builder.bytes()))
}

/// The output schema when every answer is a JSON object: a record, or a
/// result whose `ok` is one (its `err` is an error, not an answer).
fn object_answer(ty: &Type, schema: &Value) -> Option<Value> {
    match ty {
        Type::Record(_) => Some(schema.clone()),
        Type::Result(r) if matches!(r.ok(), Some(Type::Record(_))) => {
            Some(schema["oneOf"][0]["properties"]["value"].clone())
        }
        _ => None,
    }
}

fn fits_output_bounds(schema: &Value) -> bool {
    let probe = json!({"type": "function", "function": {"name": "t", "outputSchema": schema}});
    ToolInfo::from_schema(&probe).is_ok() && schema.to_string().len() <= OUTPUT_SCHEMA_BOUNDS.bytes
}

/// A description for a function without docs: its name and where it is from.
fn default_description(f: &Found) -> String {
    match &f.interface {
        Some((export, _)) => format!("Calls `{}` of interface {export}.", f.name),
        None => format!(
            "Calls `{}`, a function the component exports (it carries no doc comment for it).",
            f.name
        ),
    }
}

/// The load error's reason when no function can be a tool: what the
/// component exports, and what toolhost serves.
fn nothing_usable(component: &Component, left_out: &[LeftOut]) -> String {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(component.engine())
        .map(|(name, item)| format!("{name} ({})", item_kind(&item.ty)))
        .collect();
    let exports = if exports.is_empty() {
        "nothing".to_string()
    } else {
        exports.join(", ")
    };
    let mut reason =
        format!("it exports no function toolhost can serve as a tool (it exports: {exports})");
    if !left_out.is_empty() {
        let why: Vec<String> = left_out
            .iter()
            .map(|l| format!("`{}`: {}", l.function, l.reason))
            .collect();
        reason.push_str(&format!("; left out: {}", why.join("; ")));
    }
    reason.push_str(
        "; a tool module exports `tool-info` and `call` (wit/tool.wit), or functions whose \
         parameters and results have a JSON form (no resources, streams or futures)",
    );
    reason
}

fn item_kind(item: &ComponentItem) -> &'static str {
    match item {
        ComponentItem::ComponentFunc(_) => "a function",
        ComponentItem::CoreFunc(_) => "a core function",
        ComponentItem::Module(_) => "a core module",
        ComponentItem::Component(_) => "a component",
        ComponentItem::ComponentInstance(_) => "an interface",
        ComponentItem::Type(_) => "a type",
        ComponentItem::Resource(_) => "a resource",
    }
}

/// What a type that has no JSON form is, for a reason a person reads.
fn not_json(ty: &Type) -> &'static str {
    match ty {
        Type::Own(_) => "a resource (`own<...>`)",
        Type::Borrow(_) => "a resource (`borrow<...>`)",
        Type::Future(_) => "a `future`",
        Type::Stream(_) => "a `stream`",
        Type::ErrorContext => "an `error-context`",
        Type::Map(_) => "a `map`",
        _ => "a type with no JSON form",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rule() {
        assert_eq!(short_interface_name("test:plain/text@0.1.0"), "text");
        assert_eq!(short_interface_name("wasi:http/handler"), "handler");
        assert_eq!(short_interface_name("text"), "text");
        assert_eq!(local_name(None, "read-file").unwrap(), "read-file");
        assert_eq!(local_name(Some("text"), "echo").unwrap(), "text_echo");
        assert_eq!(
            local_name(Some("c"), "[static]tally.make").unwrap(),
            "c_tally-make"
        );
        assert!(local_name(Some("c"), "[method]tally.get").is_err());
    }
}
