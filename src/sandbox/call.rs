//! One sandboxed call: a fresh store and instance (made ahead of the call
//! when one is ready), the export run under the call's limits, and what came
//! of it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Store;
use wasmtime::component::{Component, ComponentExportIndex, Instance, InstancePre, Val};

use super::capture::{Capture, Captured};
use super::deadline::Deadline;
use super::fault::{Fault, classify};
use super::guest_stderr::name_the_cause;
use super::http::HttpClient;
use super::overflow::{Overflow, pool_was_full};
use super::ready::{Disposal, Prepared, ReadyInstances};
use super::resolver::NameResolver;
use super::sessions::ModuleSessions;
use super::state::CallState;
use super::store::new_store;
use super::warm::{self, WarmInstances};
use super::wasi_context::Outputs;
use crate::engine::EPOCH_TICK;
use crate::policy::{Access, Limits, to_usize};

/// What every call of one module needs, prepared once at load.
#[derive(Clone)]
pub(crate) struct Target {
    /// The module's name (for logs).
    pub module: Arc<str>,
    /// The component, linked and ready to instantiate.
    pub pre: InstancePre<CallState>,
    /// Where its exports are, looked up once.
    pub exports: Exports,
    /// Where calls go when `pre`'s instance pool is full (`None` when `pre`
    /// allocates on demand).
    pub overflow: Option<Arc<Overflow>>,
    /// Instances of `pre` made ahead of calls (`None` when that is off,
    /// or the module is warm).
    pub ready: Option<Arc<ReadyInstances>>,
    /// The long-lived instances of a warm module (`None`: every call gets
    /// a fresh instance).
    pub warm: Option<Arc<WarmInstances>>,
    /// The instances of its sessions (`None`: sessions are off, and a call
    /// in a session is a fresh call).
    pub sessions: Option<ModuleSessions>,
    /// Where used stores are dropped.
    pub disposal: Arc<Disposal>,
    /// The limits of each call.
    pub limits: Limits,
    /// What each call may reach.
    pub access: Arc<Access>,
    /// Whether the component's strings are UTF-16 or latin1, which grow (up
    /// to twice) when the host converts them to UTF-8.
    pub transcodes: bool,
    /// Whether its instances made ahead are primed (see
    /// [`ReadyInstances`]): it carries an interpreter that sets itself up
    /// on its first export call.
    pub prime_ready: bool,
    /// Host memory the call's instances hold for their state (estimated at
    /// load); it counts against the memory limit with linear memory.
    pub state_bytes: usize,
    /// Looks up the host names of the module's network grant.
    pub resolver: NameResolver,
    /// The TLS configuration of its HTTP requests (`None`: no HTTP grant).
    pub http: Option<Arc<HttpClient>>,
}

impl Target {
    /// The most bytes the guest may make the host copy in one host call, or
    /// in lifting its answer, so that the host never holds more than the
    /// call's memory limit (at least 1 MiB) for it: the memory limit, or
    /// half of it for strings that grow when converted to UTF-8.
    pub(crate) fn host_copy_bytes(&self) -> usize {
        let limit = self.limits.memory_bytes().max(1024 * 1024);
        if self.transcodes { limit / 2 } else { limit }
    }
}

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

/// A call's answer: the guest's `ok` or `err` text, or why there is none.
pub(crate) type Outcome = Result<Result<String, String>, Fault>;

/// The outcome of one call and what the guest printed.
#[derive(Debug)]
pub(crate) struct CallReport {
    /// The export's answer: `Ok` and `Err` are the guest's own.
    pub result: Outcome,
    pub stdout: Captured,
    pub stderr: Captured,
    /// The first HTTP request the host refused (a denial or a limit), for
    /// the text of a call that ended in an error.
    pub http_problem: Option<String>,
}

/// What the store saw besides the outcome: whether a memory growth was
/// refused, and the first HTTP problem.
#[derive(Debug, Default)]
pub(super) struct Seen {
    pub memory_refused: bool,
    pub http_problem: Option<String>,
}

/// Runs `request` in a fresh instance of `pre` under `limits`, reaching
/// what `access` allows: one made ahead if a call finds one ready, else one
/// made now; or, for a warm module, in one of its long-lived instances.
///
/// The future owns everything it uses, so that it can be polled anywhere;
/// dropping it ends the call (and drops its instance) at once.
pub(crate) async fn run(target: Target, request: Request) -> CallReport {
    if let (false, Some(instances)) = (matches!(request, Request::ToolInfo), &target.warm) {
        return warm::run(&target, instances, request).await;
    }
    let ready = match &request {
        Request::Call { .. } | Request::Typed(_) => target.ready.clone(),
        Request::ToolInfo => None,
    };
    let prepared = ready.as_ref().and_then(|r| r.take());
    let took_one = prepared.is_some();
    let report = match prepared {
        Some(prepared) => run_prepared(&target, prepared, request).await,
        None => run_fresh(&target, request).await,
    };
    // After the call, so that the store it used is dropped first and its
    // slot, still warm, goes to the next instance.
    if let Some(ready) = ready {
        ready.refill(&target, took_one);
    }
    report
}

/// The call run in an instance made for it now.
pub(super) async fn run_fresh(target: &Target, request: Request) -> CallReport {
    let captured = to_usize(target.limits.max_captured_bytes);
    let stdout = Capture::new(captured);
    let stderr = Capture::new(captured);
    let outputs = Outputs {
        stdout: &stdout,
        stderr: &stderr,
    };
    let (result, seen) = run_in_store(target, request, outputs).await;
    report(result, seen, &stdout, &stderr)
}

