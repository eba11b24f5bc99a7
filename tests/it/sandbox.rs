//! Sandboxed calls: every trap becomes its error string, and the module serves
//! the next call correctly.

use serde_json::json;
use toolhost::{Limits, Tool, ToolErrorKind, ToolManager};

use crate::common::{call, hostile_manager, load_guest, tight_limits};

/// Calls `tool`, checks the answer, then checks a benign call still works.
fn assert_then_recovers(
    manager: &ToolManager,
    tool: &str,
    arguments: serde_json::Value,
    expected: &str,
) {
    let out = call(manager, tool, arguments);
    assert_eq!(out, expected, "calling {tool}");
    assert_eq!(
        call(manager, "h_add", json!({"a": 2, "b": 3})),
        "5",
        "after {tool}"
    );
}

#[test]
fn infinite_loop_runs_out_of_fuel() {
    let m = hostile_manager();
    assert_then_recovers(
        &m,
        "h_spin",
        json!({}),
        "Error: tool 'h_spin' ran out of fuel (limit 200000000).",
    );
}

#[test]
fn spinning_past_the_deadline_is_a_timeout() {
    let limits = Limits {
        fuel: 1 << 40,
        timeout_ms: 300,
        ..tight_limits()
    };
    let module = load_guest("guest-hostile", "slow", limits).unwrap();
    let mut m = ToolManager::new();
    m.register(module).unwrap();
    let out = call(&m, "slow_spin", json!({}));
    assert_eq!(
        out,
        "Error: tool 'slow_spin' exceeded its time limit of 300 ms."
    );
    // Spinning on WASI calls (clock, randomness) is stopped the same way.
    let out = call(&m, "slow_spin_wasi", json!({}));
    assert_eq!(
        out,
        "Error: tool 'slow_spin_wasi' exceeded its time limit of 300 ms."
    );
    assert_eq!(call(&m, "slow_add", json!({"a": 1, "b": 1})), "2");
}

#[test]
fn a_long_sleep_in_the_host_is_a_timeout() {
    let m = hostile_manager();
    assert_then_recovers(
        &m,
        "h_sleep",
        json!({"ms": 3_600_000}),
        "Error: tool 'h_sleep' exceeded its time limit of 2000 ms.",
    );
    // A short sleep is fine.
    assert_eq!(call(&m, "h_sleep", json!({"ms": 10})), "woke up");
}

#[test]
fn memory_bomb_hits_the_memory_limit() {
    let m = hostile_manager();
    assert_then_recovers(
        &m,
        "h_membomb",
        json!({}),
        "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB.",
    );
    let out = call(&m, "h_allocate", json!({"bytes": 100 * 1024 * 1024}));
    assert_eq!(
        out,
        "Error: tool 'h_allocate' exceeded its memory limit of 32 MiB."
    );
    assert_eq!(
        call(&m, "h_allocate", json!({"bytes": 1024 * 1024})),
        "allocated 1048576"
    );
}

#[test]
fn panic_message_comes_from_stderr() {
    let m = hostile_manager();
    assert_then_recovers(
        &m,
        "h_panic",
        json!({"text": "the tool gave up: 42"}),
        "Error: tool 'h_panic' panicked: the tool gave up: 42",
    );
}

#[test]
fn traps_are_named_without_a_backtrace() {
    let m = hostile_manager();
    assert_then_recovers(
        &m,
        "h_trap",
        json!({}),
        "Error: tool 'h_trap' trapped: wasm `unreachable` instruction executed",
    );
    assert_then_recovers(
        &m,
        "h_recurse",
        json!({}),
        "Error: tool 'h_recurse' trapped: call stack exhausted",
    );
}

#[test]
fn a_tools_own_error_is_failed() {
    let m = hostile_manager();
    assert_then_recovers(
        &m,
        "h_fail",
        json!({"text": "no such city"}),
        "Error: tool 'h_fail' failed: no such city",
    );
    let err = m
        .call_tool("h_fail", Some(&json!({"text": "x"})))
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed);
}

