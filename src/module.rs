//! [`WasmModule`]: a tool module compiled, checked and ready to call.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use wasmtime::component::types::{ComponentFunc, ComponentItem};
use wasmtime::component::{Component, InstancePre, Type};

use crate::limits::to_usize;
use crate::load_error::{LoadError, LoadErrorKind};
use crate::producers::Producers;
use crate::sandbox::{self, Access, CallReport, CallState, Fault, Request};
use crate::{
    Compiled, Grants, Limits, Runtime, Tool, ToolError, ToolErrorKind, ToolInfo, describe_error,
    names,
};

const WASM_MAGIC: &[u8; 4] = b"\0asm";
const CORE_MODULE_VERSION: [u8; 4] = [0x01, 0x00, 0x00, 0x00];
const COMPONENT_LAYER: [u8; 2] = [0x01, 0x00];

/// A loaded tool module: one WebAssembly component and the tools it declared.
///
/// Loading compiles the component once, checks that it implements the
/// `toolhost:tool` world with imports the host provides, runs `tool-info`
/// once under the module's limits and validates every schema. Each
/// [`call`](Tool::call) then runs in a fresh sandboxed instance.
///
/// Cloning is cheap and shares the compiled code.
#[derive(Clone)]
pub struct WasmModule {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    name: String,
    runtime: Runtime,
    pre: InstancePre<CallState>,
    limits: Limits,
    access: Access,
    tools: Vec<ModuleTool>,
    imports: Vec<String>,
    size: usize,
    producers: Producers,
    compile_time: Duration,
    compiled: Compiled,
}

/// One tool of a module: its local name and its schema under the exposed name.
#[derive(Debug, Clone)]
struct ModuleTool {
    local: String,
    info: ToolInfo,
}

impl WasmModule {
    /// Loads the component at `path` as module `name` (default: the file stem).
    pub fn from_file(
        runtime: &Runtime,
        path: &Path,
        name: Option<&str>,
        limits: Limits,
    ) -> Result<Self, LoadError> {
        let name = match name {
            Some(n) => n.to_string(),
            None => names::module_name_from_stem(
                &path
                    .file_stem()
                    .map(|s| s.to_string_lossy())
                    .unwrap_or_default(),
            ),
        };
        let size = std::fs::metadata(path)
            .map_err(|e| io_error(&name, path, &e))?
            .len();
        if size > limits.max_component_bytes {
            return Err(too_big(&name, size, &limits));
        }
        let bytes = std::fs::read(path).map_err(|e| io_error(&name, path, &e))?;
        Self::from_bytes(runtime, &name, &bytes, limits)
    }

    /// Loads a component from its bytes as module `name`.
    pub fn from_bytes(
        runtime: &Runtime,
        name: &str,
        bytes: &[u8],
        limits: Limits,
    ) -> Result<Self, LoadError> {
        names::check_module_name(name)
            .map_err(|e| LoadError::new(name, LoadErrorKind::InvalidName, e))?;
        limits.validate().map_err(|e| {
            LoadError::new(
                name,
                LoadErrorKind::InvalidLimits,
                format!("invalid limits: {e}"),
            )
        })?;
        check_header(name, bytes, &limits)?;
        let backend = runtime.backend(&limits).map_err(|e| {
            LoadError::new(
                name,
                LoadErrorKind::InvalidLimits,
                format!("cannot make an engine for these limits: {e:#}"),
            )
        })?;
        let started = Instant::now();
        let (component, compiled) = runtime.compile(&backend.engine, bytes).map_err(|e| {
            LoadError::new(
                name,
                LoadErrorKind::Compile,
                compile_error_reason(&describe_error(&e)),
            )
        })?;
        let compile_time = started.elapsed();
        check_exports(name, &component)?;
        let imports = component
            .component_type()
            .imports(&backend.engine)
            .map(|(n, _)| n.to_string())
            .collect();
        let pre = backend.linker.instantiate_pre(&component).map_err(|e| {
            LoadError::new(
                name,
                LoadErrorKind::MissingImport,
                import_error_reason(&describe_error(&e)),
            )
        })?;
        let tools = read_tools(name, runtime, &pre, &limits)?;
        Ok(Self {
            inner: Arc::new(Inner {
                name: name.to_string(),
                runtime: runtime.clone(),
                pre,
                limits,
                access: Access::default(),
                tools,
                imports,
                size: bytes.len(),
                producers: Producers::of(bytes),
                compile_time,
                compiled,
            }),
        })
    }

