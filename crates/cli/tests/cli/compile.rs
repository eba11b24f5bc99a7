//! Compiling is bounded in time and memory, in a worker process (hardening
//! point 1): a component built to make the compiler run long or take
//! gigabytes fails to load, naming the limit, while the host stays small
//! and other modules load meanwhile.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolhost::{CompileWorker, Limits, LoadErrorKind, Runtime, WasmModule, bundled_module};
use toolhost_testkit::components::{
    core_module, costly_global, ok_result, slow_to_compile, tool_component,
};

/// A working component with `extra` in its core module.
fn component(extra: &str) -> Vec<u8> {
    let core = core_module("t", &ok_result("(i32.const 1024)", "(i32.const 2)"), extra);
    tool_component(&core, "utf8", 1)
}

fn worker_runtime() -> Runtime {
    let worker = CompileWorker::new(env!("CARGO_BIN_EXE_toolhost"), ["compile-worker"]);
    Runtime::builder().compile_worker(worker).build().unwrap()
}

#[test]
fn a_slow_compile_is_stopped_at_its_time_limit_while_others_load() {
    // 16,000 locals live across a loop: tens of seconds of register
    // allocation, stopped at 8 s.
    let bytes = component(&slow_to_compile(16_000));
    let limits = Limits {
        compile_timeout_ms: 8_000,
        ..Limits::default()
    };
    let runtime = worker_runtime();
    let started = Instant::now();
    let slow = {
        let runtime = runtime.clone();
        std::thread::spawn(move || WasmModule::from_bytes(&runtime, "slow", &bytes, limits))
    };
    // Meanwhile another module loads, not waiting for the slow one.
    let calc = WasmModule::from_bytes(
        &runtime,
        "calc",
        bundled_module("calc").unwrap(),
        Limits::default(),
    );
    let calc_took = started.elapsed();
    assert!(calc.is_ok());
    let err = slow.join().unwrap().unwrap_err();
    let slow_took = started.elapsed();
    assert_eq!(err.kind, LoadErrorKind::Compile);
    assert_eq!(
        err.reason,
        "compiling it took longer than its limit of 8000 ms (limits.compile_timeout_ms)"
    );
    assert!(slow_took >= Duration::from_millis(8_000));
    assert!(
        calc_took < Duration::from_millis(8_000),
        "calc waited for the slow compile: {calc_took:?}"
    );
}

#[test]
fn a_costly_compile_is_stopped_at_its_memory_limit_and_the_host_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    // A global adding a million constants: gigabytes to compile.
    std::fs::write(
        dir.path().join("costly.wasm"),
        component(&costly_global(1_000_000)),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[cache]\nenabled = false\n[limits]\ncompile_memory_mib = 400\n\
         [[modules]]\nname = \"costly\"\npath = \"costly.wasm\"\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .arg("check")
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak = 0;
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        peak = peak.max(toolhost_testkit::peak_resident_bytes(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(2));
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "toolhost hangs"
        );
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(
            "cannot load module 'costly': compiling it needed more memory than its limit of 400 MiB (limits.compile_memory_mib)"
        ),
        "{report}"
    );
    // The compiler's gigabytes were the worker's, never the host's.
    assert!(
        peak < 200 << 20,
        "toolhost itself peaked at {} MiB",
        peak >> 20
    );
}

#[test]
fn compile_errors_still_say_what_is_wrong() {
    let runtime = worker_runtime();
    let bytes = wat::parse_str(
        "(component (core module (func (export \"f\") (result i32) (i64.const 1))))",
    );
    let bytes = bytes.unwrap();
    let err = WasmModule::from_bytes(&runtime, "bad", &bytes, Limits::default()).unwrap_err();
    assert_eq!(err.kind, LoadErrorKind::Compile);
    assert!(
        err.reason.starts_with("it is not a valid component: "),
        "{err}"
    );
    assert!(Path::new(env!("CARGO_BIN_EXE_toolhost")).exists());
}

/// Loads the bundled calc module with `worker`.
fn load_calc_with(worker: CompileWorker) -> Result<WasmModule, toolhost::LoadError> {
    let runtime = Runtime::builder().compile_worker(worker).build().unwrap();
    WasmModule::from_bytes(
        &runtime,
        "calc",
        bundled_module("calc").unwrap(),
        Limits::default(),
    )
}

#[test]
fn a_debug_log_level_does_not_reach_or_break_the_worker() {
    // The README suggests TOOLHOST_LOG=debug to see calls; the worker
    // inherited it, and its megabytes of compiler log broke every compile.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolhost.toml"),
        "[cache]\nenabled = false\n[[modules]]\nbundled = \"calc\"\n[[modules]]\nbundled = \"text\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["call", "calc_evaluate", r#"{"expression": "6 * 7"}"#])
        .env("TOOLHOST_LOG", "debug")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "42",
        "{stderr}"
    );
    assert!(out.status.success(), "{stderr}");
}

#[test]
fn a_worker_that_writes_megabytes_to_stderr_is_drained_and_still_compiles() {
    // 8 MB of log lines (and one line of 1 MB without a newline in it)
    // before the real worker runs; like a program whose log writes must
    // not fail, it gives up if its stderr is closed.
    let script = "yes 'a line of the worker log' | head -c 8000000 >&2 || exit 9; \
                  head -c 1000000 /dev/zero | tr '\\0' x >&2 || exit 9; \
                  exec \"$0\" compile-worker \"$@\"";
    let worker = CompileWorker::new("sh", ["-c", script, env!("CARGO_BIN_EXE_toolhost")]);
    let calc = load_calc_with(worker).unwrap();
    let arguments = toolhost::Arguments::from_json(r#"{"expression": "1 + 2"}"#).unwrap();
    use toolhost::Tool;
    assert_eq!(calc.call("calc_evaluate", &arguments).unwrap(), "3");
}

#[test]
fn a_worker_killed_by_a_signal_is_reported_by_the_signal_not_as_memory() {
    for (signal, name) in [
        ("SEGV", "SIGSEGV"),
        ("KILL", "SIGKILL"),
        ("ABRT", "SIGABRT"),
    ] {
        let script = format!("echo 'some log line' >&2; kill -{signal} $$");
        let worker = CompileWorker::new("sh", ["-c", &script]);
        let err = load_calc_with(worker).unwrap_err();
        assert_eq!(err.kind, LoadErrorKind::Compile);
        let number = match signal {
            "SEGV" => 11,
            "KILL" => 9,
            _ => 6,
        };
        assert!(
            err.reason.starts_with(&format!(
                "the compile worker was killed by signal {number} ({name}) before it finished"
            )),
            "{err}"
        );
        assert!(!err.reason.contains("more memory"), "{err}");
    }
}

#[test]
fn a_worker_that_fails_says_its_exit_status_and_last_line() {
    let worker = CompileWorker::new(
        "sh",
        [
            "-c",
            "echo 'first line' >&2; echo 'the reason it gave' >&2; exit 3",
        ],
    );
    let err = load_calc_with(worker).unwrap_err();
    assert_eq!(
        err.reason,
        "it could not be compiled: the compile worker failed (exit status: 3): the reason it gave"
    );
}
