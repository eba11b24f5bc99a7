//! [`WasmModule`]: a tool module compiled, checked and ready to call.
//!
//! Loading reads the bytes ([`binary`]), compiles them, checks the world
//! ([`world`]) and reads the tools ([`tool_info`]); every call then runs in
//! a fresh sandbox, and a fault becomes text in one place ([`fault_text`]).

mod binary;
mod bundled;
mod fault_text;
mod instance_state;
mod load_error;
mod producers;
mod source;
mod tool_info;
mod typed;
mod world;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::{Compiled, Concurrency, describe_error};
use crate::names;
use crate::policy::{Access, Limits, Warm, limit_key, to_usize};
use crate::sandbox::{
    self, Blueprint, CallReport, Captured, Overflow, Request, Runtime, SessionCall, Target,
    TypedCall,
};
use crate::tool::{
    Arguments, SessionId, StderrListener, Tool, ToolError, ToolErrorKind, ToolFuture, ToolInfo,
};
use wasmtime::Engine;

pub use bundled::{BUNDLED_MODULES, BundledModule, bundled_module};
pub use load_error::{LoadError, LoadErrorKind};
pub use producers::Producers;
pub use source::ModuleSource;
pub use typed::LeftOut;

use tool_info::ModuleTool;

/// A loaded tool module: one WebAssembly component and the tools it declared.
///
/// Loading compiles the component once, checks that it implements the
/// `toolhost:tool` world with imports the host provides, runs `tool-info`
/// once under the module's limits and validates every schema. Each
/// [`call`](Tool::call) then runs in a fresh sandboxed instance, reaching
/// only what the module's [`Access`] allows (nothing, unless
/// [`WasmModule::with_access`] gives more).
///
/// Cloning is cheap and shares the compiled code.
///
/// ```
/// use toolhost::{Arguments, Limits, Runtime, Tool, WasmModule, bundled_module};
///
/// let runtime = Runtime::new()?;
/// let bytes = bundled_module("calc").expect("calc is bundled");
/// let calc = WasmModule::from_bytes(&runtime, "calc", bytes, Limits::default())?;
/// let arguments = Arguments::from_json(r#"{"expression": "6 * 7"}"#)?;
/// assert_eq!(calc.call("calc_evaluate", &arguments)?, "42");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct WasmModule {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    name: String,
    runtime: Runtime,
    /// What each call runs: the component, limits and access.
    target: Target,
    tools: Vec<ModuleTool>,
    /// Exported functions not offered as tools (a component written for
    /// another host), and why.
    left_out: Vec<LeftOut>,
    imports: Vec<String>,
    size: usize,
    producers: Producers,
    compile_time: Duration,
    compiled: Compiled,
}

impl WasmModule {
    /// Loads the component at `path` as module `name` (default: the file
    /// stem, see [`names::module_name_for_file`]).
    pub fn from_file(
        runtime: &Runtime,
        path: &std::path::Path,
        name: Option<&str>,
        limits: Limits,
    ) -> Result<Self, LoadError> {
        ModuleSource::File(path.to_path_buf()).load(runtime, name, limits)
    }

