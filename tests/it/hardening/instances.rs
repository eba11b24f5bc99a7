//! The host memory of a call's instances is bounded by its memory limit
//! (point 2).

use toolhost::{Arguments, Limits, LoadErrorKind, Tool, WasmModule};
use toolhost_testkit::components::{core_module, ok_result, tool_component};

use crate::common::runtime;

/// A module whose core module has `globals` globals, instantiated `copies`
/// times per call.
fn many_globals(globals: usize, copies: usize, extra: &str) -> Vec<u8> {
    let declared: String = (0..globals).map(|_| "(global i32 (i32.const 7))").collect();
    let core = core_module(
        "t",
        &ok_result("(i32.const 1024)", "(i32.const 2)"),
        &format!("{declared} {extra}"),
    );
    tool_component(&core, "utf8", copies)
}

#[test]
fn instances_too_big_for_the_memory_limit_are_refused_at_load() {
    let limits = Limits {
        memory_mib: 16,
        ..Limits::default()
    };
    // 97 instances of a module with 200,000 globals: 310 MB of state.
    let bytes = many_globals(200_000, 97, "");
    let err = WasmModule::from_bytes(runtime(), "g", &bytes, limits).unwrap_err();
    assert_eq!(err.kind, LoadErrorKind::TooLarge);
    assert!(err.reason.starts_with("its instances would hold "), "{err}");
    assert!(
        err.reason
            .contains("more than its memory limit of 16 MiB (limits.memory_mib)"),
        "{err}"
    );
    // Three of them fit, and the state counts against linear memory.
    let bytes = many_globals(200_000, 3, "");
    let module = WasmModule::from_bytes(runtime(), "g", &bytes, limits).unwrap();
    assert_eq!(module.call("g_t", &Arguments::empty()).unwrap(), "[{");
}

#[test]
fn tables_count_against_the_memory_limit() {
    // A table of a million elements (8 MB in the host) with 4 MiB allowed.
    let limits = Limits {
        memory_mib: 4,
        max_table_elements: 10_000_000,
        ..Limits::default()
    };
    let bytes = many_globals(0, 1, "(table 1000000 funcref)");
    let err = WasmModule::from_bytes(runtime(), "tb", &bytes, limits).unwrap_err();
    assert_eq!(
        err.reason, "tool-info exceeded its memory limit of 4 MiB",
        "{err}"
    );
}

#[test]
fn the_deadline_covers_instantiation() {
    // A start function that never ends: instantiating is cut at the deadline.
    let limits = Limits {
        timeout_ms: 200,
        fuel: 1 << 40,
        tool_info_timeout_ms: 200,
        ..Limits::default()
    };
    let bytes = many_globals(0, 1, "(func $forever (loop $l (br $l))) (start $forever)");
    let err = WasmModule::from_bytes(runtime(), "s", &bytes, limits).unwrap_err();
    assert_eq!(
        err.reason,
        "tool-info exceeded its time limit of 200 ms (limits.tool_info_timeout_ms)"
    );
}

/// A module whose start function counts to 2^27 before the component can
/// answer anything: loading it (tool-info, under a minute) succeeds, while
/// a call's 10 ms cannot cover its instantiation on any machine.
fn slow_start(runtime: &toolhost::Runtime, name: &str) -> WasmModule {
    let spin = "(func $spin (local $i i32) \
                  (loop $l \
                    (local.set $i (i32.add (local.get $i) (i32.const 1))) \
                    (br_if $l (i32.ne (local.get $i) (i32.const 0x8000000))))) \
                (start $spin)";
    let limits = Limits {
        timeout_ms: 10,
        fuel: 1 << 40,
        tool_info_timeout_ms: 60_000,
        tool_info_fuel: 1 << 40,
        ..Limits::default()
    };
    WasmModule::from_bytes(runtime, name, &many_globals(0, 1, spin), limits)
        .expect("tool-info has time for the start function")
}

/// Instantiation runs under the call's deadline in every way a call gets
/// an instance: fresh, made ahead, warm and in a session. Each answers the
/// call's timeout text.
#[test]
fn the_deadline_covers_instantiation_in_every_path() {
    use toolhost::{PoolConfig, Runtime, ToolManager, Warm};
    let timeout = |name: &str| format!("Error: tool '{name}_t' exceeded its time limit of 10 ms.");
    let fresh_only = Runtime::builder()
        .pool(PoolConfig {
            ready_per_module: 0,
            ..PoolConfig::default()
        })
        .build()
        .expect("runtime starts");
    let fresh = slow_start(&fresh_only, "f");
    let made_ahead = slow_start(runtime(), "r");
    // Loading makes the first instance ahead (see `ready.rs`), and that
    // instantiation was cut at the call's deadline: none is ready.
    assert_eq!(made_ahead.ready_instances(), 0);
    let warm = slow_start(runtime(), "w").with_warm(Warm { max_calls: 10 });
    let session = slow_start(runtime(), "s").with_sessions(10);
    let mut manager = ToolManager::new();
    for module in [fresh, made_ahead, warm.clone(), session] {
        manager.register(module).expect("registers");
    }
    for name in ["f", "r", "w"] {
        for _ in 0..2 {
            let answer = manager.call_tool(&format!("{name}_t"), None);
            assert_eq!(answer.unwrap_err().to_string(), timeout(name));
        }
    }
    assert_eq!(warm.warm_instances(), 0, "no instance was kept");
    let conversation = manager.session();
    for _ in 0..2 {
        let answer = conversation.call_tool("s_t", None);
        assert_eq!(answer.unwrap_err().to_string(), timeout("s"));
    }
}
