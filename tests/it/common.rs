//! Shared fixtures: the runtime, the bundled manager and the test guests.

use std::io::Write;
use std::sync::OnceLock;

use serde_json::{Value, json};
use toolhost::http::{AllowEntry, HttpGrant};
use toolhost::{Grants, Limits, Runtime, ToolManager, WasmModule, config::LoadedConfig};
pub use toolhost_testkit::guest;

/// One runtime for the whole test binary, as an application would have.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new().expect("runtime starts"))
}

/// One runtime for the tests of components built from Python and
/// JavaScript (tens of megabytes each, seconds to compile), with a compile
/// cache of its own: each such component is compiled once per test run and
/// read from the cache by the other tests that load it. The cache is
/// emptied when the runtime starts, so every run compiles afresh; what the
/// cache itself does is tested in `cache.rs` and `hardening/cache.rs`.
pub fn caching_runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("it-compile-cache");
        if dir.exists() {
            std::fs::remove_dir_all(&dir).expect("the last run's compile cache is removed");
        }
        Runtime::with_cache_dir(&dir).expect("runtime starts")
    })
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

/// An HTTP grant of exactly the origins (and prefixes) `allow`.
pub fn allow_only(allow: &[String]) -> HttpGrant {
    HttpGrant {
        allow: allow.iter().cloned().map(AllowEntry::Url).collect(),
        ..HttpGrant::default()
    }
}

/// A manager with `module` alone, granted `http` (and nothing else).
pub fn with_http(module: WasmModule, http: HttpGrant) -> ToolManager {
    let grants = Grants {
        http,
        ..Grants::default()
    };
    let access = grants
        .resolve(std::path::Path::new("."))
        .expect("grants resolve");
    let mut manager = ToolManager::new();
    manager.register(module.with_access(access)).unwrap();
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

/// A session of `manager` whose instance of `module` (made by `first`, the
/// session's first call, answered `answer`) sits in the instance pool: a
/// session whose instance was made on demand, because the slot was still
/// held by a store being dropped in the background, is ended and another
/// tried.
pub fn session_in_the_pool<'m>(
    runtime: &Runtime,
    manager: &'m ToolManager,
    module: &WasmModule,
    first: &Value,
    answer: &str,
) -> toolhost::Session<'m> {
    for _ in 0..200 {
        let before = module.calls_off_the_pool();
        let session = manager.session();
        assert_eq!(session.call(first), answer);
        if module.calls_off_the_pool() == before {
            return session;
        }
        session.end();
        runtime.on_idle();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the pool's slot was never free");
}