    /// Loads a component from its bytes as module `name`.
    pub fn from_bytes(
        runtime: &Runtime,
        name: &str,
        bytes: &[u8],
        limits: Limits,
    ) -> Result<Self, LoadError> {
        let fail = |kind, reason: String| LoadError::new(name, kind, reason);
        names::check_module_name(name).map_err(|e| fail(LoadErrorKind::InvalidName, e))?;
        limits
            .validate()
            .map_err(|e| fail(LoadErrorKind::InvalidLimits, format!("invalid limits: {e}")))?;
        binary::check_header(name, bytes, &limits)?;
        let state = instance_state::instance_state(bytes);
        check_state(name, state.bytes, &limits)?;
        let abi = binary::abi_use(bytes);
        let concurrency = if abi.needs_concurrency {
            Concurrency::On
        } else {
            Concurrency::Off
        };
        let linkers = runtime.linkers(&limits, concurrency).map_err(|e| {
            let reason = format!("cannot make an engine for these limits: {e:#}");
            fail(LoadErrorKind::InvalidLimits, reason)
        })?;
        let started = Instant::now();
        let (component, compiled) = runtime
            .compile(&linkers.engines(), bytes, &limits)
            .map_err(|e| {
                fail(
                    LoadErrorKind::Compile,
                    binary::compile_failure_reason(e, &limits),
                )
            })?;
        let compile_time = started.elapsed();
        let linker = linkers.companion_of(component.engine());
        let pooled = linkers
            .pooled
            .as_ref()
            .is_some_and(|(engine, _)| Engine::same(engine, component.engine()));
        let producers = Producers::of(bytes);
        // A component of the toolhost:tool world is held to it exactly;
        // any other offers its exported functions.
        let discovered = if world::exports_contract(&component) {
            world::check_exports(name, &component)?;
            None
        } else {
            Some(typed::discover(
                name, &component, bytes, &limits, &producers,
            )?)
        };
        let imports = component
            .component_type()
            .imports(linker.engine())
            .map(|(n, _)| n.to_string())
            .collect();
        let pre = linker.instantiate_pre(&component).map_err(|e| {
            let reason = world::import_error_reason(&describe_error(&e));
            fail(LoadErrorKind::MissingImport, reason)
        })?;
        let overflow =
            pooled.then(|| Arc::new(Overflow::new(Arc::clone(&linkers.on_demand.1), component)));
        let blueprint = Blueprint::new(
            name,
            pre,
            limits,
            runtime.disposal(),
            runtime.resolver().clone(),
        )
        .with_overflow(overflow)
        .with_transcoding(abi.transcodes_strings)
        // Priming calls `call`, which only the toolhost:tool world has.
        .with_primed_ready(discovered.is_none() && producers.interpreter_sets_up_on_first_call())
        .with_state_bytes(to_usize(state.bytes));
        let target = Target::new(runtime, blueprint);
        let (tools, left_out) = match discovered {
            Some(discovered) => typed_tools(discovered),
            None => {
                let read = tool_info::read_tools(name, &target);
                let tools = runtime.clock().block_on(runtime.clock().drive(read))?;
                (tools, Vec::new())
            }
        };
        target.prepare_first(runtime);
        Ok(Self {
            inner: Arc::new(Inner {
                name: name.to_string(),
                runtime: runtime.clone(),
                target,
                tools,
                left_out,
                imports,
                size: bytes.len(),
                producers,
                compile_time,
                compiled,
            }),
        })
    }

    /// This module with `access` for its calls (see
    /// [`Grants::resolve`](crate::Grants::resolve)); `tool-info` is always
    /// read with nothing granted.
    pub fn with_access(self, access: Access) -> Self {
        if *self.inner.target.access() == access {
            return self;
        }
        let mut inner = (*self.inner).clone();
        // Instances made for the old access never serve the new one.
        inner.target = inner.target.with_access(&inner.runtime, access);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// This module with warm instances: each instance serves call after
    /// call (up to `warm.max_calls`), keeping its memory between them, so
    /// that a tool can keep caches. Every call still runs under the
    /// module's fuel, time and memory limits, and an instance that trapped
    /// or hit a limit is replaced by a fresh one.
    ///
    /// This gives up isolation between calls: what one call leaves in the
    /// instance (data, state, a corrupted heap) is there for the next,
    /// which may come from another caller. Use it only for tools whose
    /// callers may share state.
    ///
    /// ```
    /// use toolhost::{Arguments, Limits, Runtime, Tool, Warm, WasmModule, bundled_module};
    ///
    /// let runtime = Runtime::new()?;
    /// let calc = bundled_module("calc").expect("calc is bundled");
    /// let calc = WasmModule::from_bytes(&runtime, "calc", calc, Limits::default())?
    ///     .with_warm(Warm { max_calls: 100 });
    /// assert_eq!(calc.warm(), Some(Warm { max_calls: 100 }));
    /// let arguments = Arguments::from_json(r#"{"expression": "1 + 1"}"#)?;
    /// assert_eq!(calc.call("calc_evaluate", &arguments)?, "2");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_warm(self, warm: Warm) -> Self {
        self.with_warmth(Some(warm))
    }