#[test]
fn arguments_of_the_wrong_type_name_the_field() {
    let m = hostile_manager();
    let out = call(&m, "h_add", json!({"a": "two", "b": 3}));
    assert_eq!(
        out,
        "Error: tool 'h_add' failed: invalid arguments: field 'a': invalid type: string \"two\", expected i64; \
         'a' must match {\"type\":\"integer\",\"format\":\"int64\"}"
    );
}

#[test]
fn results_over_the_output_limit_are_refused_with_both_sizes() {
    let m = hostile_manager();
    assert_then_recovers(
        &m,
        "h_big_output",
        json!({"bytes": 100_000}),
        "Error: tool 'h_big_output' returned 100000 bytes, more than its output limit of 65536 bytes.",
    );
    assert_eq!(call(&m, "h_big_output", json!({"bytes": 3})), "xxx");
}

#[test]
fn nothing_survives_between_calls() {
    let m = hostile_manager();
    // A static counter and a static mut start fresh in every call.
    for _ in 0..3 {
        assert_eq!(call(&m, "h_counter", json!({})), "1 1");
    }
}

#[test]
fn no_environment_and_no_files_by_default() {
    let m = hostile_manager();
    // SAFETY: tests set this variable only here, and the guest never sees it.
    unsafe { std::env::set_var("TOOLHOST_TEST_SECRET", "hunter2") };
    assert_eq!(call(&m, "h_env", json!({})), "0 vars: ");
    let out = call(&m, "h_read_file", json!({"text": "/etc/passwd"}));
    assert!(
        out.starts_with("Error: tool 'h_read_file' failed: "),
        "{out}"
    );
    assert!(!out.contains("root:"), "{out}");
}

#[test]
fn output_floods_are_bounded_and_harmless() {
    let m = hostile_manager();
    let out = call(&m, "h_stderr_flood", json!({"bytes": 5_000_000}));
    assert!(out.starts_with("wrote "), "{out}");
    assert_eq!(call(&m, "h_print", json!({"text": "hello"})), "printed");
}

#[test]
fn fuel_covers_instantiation_too() {
    // Too little fuel even to start the instance is reported, not a panic.
    let module = load_guest("guest-hostile", "poor", Limits::default()).unwrap();
    let poor = load_guest(
        "guest-hostile",
        "poor",
        Limits {
            tool_info_fuel: 1_000,
            ..Limits::default()
        },
    );
    let err = poor.unwrap_err();
    assert!(
        err.to_string()
            .contains("tool-info ran out of fuel (limit 1000, limits.tool_info_fuel)"),
        "{err}"
    );
    assert!(
        module
            .call(
                "poor_add",
                &toolhost::Arguments::from_json(r#"{"a": 1, "b": 2}"#).unwrap()
            )
            .is_ok()
    );
    // Call fuel and tool-info fuel are separate limits.
    let starved = load_guest(
        "guest-hostile",
        "starved",
        Limits {
            fuel: 1_000,
            ..Limits::default()
        },
    )
    .expect("tool-info has its own fuel");
    let err = starved
        .call(
            "starved_add",
            &toolhost::Arguments::from_json(r#"{"a": 1, "b": 2}"#).unwrap(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Error: tool 'starved_add' ran out of fuel (limit 1000)."
    );
}

#[test]
fn wasi_allocations_are_capped() {
    let m = hostile_manager();
    assert_eq!(
        call(&m, "h_random", json!({"bytes": 1024})),
        "got 1024 random bytes"
    );
    // More than MAX_RANDOM_BYTES in one call traps instead of allocating.
    let out = call(&m, "h_random", json!({"bytes": 2 * 1024 * 1024}));
    assert_eq!(
        out,
        "Error: tool 'h_random' trapped: requested len 2097152 exceeds limit 1048576"
    );
    assert_eq!(call(&m, "h_add", json!({"a": 1, "b": 1})), "2");
    // One write bigger than the output capture is copied (at most the guest's
    // memory, the hostcall fuel) and refused by the stream, not kept.
    assert_eq!(
        call(&m, "h_big_write", json!({"bytes": 4 * 1024 * 1024})),
        "written"
    );
    assert_eq!(call(&m, "h_big_write", json!({"bytes": 1000})), "written");
}
