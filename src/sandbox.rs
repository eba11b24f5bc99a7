//! One sandboxed call: a fresh store and instance under fuel, time and memory limits.
//!
//! Nothing survives a call: each gets a new [`Store`], a new instance, a WASI
//! context that grants only the module's [`Grants`] (by default no
//! directories, environment, network or stdin; stdout and stderr captured and
//! bounded), and the module's [`Limits`]. Whatever the guest does ends in a
//! [`Fault`] or a result.

use std::time::Duration;

use wasmtime::component::{InstancePre, ResourceTable};
use wasmtime::{ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder, Trap};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::capture::{Capture, Captured};
use crate::limits::to_usize;
use crate::network::NetworkPolicy;
use crate::runtime::{EPOCH_TICK, Runtime};
use crate::{DirMode, Grants, Limits, describe_error};

// Caps on what a guest can make the host allocate through WASI, set
// explicitly rather than left at wasmtime's defaults. Bytes copied from guest
// to host in one host call (wasmtime: 128 MiB) are capped by `hostcall_fuel`.

/// Component-model handles in one call (wasmtime: 100,000).
const MAX_COMPONENT_HANDLES: usize = 10_000;
/// WASI resources (streams, files, pollables) alive at once (wasmtime: 1,000,000).
const MAX_WASI_RESOURCES: usize = 10_000;
/// Bytes one `get-random-bytes` call may ask for (wasmtime: 64 MiB).
const MAX_RANDOM_BYTES: u64 = 1024 * 1024;

/// The per-call state a store holds.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
    network: NetworkPolicy,
    symlinks: bool,
}

impl CallState {
    /// Whether the module was granted `symlinks = true`.
    pub(crate) fn symlinks_allowed(&self) -> bool {
        self.symlinks
    }

    /// Whether the guest may look up host name `name`.
    pub(crate) fn may_look_up(&self, name: &str) -> bool {
        self.network.may_look_up(name)
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Limits the total linear memory of a call and remembers when it was hit.
struct MemoryLimiter {
    counts: StoreLimits,
    limit: usize,
    used: usize,
    exceeded: bool,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.used.saturating_sub(current).saturating_add(desired);
        if total > self.limit {
            self.exceeded = true;
            return Ok(false);
        }
        self.used = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.counts.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.counts.instances()
    }

    fn tables(&self) -> usize {
        self.counts.tables()
    }

    fn memories(&self) -> usize {
        self.counts.memories()
    }
}

/// Which export to run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Request<'a> {
    /// `tool-info()`.
    ToolInfo,
    /// `call(name, arguments)`.
    Call { name: &'a str, arguments: &'a str },
}

/// Why a call did not return normally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    OutOfFuel,
    Timeout,
    MemoryLimit,
    /// The answer has this many bytes, more than the limit; it was not copied.
    OutputTooLarge(usize),
    /// Another limit, by its config key (`max_instances`, `max_tables`, ...).
    ResourceLimit(&'static str),
    Panicked(String),
    Trapped(String),
    /// The host could not set up or run the call.
    Host(String),
}

/// The outcome of one call and what the guest printed.
#[derive(Debug)]
pub(crate) struct CallReport {
    /// The export's answer: `Ok` and `Err` are the guest's own.
    pub result: Result<Result<String, String>, Fault>,
    pub stdout: Captured,
    pub stderr: Captured,
}

/// What a call may reach: the module's grants, ready to use.
#[derive(Debug, Clone, Default)]
pub(crate) struct Access {
    pub grants: Grants,
    pub network: NetworkPolicy,
}

impl Access {
    /// The access `grants` give (already resolved).
    pub(crate) fn new(grants: Grants) -> Self {
        let network = NetworkPolicy::new(&grants.network);
        Self { grants, network }
    }
}

/// Runs `request` in a fresh instance of `pre` under `limits`.
pub(crate) fn run(
    runtime: &Runtime,
    pre: &InstancePre<CallState>,
    limits: &Limits,
    access: &Access,
    request: Request<'_>,
) -> CallReport {
    let captured = to_usize(limits.max_captured_bytes);
    let stdout = Capture::new(captured);
    let stderr = Capture::new(captured);
    let outputs = Outputs {
        stdout: &stdout,
        stderr: &stderr,
    };
    let result = run_in_store(runtime, pre, limits, access, request, outputs);
    let stderr = stderr.contents();
    let result = result.map_err(|fault| match fault {
        Fault::Trapped(message) => explain_trap(message, &stderr.text()),
        other => other,
    });
    CallReport {
        result,
        stdout: stdout.contents(),
        stderr,
    }
}

/// Where a call's stdout and stderr go.
#[derive(Clone, Copy)]
struct Outputs<'a> {
    stdout: &'a Capture,
    stderr: &'a Capture,
}