    /// This module with `grants` for its calls (see [`Grants::resolve`]);
    /// `tool-info` is always read with nothing granted.
    pub fn with_grants(self, grants: Grants) -> Self {
        let inner = Inner {
            access: Access::new(grants),
            ..(*self.inner).clone()
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// What this module's calls are granted.
    pub fn grants(&self) -> &Grants {
        &self.inner.access.grants
    }

    /// The module's name: the prefix of its exposed tool names.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The limits each call runs under.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// What the component imports (for example `wasi:cli/stderr@0.2.0`).
    pub fn imports(&self) -> &[String] {
        &self.inner.imports
    }

    /// The component's size in bytes.
    pub fn size(&self) -> usize {
        self.inner.size
    }

    /// How the component was made (language runtime, producers), as far as
    /// its custom sections tell.
    pub fn producers(&self) -> &Producers {
        &self.inner.producers
    }

    /// How long compiling the component (or loading it from the cache) took.
    pub fn compile_time(&self) -> Duration {
        self.inner.compile_time
    }

    /// Whether the component was compiled at load or came from the cache.
    pub fn compiled(&self) -> Compiled {
        self.inner.compiled
    }

    /// The module-local name of exposed tool `name`, if it is one of this module's.
    pub fn local_name(&self, name: &str) -> Option<&str> {
        self.find(name).map(|t| t.local.as_str())
    }

    fn find(&self, exposed: &str) -> Option<&ModuleTool> {
        self.inner.tools.iter().find(|t| t.info.name == exposed)
    }

    fn fault_error(&self, tool: &str, fault: Fault) -> ToolError {
        let limits = &self.inner.limits;
        let (kind, message) = match fault {
            Fault::OutOfFuel => (
                ToolErrorKind::OutOfFuel,
                format!("tool '{tool}' ran out of fuel (limit {}).", limits.fuel),
            ),
            Fault::Timeout => (
                ToolErrorKind::Timeout,
                format!(
                    "tool '{tool}' exceeded its time limit of {} ms.",
                    limits.timeout_ms
                ),
            ),
            Fault::MemoryLimit => (
                ToolErrorKind::MemoryLimit,
                format!(
                    "tool '{tool}' exceeded its memory limit of {} MiB.",
                    limits.memory_mib
                ),
            ),
            Fault::OutputTooLarge(bytes) => (
                ToolErrorKind::OutputTooLarge,
                format!(
                    "tool '{tool}' returned {bytes} bytes, more than its output limit of {} bytes.",
                    limits.max_output_bytes
                ),
            ),
            Fault::ResourceLimit(key) => (
                ToolErrorKind::ResourceLimit,
                format!(
                    "tool '{tool}' exceeded its limit {key} = {}.",
                    limit_value(limits, key)
                ),
            ),
            Fault::Panicked(message) => (
                ToolErrorKind::Panicked,
                format!("tool '{tool}' panicked: {message}"),
            ),
            Fault::Trapped(message) => (
                ToolErrorKind::Trapped,
                format!("tool '{tool}' trapped: {message}"),
            ),
            Fault::Host(message) => (
                ToolErrorKind::Host,
                format!("tool '{tool}' could not be run: {message}"),
            ),
        };
        ToolError::new(kind, message)
    }
}

impl Tool for WasmModule {
    fn infos(&self) -> Vec<ToolInfo> {
        self.inner.tools.iter().map(|t| t.info.clone()).collect()
    }

    fn call(&self, name: &str, arguments: &Map<String, Value>) -> Result<String, ToolError> {
        let Some(tool) = self.find(name) else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("module '{}' has no tool '{name}'.", self.inner.name),
            ));
        };
        let arguments = serde_json::to_string(arguments).map_err(|e| {
            ToolError::new(
                ToolErrorKind::Host,
                format!("tool '{name}' could not be run: {e}"),
            )
        })?;
        let max_args = self.inner.limits.max_args_bytes;
        if arguments.len() as u64 > max_args {
            return Err(ToolError::new(
                ToolErrorKind::InvalidArguments,
                format!(
                    "tool '{name}' was given {} bytes of arguments, more than its limit of {max_args} bytes.",
                    arguments.len()
                ),
            ));
        }
        let started = Instant::now();
        let request = Request::Call {
            name: &tool.local,
            arguments: &arguments,
        };
        let inner = &self.inner;
        let report = sandbox::run(
            &inner.runtime,
            &inner.pre,
            &inner.limits,
            &inner.access,
            request,
        );
        log_report(&self.inner.name, name, &report, started.elapsed());
        match report.result {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(text)) => Err(ToolError::failed(name, &text)),
            Err(fault) => Err(self.fault_error(name, fault)),
        }
    }
}