    /// This module with warm instances as `warm` says (see
    /// [`with_warm`](Self::with_warm)), or with a fresh instance for every
    /// call when it is `None`. Either way its instances start anew: none
    /// made before serves a call after this, as when the module is loaded
    /// for the first time.
    pub fn with_warmth(self, warm: Option<Warm>) -> Self {
        let mut inner = (*self.inner).clone();
        inner.target = inner.target.with_warmth(&inner.runtime, warm);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Whether calls reuse warm instances, and how (see
    /// [`with_warm`](Self::with_warm)); `None` when every call gets a fresh
    /// instance.
    pub fn warm(&self) -> Option<Warm> {
        self.inner.target.warm()
    }

    /// This module with sessions on: a call made in a session
    /// ([`ToolManager::session`](crate::ToolManager::session)) runs in that
    /// session's own instance, made on its first call and reused by its
    /// later calls (up to `max_calls` of them), so that state lives from
    /// call to call within the session, never across sessions; calls
    /// without a session still get a fresh instance (or a warm one). Every
    /// call runs under the module's whole limits; the instance is dropped
    /// after a call that trapped or hit a limit. The runtime's
    /// [`SessionLimits`](crate::SessionLimits) bound how many session
    /// instances are kept and for how long. Sessions made before this
    /// start anew.
    ///
    /// ```
    /// use toolhost::{Limits, Runtime, WasmModule, bundled_module};
    ///
    /// let runtime = Runtime::new()?;
    /// let calc = bundled_module("calc").expect("calc is bundled");
    /// let calc = WasmModule::from_bytes(&runtime, "calc", calc, Limits::default())?
    ///     .with_sessions(1000);
    /// assert_eq!(calc.sessions(), Some(1000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_sessions(self, max_calls: u64) -> Self {
        let mut inner = (*self.inner).clone();
        inner.target = inner.target.with_sessions(&inner.runtime, Some(max_calls));
        Self {
            inner: Arc::new(inner),
        }
    }

    /// This module with sessions off: a call in a session is a fresh call.
    pub fn without_sessions(self) -> Self {
        if self.inner.target.sessions().is_none() {
            return self;
        }
        let mut inner = (*self.inner).clone();
        inner.target = inner.target.with_sessions(&inner.runtime, None);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Whether calls in a session keep state (see
    /// [`with_sessions`](Self::with_sessions)): the calls one session
    /// instance serves at most, or `None` when sessions are off.
    pub fn sessions(&self) -> Option<u64> {
        self.inner.target.session_calls()
    }

    /// How many warm instances wait for calls (0 unless the module is warm).
    pub fn warm_instances(&self) -> usize {
        self.inner.target.idle_warm_instances()
    }

    /// What this module's calls may reach.
    pub fn access(&self) -> &Access {
        self.inner.target.access()
    }

    /// The module's name: the prefix of its exposed tool names.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The limits each call runs under.
    pub fn limits(&self) -> &Limits {
        self.inner.target.limits()
    }

    /// The exported functions of a component written for another host that
    /// are not offered as tools, and why (for example, one takes a
    /// resource); empty for a component of the `toolhost:tool` world.
    pub fn left_out(&self) -> &[LeftOut] {
        &self.inner.left_out
    }

    /// Whether the component is written for another host: it does not
    /// export `tool-info` and `call`, and each exported function is a tool
    /// typed from its WIT.
    pub fn typed_exports(&self) -> bool {
        self.inner.tools.iter().any(|t| t.typed.is_some())
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

    /// Whether calls take their instances from the runtime's instance pool
    /// ([`PoolConfig`](crate::PoolConfig)): `false` when the pool is off,
    /// or the component (or its `max_table_elements`) does not fit a slot.
    pub fn pooled(&self) -> bool {
        self.inner.target.pooled()
    }

    /// How many of this module's calls found the instance pool full and ran
    /// in an instance allocated on demand (always 0 when it is not
    /// [`pooled`](Self::pooled)).
    pub fn calls_off_the_pool(&self) -> u64 {
        self.inner.target.calls_off_the_pool()
    }

    /// How many fresh instances are ready for this module's next calls
    /// (made ahead, each for one call; see `[pool] ready_per_module`).
    pub fn ready_instances(&self) -> usize {
        self.inner.target.ready_count()
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

    /// The request for a call of exposed tool `name`, once the name and the
    /// size of the arguments are checked.
    fn request(&self, name: &str, arguments: &Arguments) -> Result<Request, ToolError> {
        let Some(tool) = self.find(name) else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("module '{}' has no tool '{name}'.", self.inner.name),
            ));
        };
        let max_args = self.inner.target.limits().max_args_bytes;
        if arguments.len() as u64 > max_args {
            return Err(ToolError::arguments_too_large(
                name,
                arguments.len(),
                max_args,
            ));
        }
        let Some(func) = &tool.typed else {
            return Ok(Request::Call {
                name: tool.local.clone(),
                arguments: arguments.shared_text(),
            });
        };
        let object = arguments.object()?;
        let max_text = to_usize(self.inner.target.limits().max_output_bytes);
        let limits = self.inner.target.limits();
        let memory_bytes = limits.memory_mib.saturating_mul(1024 * 1024);
        let params = func
            .arguments(&object, arguments.len(), memory_bytes)
            .map_err(|e| {
                let text = format!("tool '{name}' was given invalid arguments: {}", e.0);
                ToolError::new(ToolErrorKind::InvalidArguments, cut_text(text, max_text))
            })?;
        Ok(Request::Typed(TypedCall {
            export: func.export,
            interface: func.interface.clone(),
            name: Arc::clone(&func.name),
            params: params.into(),
            results: func.results(),
            render: typed::answer,
        }))
    }

    /// Runs `request` in a fresh sandbox, or in `session`'s instance when
    /// sessions are on, its stderr also handed to `stderr` if given; the
    /// answer, or the fault's text.
    async fn run(
        self,
        tool: String,
        request: Request,
        session: Option<SessionId>,
        stderr: Option<StderrListener>,
    ) -> Result<String, ToolError> {
        let inner = &self.inner;
        let started = Instant::now();
        let (report, dropped) = match (inner.target.sessions(), session) {
            (Some(sessions), Some(session)) => {
                let SessionCall { report, dropped } = sandbox::run_in_session(
                    inner.target.blueprint(),
                    sessions,
                    &session,
                    request,
                    stderr.as_ref(),
                )
                .await;
                (report, dropped)
            }
            _ => (
                sandbox::run(inner.target.clone(), request, stderr).await,
                false,
            ),
        };
        log_report(&inner.name, &tool, &report, started.elapsed());
        let http_problem = report.http_problem;
        let mut error = match report.result {
            Ok(Ok(text)) => return Ok(text),
            Ok(Err(text)) => ToolError::failed(&tool, &text),
            Err(fault) => fault_text::call_error(&tool, fault, inner.target.limits()),
        };
        if let Some(problem) = http_problem {
            error = error.with_note(&format!("toolhost refused HTTP: {problem}"));
        }
        if dropped {
            error = error.with_note(fault_text::SESSION_DROPPED);
        }
        Err(error)
    }
}

/// The tools of a component written for another host, and the functions
/// it leaves out.
fn typed_tools(discovered: typed::Discovered) -> (Vec<ModuleTool>, Vec<LeftOut>) {
    let tools = discovered
        .tools
        .into_iter()
        .map(|t| ModuleTool {
            local: t.local,
            info: t.info,
            typed: Some(t.func),
        })
        .collect();
    (tools, discovered.left_out)
}

/// Refuses a module whose instances' state alone would not fit its memory
/// limit (the state of each call's instances counts against it).
fn check_state(name: &str, state_bytes: u64, limits: &Limits) -> Result<(), LoadError> {
    if state_bytes <= limits.memory_bytes() as u64 {
        return Ok(());
    }
    Err(LoadError::new(
        name,
        LoadErrorKind::TooLarge,
        format!(
            "its instances would hold {state_bytes} bytes of host memory for their state \
             (globals, functions, imports), more than its memory limit of {} MiB \
             (limits.{}), which bounds that state and its linear memory together",
            limits.memory_mib,
            limit_key::memory_mib
        ),
    ))
}

impl Tool for WasmModule {
    fn infos(&self) -> Vec<ToolInfo> {
        self.inner.tools.iter().map(|t| t.info.clone()).collect()
    }

    fn max_arguments_bytes(&self) -> Option<u64> {
        Some(self.inner.target.limits().max_args_bytes)
    }

    fn time_limit(&self) -> Option<Duration> {
        Some(Duration::from_millis(self.inner.target.limits().timeout_ms))
    }

    fn call(&self, name: &str, arguments: &Arguments) -> Result<String, ToolError> {
        self.call_blocking(None, name, arguments)
    }

    fn call_async(self: Arc<Self>, name: String, arguments: Arguments) -> ToolFuture {
        self.call_future(None, name, arguments, None)
    }

    fn call_in_session(
        &self,
        session: &SessionId,
        name: &str,
        arguments: &Arguments,
    ) -> Result<String, ToolError> {
        self.call_blocking(Some(session.clone()), name, arguments)
    }

    fn call_in_session_async(
        self: Arc<Self>,
        session: SessionId,
        name: String,
        arguments: Arguments,
    ) -> ToolFuture {
        self.call_future(Some(session), name, arguments, None)
    }

    fn call_listened_async(
        self: Arc<Self>,
        session: Option<SessionId>,
        name: String,
        arguments: Arguments,
        stderr: StderrListener,
    ) -> ToolFuture {
        self.call_future(session, name, arguments, Some(stderr))
    }

    fn end_session(&self, session: &SessionId) {
        if let Some(sessions) = self.inner.target.sessions() {
            sessions.end(session);
        }
    }
}

impl WasmModule {
    /// A call of tool `name`, blocking this thread until it is done.
    fn call_blocking(
        &self,
        session: Option<SessionId>,
        name: &str,
        arguments: &Arguments,
    ) -> Result<String, ToolError> {
        let request = self.request(name, arguments)?;
        let clock = self.inner.runtime.clock();
        clock.block_on(self.clone().run(name.to_string(), request, session, None))
    }

    /// A call of tool `name`, as a future driven by the runtime's clock.
    fn call_future(
        &self,
        session: Option<SessionId>,
        name: String,
        arguments: Arguments,
        stderr: Option<StderrListener>,
    ) -> ToolFuture {
        let request = self.request(&name, &arguments);
        let module = self.clone();
        let clock = self.inner.runtime.clock();
        let run = clock.drive(async move { module.run(name, request?, session, stderr).await });
        Box::pin(run)
    }
}

impl std::fmt::Debug for WasmModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools: Vec<&str> = self
            .inner
            .tools
            .iter()
            .map(|t| t.info.name.as_str())
            .collect();
        f.debug_struct("WasmModule")
            .field("name", &self.inner.name)
            .field("tools", &tools)
            .field("limits", self.inner.target.limits())
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
        log_output(module, tool, stream, captured);
    }
}

/// Logs what a guest wrote to `stream`: one record per line, each marked
/// with the module and tool and with its control characters escaped, so
/// that no line can pass for one of toolhost's own.
fn log_output(module: &str, tool: &str, stream: &str, captured: &Captured) {
    if captured.bytes.is_empty() && captured.dropped == 0 {
        return;
    }
    let text = captured.text();
    for line in text.trim_end_matches('\n').split('\n') {
        tracing::info!(
            module,
            tool,
            stream,
            dropped_bytes = captured.dropped,
            "{}",
            crate::escape::escape_controls(line)
        );
    }
}

/// `text` (an error's text, which the answer shows after `Error: `) cut so
/// that the answer has at most `max` bytes, at a character boundary, saying
/// where and why.
fn cut_text(mut text: String, max: usize) -> String {
    const PREFIX: usize = "Error: ".len();
    if text.len() + PREFIX <= max {
        return text;
    }
    let note = format!(" [cut at {max} bytes: {}]", limit_key::max_output_bytes);
    text.truncate(text.floor_char_boundary(max.saturating_sub(PREFIX + note.len())));
    text.push_str(&note);
    text
}