fn run_in_store(
    runtime: &Runtime,
    pre: &InstancePre<CallState>,
    limits: &Limits,
    access: &Access,
    request: Request<'_>,
    outputs: Outputs<'_>,
) -> Result<Result<String, String>, Fault> {
    let mut store = new_store(pre, limits, access, outputs)?;
    let timeout = Duration::from_millis(limits.timeout_ms);
    let max_bytes = to_usize(match request {
        Request::ToolInfo => limits.max_tool_info_bytes,
        Request::Call { .. } => limits.max_output_bytes,
    });
    let outcome = runtime.block_on(async {
        // The epoch deadline traps guest code that spins; this timeout also
        // ends a call that is blocked in a host function (a long sleep).
        let call = invoke(&mut store, pre, request, max_bytes);
        tokio::time::timeout(timeout + EPOCH_TICK, call).await
    });
    match outcome {
        Err(_elapsed) => Err(Fault::Timeout),
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => Err(classify(&error, store.data().limiter.exceeded)),
    }
}

/// The WASI context of one call: what the grants allow, and nothing else.
fn wasi_context(access: &Access, outputs: Outputs<'_>) -> Result<WasiCtx, Fault> {
    let grants = &access.grants;
    let mut builder = WasiCtxBuilder::new();
    builder
        .stdout(outputs.stdout.clone())
        .stderr(outputs.stderr.clone())
        .max_random_size(MAX_RANDOM_BYTES);
    access.network.configure(&mut builder);
    for (key, value) in &grants.env {
        builder.env(key, value);
    }
    for dir in &grants.dirs {
        let perms = match dir.mode {
            DirMode::Ro => FsPerms::ReadOnly,
            DirMode::Rw => FsPerms::ReadWrite,
        };
        builder
            .preopened_dir(&dir.host, &dir.guest, perms)
            .map_err(|e| {
                Fault::Host(format!(
                    "cannot open the granted directory {}: {}",
                    dir.host.display(),
                    describe_error(&e)
                ))
            })?;
    }
    Ok(builder.build())
}

fn new_store(
    pre: &InstancePre<CallState>,
    limits: &Limits,
    access: &Access,
    outputs: Outputs<'_>,
) -> Result<Store<CallState>, Fault> {
    let wasi = wasi_context(access, outputs)?;
    let mut table = ResourceTable::new();
    table.set_max_capacity(MAX_WASI_RESOURCES);
    let counts = StoreLimitsBuilder::new()
        .instances(to_usize(limits.max_instances))
        .tables(to_usize(limits.max_tables))
        .memories(to_usize(limits.max_memories))
        .table_elements(to_usize(limits.max_table_elements))
        .build();
    let state = CallState {
        wasi,
        table,
        limiter: MemoryLimiter {
            counts,
            limit: limits.memory_bytes(),
            used: 0,
            exceeded: false,
        },
        network: access.network.clone(),
        symlinks: access.grants.symlinks,
    };
    let mut store = Store::new(pre.engine(), state);
    store.limiter(|state| &mut state.limiter);
    store.set_hostcall_fuel(hostcall_fuel(limits));
    store.set_max_component_handles(MAX_COMPONENT_HANDLES);
    store
        .set_fuel(limits.fuel)
        .map_err(|e| Fault::Host(format!("cannot set fuel: {e}")))?;
    let ticks = limits
        .timeout_ms
        .div_ceil(EPOCH_TICK.as_millis() as u64)
        .max(1);
    store.set_epoch_deadline(ticks);
    store.epoch_deadline_trap();
    Ok(store)
}

/// The most bytes the guest may make the host copy in one host call, or in
/// lifting its answer: its memory limit, as no string or list it passes can
/// be bigger than its memory. A call can so make the host hold at most its
/// memory limit again, briefly (an oversized answer is copied, measured and
/// dropped; one large `write` to stdout is copied and cut to the capture).
fn hostcall_fuel(limits: &Limits) -> usize {
    limits.memory_bytes().max(1024 * 1024)
}

/// A call's answer: the guest's `ok` or `err` text, or why there is none.
type Outcome = Result<Result<String, String>, Fault>;

async fn invoke(
    store: &mut Store<CallState>,
    pre: &InstancePre<CallState>,
    request: Request<'_>,
    max_bytes: usize,
) -> wasmtime::Result<Outcome> {
    let instance = pre.instantiate_async(&mut *store).await?;
    match request {
        Request::ToolInfo => {
            let func = instance.get_typed_func::<(), (String,)>(&mut *store, "tool-info")?;
            let (info,) = func.call_async(&mut *store, ()).await?;
            Ok(check_size(info, max_bytes).map(Ok))
        }
        Request::Call { name, arguments } => {
            let func = instance
                .get_typed_func::<(&str, &str), (Result<String, String>,)>(&mut *store, "call")?;
            let (answer,) = func.call_async(&mut *store, (name, arguments)).await?;
            Ok(match answer {
                Ok(text) => check_size(text, max_bytes).map(Ok),
                Err(text) => Ok(Err(truncate(&text, max_bytes))),
            })
        }
    }
}