impl std::fmt::Debug for WasmModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmModule")
            .field("name", &self.inner.name)
            .field(
                "tools",
                &self
                    .inner
                    .tools
                    .iter()
                    .map(|t| &t.info.name)
                    .collect::<Vec<_>>(),
            )
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

fn log_report(module: &str, tool: &str, report: &CallReport, elapsed: Duration) {
    let outcome = match &report.result {
        Ok(Ok(_)) => "ok",
        Ok(Err(_)) => "error",
        Err(_) => "fault",
    };
    tracing::debug!(
        tool,
        outcome,
        elapsed_ms = elapsed.as_millis() as u64,
        "tool call finished"
    );
    for (stream, captured) in [("stdout", &report.stdout), ("stderr", &report.stderr)] {
        if !captured.bytes.is_empty() || captured.dropped > 0 {
            tracing::info!(
                module,
                tool,
                stream,
                dropped_bytes = captured.dropped,
                "{}",
                captured.text().trim_end()
            );
        }
    }
}

/// The value of the limit with config key `key`.
fn limit_value(limits: &Limits, key: &str) -> u64 {
    limits
        .values()
        .into_iter()
        .find(|(k, _)| *k == key)
        .map_or(0, |(_, v)| v)
}

/// Why a component did not compile, with what to do where that is known.
fn compile_error_reason(error: &str) -> String {
    let mut reason = format!("it is not a valid component: {error}");
    if error.contains("component model async") {
        reason.push_str(
            "; toolhost does not enable the component-model async ABI (wasmtime's support for it \
             is incomplete): build the component with synchronous exports \
             (for componentize-qjs: --sync)",
        );
    }
    reason
}

/// Why a component's imports cannot be satisfied, with what to do.
fn import_error_reason(error: &str) -> String {
    let mut reason = format!(
        "{error}; toolhost provides the WASI 0.2 interfaces cli, clocks, filesystem, io, random \
         and sockets (granting nothing by default), and no others"
    );
    if error.contains("wasi:http/") {
        reason.push_str(
            "; wasi:http is not provided (JavaScript built with ComponentizeJS imports it; \
             componentize-qjs builds do not)",
        );
    }
    reason
}

fn io_error(name: &str, path: &Path, error: &std::io::Error) -> LoadError {
    LoadError::new(
        name,
        LoadErrorKind::Io,
        format!("cannot read {}: {error}", path.display()),
    )
}

fn too_big(name: &str, size: u64, limits: &Limits) -> LoadError {
    LoadError::new(
        name,
        LoadErrorKind::TooLarge,
        format!(
            "the component is {size} bytes, more than its limit of {} bytes (limits.max_component_bytes)",
            limits.max_component_bytes
        ),
    )
}

