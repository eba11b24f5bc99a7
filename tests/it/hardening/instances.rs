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