/// The answer, or its size if it is larger than `max_bytes`.
fn check_size(text: String, max_bytes: usize) -> Result<String, Fault> {
    if text.len() > max_bytes {
        return Err(Fault::OutputTooLarge(text.len()));
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

/// Names the cause of a failed call from the error and the limiter's record.
///
/// Running out of fuel or time is reported as such even if the guest had hit
/// the memory limit before and carried on; any other trap after a refused
/// memory growth (typically the allocator aborting) is the memory limit.
fn classify(error: &wasmtime::Error, memory_exceeded: bool) -> Fault {
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Fault::OutOfFuel,
        Some(Trap::Interrupt) => Fault::Timeout,
        _ if memory_exceeded => Fault::MemoryLimit,
        Some(trap) => {
            let text = trap.to_string();
            Fault::Trapped(
                text.strip_prefix("wasm trap: ")
                    .unwrap_or(&text)
                    .to_string(),
            )
        }
        None => {
            let text = describe_error(error);
            match resource_limit(&text) {
                Some(key) => Fault::ResourceLimit(key),
                None => Fault::Trapped(text),
            }
        }
    }
}

/// The limit named by one of wasmtime's instantiation errors, if it is one.
///
/// wasmtime reports these as plain errors (not traps), so their text is the
/// only way to tell them apart; anything unrecognised stays a trap message.
fn resource_limit(text: &str) -> Option<&'static str> {
    const KNOWN: [(&str, &str); 4] = [
        ("instance count too high", "max_instances"),
        ("table count too high", "max_tables"),
        ("memory count too high", "max_memories"),
        ("exceeds table limits", "max_table_elements"),
    ];
    KNOWN
        .iter()
        .find(|(needle, _)| text.contains(needle))
        .map(|(_, key)| *key)
}

/// Turns an `unreachable`-style trap into what the guest said on stderr: a
/// Rust panic message, with the uncaught Python exception that caused it
/// when the guest is a componentize-py module.
fn explain_trap(message: String, stderr: &str) -> Fault {
    let python = python_exception(stderr);
    match (panic_message(stderr), python) {
        (Some(panic), Some(exception)) => Fault::Panicked(format!("{panic}: {exception}")),
        (Some(panic), None) => Fault::Panicked(panic),
        (None, Some(exception)) => Fault::Trapped(format!("{message}: {exception}")),
        (None, None) => Fault::Trapped(message),
    }
}

/// The last uncaught Python exception on stderr (`ZeroDivisionError: ...`),
/// the line that ends a `Traceback (most recent call last):` block.
pub(crate) fn python_exception(stderr: &str) -> Option<String> {
    let start = stderr.rfind("Traceback (most recent call last):")?;
    stderr[start..]
        .lines()
        .skip(1)
        .find(|line| !line.is_empty() && !line.starts_with(' '))
        .map(|line| line.trim().to_string())
}

/// Extracts a Rust guest's panic message from its stderr.
///
/// Rust prints `thread '<name>' panicked at <file>:<line>:<col>:` followed by
/// the message and, usually, a `note: run with RUST_BACKTRACE=1` line.
pub(crate) fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.rfind("panicked at ")?;
    let after = &stderr[start..];
    let (_location, rest) = after.split_once('\n')?;
    let message: Vec<&str> = rest
        .lines()
        .take_while(|line| !line.starts_with("note: "))
        .collect();
    let message = message.join("\n").trim().to_string();
    Some(if message.is_empty() {
        "(no message)".to_string()
    } else {
        message
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_errors_are_cut_at_a_char_boundary() {
        assert_eq!(truncate("héllo", 2), "h... (6 bytes in all)");
        assert_eq!(truncate("abc", 5), "abc");
    }

    #[test]
    fn panic_messages_are_extracted() {
        let stderr = "\nthread '<unnamed>' panicked at src/lib.rs:10:5:\nboom: 42\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(panic_message(stderr).as_deref(), Some("boom: 42"));
        let multi = "thread 'main' panicked at a.rs:1:1:\nline one\nline two\n";
        assert_eq!(panic_message(multi).as_deref(), Some("line one\nline two"));
        assert_eq!(panic_message("just some output\n"), None);
    }

    #[test]
    fn python_exceptions_are_extracted() {
        let stderr = "Traceback (most recent call last):\n  File \"/0/app.py\", line 17, in call\n    x = 1 / 0\nZeroDivisionError: division by zero\n\nthread '<unnamed>' (1) panicked at runtime/src/lib.rs:1293:29:\nPython function threw an unexpected exception\n";
        assert_eq!(
            python_exception(stderr).as_deref(),
            Some("ZeroDivisionError: division by zero")
        );
        assert_eq!(
            explain_trap("unreachable".into(), stderr),
            Fault::Panicked("Python function threw an unexpected exception: ZeroDivisionError: division by zero".into())
        );
        assert_eq!(
            explain_trap("unreachable".into(), ""),
            Fault::Trapped("unreachable".into())
        );
    }
}