/// The call run in an instance made ahead of it.
async fn run_prepared(target: &Target, prepared: Prepared, request: Request) -> CallReport {
    let Prepared {
        mut store,
        instance,
        stdout,
        stderr,
        deadline,
        held,
        ..
    } = prepared;
    let linked = (&instance, target.exports);
    let (outcome, seen) = run_on(target, &mut store, linked, &deadline, request).await;
    target.disposal.dispose(store, Some(held));
    report(outcome, seen, &stdout, &stderr)
}

/// Runs `request` on `instance` (in `store`, made before the call, with
/// `exports`) with the call's whole time from now: the outcome, and what
/// the store saw on the way.
pub(super) async fn run_on(
    target: &Target,
    store: &mut Store<CallState>,
    (instance, exports): (&Instance, Exports),
    deadline: &Deadline,
    request: Request,
) -> (Outcome, Seen) {
    let timeout = Duration::from_millis(target.limits.timeout_ms);
    deadline.restart(timeout);
    store.data().http.begin_call();
    store.set_epoch_deadline(1);
    let max_bytes = max_bytes(&target.limits, &request);
    let call = call_export(store, instance, exports, request, max_bytes);
    let outcome = match tokio::time::timeout(timeout + EPOCH_TICK, call).await {
        Err(_elapsed) => Err(Fault::Timeout),
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => Err(classify(&error, target)),
    };
    settle(store, outcome)
}

/// The report of a call with `result`, naming the cause of a fault from
/// what the guest wrote to stderr.
pub(super) fn report(
    result: Outcome,
    seen: Seen,
    stdout: &Capture,
    stderr: &Capture,
) -> CallReport {
    let stderr = stderr.contents();
    let result = result.map_err(|fault| name_the_cause(fault, &stderr.text(), seen.memory_refused));
    CallReport {
        result,
        stdout: stdout.contents(),
        stderr,
        http_problem: seen.http_problem,
    }
}

/// The outcome, and what the store saw on the way.
async fn run_in_store(target: &Target, request: Request, outputs: Outputs<'_>) -> (Outcome, Seen) {
    match run_with(
        target,
        (&target.pre, target.exports),
        request.clone(),
        outputs,
    )
    .await
    {
        Attempt::PoolFull => {}
        Attempt::Done(outcome, seen) => return (outcome, seen),
    }
    // No guest code ran: the pool refused the instance (or its stack)
    // first. Start again with an instance of our own.
    let linked = match target.overflow.as_deref().map(Overflow::pre) {
        Some(Ok(linked)) => linked,
        Some(Err(fault)) => return (Err(fault), Seen::default()),
        None => {
            return (
                Err(Fault::Host("the instance pool is full".into())),
                Seen::default(),
            );
        }
    };
    match run_with(target, linked, request, outputs).await {
        Attempt::Done(outcome, seen) => (outcome, seen),
        Attempt::PoolFull => (
            Err(Fault::Host("the instance pool is full".into())),
            Seen::default(),
        ),
    }
}

/// How one attempt at a call ended.
enum Attempt {
    /// With this outcome, and what the store saw.
    Done(Outcome, Seen),
    /// Before it started: the instance pool had no room.
    PoolFull,
}

/// The call run in a fresh store and instance of `pre`, whose exports are
/// `exports`.
async fn run_with(
    target: &Target,
    (pre, exports): (&InstancePre<CallState>, Exports),
    request: Request,
    outputs: Outputs<'_>,
) -> Attempt {
    let limits = &target.limits;
    let timeout = Duration::from_millis(limits.timeout_ms);
    let deadline = Deadline::after(timeout);
    let mut store = match new_store(target, pre.engine(), outputs, &deadline) {
        Ok(store) => store,
        Err(fault) => return Attempt::Done(Err(fault), Seen::default()),
    };
    let max_bytes = max_bytes(limits, &request);
    // The epoch deadline traps guest code that spins; this timeout also
    // ends a call that is blocked in a host function (a long sleep).
    let call = invoke(&mut store, pre, exports, request, max_bytes);
    let outcome = match tokio::time::timeout(timeout + EPOCH_TICK, call).await {
        Err(_elapsed) => Err(Fault::Timeout),
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) if pool_was_full(&error) && target.overflow.is_some() => {
            return Attempt::PoolFull;
        }
        Ok(Err(error)) => Err(classify(&error, target)),
    };
    let (outcome, seen) = settle(&store, outcome);
    target.disposal.dispose(store, None);
    Attempt::Done(outcome, seen)
}

/// The most bytes `request`'s answer may have.
fn max_bytes(limits: &Limits, request: &Request) -> usize {
    to_usize(match request {
        Request::ToolInfo => limits.max_tool_info_bytes,
        Request::Call { .. } | Request::Typed(_) => limits.max_output_bytes,
    })
}

/// `outcome` as the limits saw it, and what the store saw.
fn settle(store: &Store<CallState>, outcome: Outcome) -> (Outcome, Seen) {
    let limiter = &store.data().limiter;
    // A table refused for the memory it would take hit the memory limit,
    // whatever wasmtime's text says.
    let outcome = match outcome {
        Err(Fault::ResourceLimit("max_table_elements")) if limiter.table_refused() => {
            Err(Fault::MemoryLimit)
        }
        other => other,
    };
    let seen = Seen {
        memory_refused: limiter.exceeded(),
        http_problem: store.data().http.problem(),
    };
    (outcome, seen)
}

/// Instantiates `pre` in `store` and runs `request`.
async fn invoke(
    store: &mut Store<CallState>,
    pre: &InstancePre<CallState>,
    exports: Exports,
    request: Request,
    max_bytes: usize,
) -> wasmtime::Result<Outcome> {
    let instance = pre.instantiate_async(&mut *store).await?;
    call_export(store, &instance, exports, request, max_bytes).await
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