/// Checks the size and the first bytes: a component, not text, not a core module.
fn check_header(name: &str, bytes: &[u8], limits: &Limits) -> Result<(), LoadError> {
    let not = |reason: String| Err(LoadError::new(name, LoadErrorKind::NotAComponent, reason));
    if bytes.is_empty() {
        return not("the file is empty, not a WebAssembly component".into());
    }
    if bytes.len() as u64 > limits.max_component_bytes {
        return Err(too_big(name, bytes.len() as u64, limits));
    }
    if bytes.len() < 8 || &bytes[..4] != WASM_MAGIC {
        return not(
            "it is not a WebAssembly component (it does not start with the `\\0asm` header); \
             build the tool for wasm32-wasip2"
                .into(),
        );
    }
    if bytes[4..8] == CORE_MODULE_VERSION {
        return not(
            "it is a core WebAssembly module, not a component; build it for wasm32-wasip2 \
             (or wrap it with `wasm-tools component new`)"
                .into(),
        );
    }
    if bytes[6..8] != COMPONENT_LAYER {
        return not("it is not a WebAssembly component (unknown binary layer)".into());
    }
    Ok(())
}

/// The exports the `toolhost:tool` world requires, with their WIT signatures.
const REQUIRED_EXPORTS: [(&str, &str); 2] = [
    ("tool-info", "func() -> string"),
    (
        "call",
        "func(name: string, arguments: string) -> result<string, string>",
    ),
];

