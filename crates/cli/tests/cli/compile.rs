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
