//! Shared fixtures: the runtime, the bundled manager and the test guests.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};
use toolhost::{Limits, Runtime, ToolManager, WasmModule, config::LoadedConfig};

/// The test guests under `tests/guests/`, built once per test run.
const TEST_GUESTS: &[&str] = &[
    "guest-hostile",
    "guest-info-trap",
    "guest-info-spin",
    "guest-info-bad-json",
    "guest-info-bad-name",
    "guest-info-duplicate",
    "guest-info-many",
    "guest-unknown-import",
    "guest-extra-export",
    "guest-wrong-world",
    "guest-wrong-signature",
];

/// One runtime for the whole test binary, as an application would have.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new().expect("runtime starts"))
}

/// A manager with the bundled example modules (compiled once, copied per test).
pub fn bundled_manager() -> ToolManager {
    static MANAGER: OnceLock<ToolManager> = OnceLock::new();
    MANAGER
        .get_or_init(|| {
            LoadedConfig::default()
                .build_manager(runtime())
                .expect("bundled modules load")
        })
        .copy()
}

/// The directory the guest components are built into (beside the bundled ones).
fn guest_dir() -> PathBuf {
    PathBuf::from(env!("TOOLHOST_GUEST_DIR"))
}

/// The path of test guest `package` (e.g. `guest-hostile`), building the test guests on first use.
pub fn guest(package: &str) -> PathBuf {
    static BUILT: Mutex<bool> = Mutex::new(false);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !*built {
        build_test_guests();
        *built = true;
    }
    guest_dir().join(format!("{}.wasm", package.replace('-', "_")))
}

fn build_test_guests() {
    let dir = guest_dir();
    // <target>/guests/wasm32-wasip2/guest -> <target>/guests
    let target_dir = dir
        .parent()
        .and_then(Path::parent)
        .expect("guest dir has two parents");
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let mut command = Command::new(cargo);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "build",
            "--profile",
            "guest",
            "--target",
            "wasm32-wasip2",
            "--target-dir",
        ])
        .arg(target_dir);
    for package in TEST_GUESTS {
        command.args(["-p", package]);
    }
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        command.env_remove(var);
    }
    let status = command.status().expect("cargo runs");
    assert!(
        status.success(),
        "building the test guests failed: {status}"
    );
}

/// Loads test guest `package` as module `name` with `limits`.
pub fn load_guest(
    package: &str,
    name: &str,
    limits: Limits,
) -> Result<WasmModule, toolhost::LoadError> {
    WasmModule::from_file(runtime(), &guest(package), Some(name), limits)
}

/// Limits small enough that hostile calls end quickly.
pub fn tight_limits() -> Limits {
    Limits {
        fuel: 200_000_000,
        timeout_ms: 2_000,
        memory_mib: 32,
        max_output_bytes: 64 * 1024,
        ..Limits::default()
    }
}

/// The hostile guest, loaded once with [`tight_limits`], as module `h`.
pub fn hostile() -> WasmModule {
    static MODULE: OnceLock<WasmModule> = OnceLock::new();
    MODULE
        .get_or_init(|| {
            load_guest("guest-hostile", "h", tight_limits()).expect("hostile guest loads")
        })
        .clone()
}

/// A manager with the hostile guest registered as module `h`.
pub fn hostile_manager() -> ToolManager {
    let mut manager = ToolManager::new();
    manager.register(hostile()).expect("registers");
    manager
}

/// An OpenAI tool call.
pub fn tool_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// Calls `name` with `arguments` (an object) through the manager's dispatch.
pub fn call(manager: &ToolManager, name: &str, arguments: Value) -> String {
    manager.call(&tool_call(
        "call_1",
        name,
        Value::String(arguments.to_string()),
    ))
}

thread_local! {
    /// What `tracing` logged on this thread (see [`logs_of`]).
    static THREAD_LOGS: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Writes log lines into the logging thread's [`THREAD_LOGS`].
struct ThreadLogs;

impl Write for ThreadLogs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        THREAD_LOGS.with(|logs| logs.borrow_mut().extend_from_slice(bytes));
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Collects what `tracing` logs on this thread while `f` runs.
///
/// One global subscriber writes every event into a buffer of the thread that
/// logged it (calls log on the calling thread). A per-thread subscriber
/// (`with_default`) would race with tracing's global callsite cache when
/// tests run in parallel, and miss events now and then.
pub fn logs_of<T>(f: impl FnOnce() -> T) -> (T, String) {
    static GLOBAL: OnceLock<()> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(|| ThreadLogs)
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber");
    });
    THREAD_LOGS.with(|logs| logs.borrow_mut().clear());
    let value = f();
    let bytes = THREAD_LOGS.with(|logs| std::mem::take(&mut *logs.borrow_mut()));
    (value, String::from_utf8(bytes).unwrap())
}