/// Checks that the component exports `tool-info` and `call` with the world's types.
fn check_exports(name: &str, component: &Component) -> Result<(), LoadError> {
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

/// Runs `tool-info` once and turns its answer into checked tool schemas.
fn read_tools(
    name: &str,
    runtime: &Runtime,
    pre: &InstancePre<CallState>,
    limits: &Limits,
) -> Result<Vec<ModuleTool>, LoadError> {
    let info_limits = Limits {
        fuel: limits.tool_info_fuel,
        timeout_ms: limits.tool_info_timeout_ms,
        ..*limits
    };
    let nothing = Access::default();
    let report = sandbox::run(runtime, pre, &info_limits, &nothing, Request::ToolInfo);
    let failed = |reason: String| LoadError::new(name, LoadErrorKind::ToolInfoFailed, reason);
    let text = match report.result {
        Ok(Ok(text)) => text,
        Ok(Err(text)) => return Err(failed(format!("tool-info failed: {text}"))),
        Err(Fault::OutOfFuel) => {
            return Err(failed(format!(
                "tool-info ran out of fuel (limit {}, limits.tool_info_fuel)",
                limits.tool_info_fuel
            )));
        }
        Err(Fault::Timeout) => {
            return Err(failed(format!(
                "tool-info exceeded its time limit of {} ms (limits.tool_info_timeout_ms)",
                limits.tool_info_timeout_ms
            )));
        }
        Err(Fault::MemoryLimit) => {
            return Err(failed(format!(
                "tool-info exceeded its memory limit of {} MiB",
                limits.memory_mib
            )));
        }
        Err(Fault::OutputTooLarge(bytes)) => {
            return Err(LoadError::new(
                name,
                LoadErrorKind::InvalidToolInfo,
                format!(
                    "tool-info returned {bytes} bytes, more than the limit of {} bytes (limits.max_tool_info_bytes)",
                    limits.max_tool_info_bytes
                ),
            ));
        }
        Err(Fault::ResourceLimit(key)) => {
            return Err(failed(format!(
                "tool-info exceeded the limit {key} = {}",
                limit_value(limits, key)
            )));
        }
        Err(Fault::Panicked(m)) => return Err(failed(format!("tool-info panicked: {m}"))),
        Err(Fault::Trapped(m)) => return Err(failed(format!("tool-info trapped: {m}"))),
        Err(Fault::Host(m)) => return Err(failed(m)),
    };
    parse_tools(name, &text, limits)
}

/// Parses and checks the `tool-info` text of module `module`.
fn parse_tools(module: &str, text: &str, limits: &Limits) -> Result<Vec<ModuleTool>, LoadError> {
    let invalid = |reason: String| LoadError::new(module, LoadErrorKind::InvalidToolInfo, reason);
    let max_bytes = to_usize(limits.max_tool_info_bytes);
    if text.len() > max_bytes {
        return Err(invalid(format!(
            "tool-info returned {} bytes, more than the limit of {max_bytes} bytes (limits.max_tool_info_bytes)",
            text.len()
        )));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| invalid(format!("tool-info did not return valid JSON: {e}")))?;
    let Value::Array(schemas) = value else {
        return Err(invalid(format!(
            "tool-info must return a JSON array of tool schemas, got {}",
            crate::error::json_type_name(&value)
        )));
    };
    if schemas.len() as u64 > limits.max_tools {
        return Err(invalid(format!(
            "tool-info declares {} tools, more than the limit of {} (limits.max_tools)",
            schemas.len(),
            limits.max_tools
        )));
    }
    let mut seen = HashSet::new();
    let mut tools = Vec::with_capacity(schemas.len());
    for (i, schema) in schemas.iter().enumerate() {
        let mut info =
            ToolInfo::from_schema(schema).map_err(|e| invalid(format!("tool #{i}: {e}")))?;
        names::check_tool_name(&info.name).map_err(|e| invalid(format!("tool #{i}: {e}")))?;
        if !seen.insert(info.name.clone()) {
            return Err(invalid(format!("tool '{}' is declared twice", info.name)));
        }
        let local = std::mem::take(&mut info.name);
        info.name = names::exposed_name(module, &local).map_err(invalid)?;
        tools.push(ModuleTool { local, info });
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_checked_before_compiling() {
        let limits = Limits::default();
        let kind = |b: &[u8]| check_header("m", b, &limits).unwrap_err().reason;
        assert!(kind(b"").contains("empty"));
        assert!(kind(b"(component)").contains("\\0asm"));
        assert!(kind(b"\0asm\x01\0\0\0").contains("core WebAssembly module"));
        assert!(check_header("m", b"\0asm\x0d\0\x01\0", &limits).is_ok());
        let tiny = Limits {
            max_component_bytes: 4,
            ..limits
        };
        let err = check_header("m", b"\0asm\x0d\0\x01\0", &tiny).unwrap_err();
        assert_eq!(err.kind, LoadErrorKind::TooLarge);
    }

    #[test]
    fn tool_info_is_validated() {
        let limits = Limits::default();
        let ok = parse_tools(
            "m",
            r#"[{"type":"function","function":{"name":"a_b"}}]"#,
            &limits,
        )
        .unwrap();
        assert_eq!(ok[0].local, "a_b");
        assert_eq!(ok[0].info.name, "m_a_b");
        let err = |t: &str| parse_tools("m", t, &limits).unwrap_err().reason;
        assert!(err("nope").contains("valid JSON"));
        assert!(err("{}").contains("got object"));
        assert!(err(r#"[{"type":"function","function":{"name":"a b"}}]"#).contains("tool #0"));
        let dup = r#"[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]"#;
        assert!(err(dup).contains("declared twice"));
        let small = Limits {
            max_tool_info_bytes: 1,
            max_tools: 1,
            ..limits
        };
        let reason = |t: &str| parse_tools("m", t, &small).unwrap_err().reason;
        assert!(reason("[]").contains("more than the limit of 1 bytes"));
        let two = Limits {
            max_tool_info_bytes: 1000,
            ..small
        };
        let reason = parse_tools("m", r#"[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]"#, &two)
            .unwrap_err()
            .reason;
        assert!(
            reason.contains("declares 2 tools, more than the limit of 1"),
            "{reason}"
        );
    }
}
