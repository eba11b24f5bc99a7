//! Limits: each per-call and per-load limit is enforced, with an error that names it.

use serde_json::{Value, json};
use toolhost::{Arguments, Limits, LoadErrorKind, Tool, ToolErrorKind, WasmModule};

use crate::common::{guest, load_guest, logs_of, runtime};

fn args(value: Value) -> Arguments {
    Arguments::from_object(value.as_object().expect("an object"))
}

fn hostile_with(name: &str, limits: Limits) -> WasmModule {
    load_guest("guest-hostile", name, limits).expect("loads")
}

#[test]
fn instance_table_and_memory_counts() {
    for (limits, says) in [
        (
            Limits {
                max_instances: 1,
                ..Limits::default()
            },
            "tool-info exceeded the limit max_instances = 1",
        ),
        (
            Limits {
                max_tables: 1,
                ..Limits::default()
            },
            "tool-info exceeded the limit max_tables = 1",
        ),
        (
            Limits {
                max_table_elements: 10,
                ..Limits::default()
            },
            "tool-info exceeded the limit max_table_elements = 10",
        ),
    ] {
        let err = load_guest("guest-hostile", "h", limits).unwrap_err();
        assert_eq!(err.kind, LoadErrorKind::ToolInfoFailed);
        assert_eq!(err.reason, says);
    }
    // One memory is enough for this guest; the default counts are enough for all.
    let one = hostile_with(
        "h",
        Limits {
            max_memories: 1,
            ..Limits::default()
        },
    );
    assert_eq!(
        one.call("h_add", &args(json!({"a": 1, "b": 2}))).unwrap(),
        "3"
    );
}

#[test]
fn the_wasm_stack_is_a_per_module_limit() {
    let small = hostile_with("small", Limits::default());
    let big = hostile_with(
        "big",
        Limits {
            max_stack_kib: 8192,
            ..Limits::default()
        },
    );
    let deep = args(json!({"depth": 10_000}));
    let err = small.call("small_recurse_to", &deep).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Trapped);
    assert_eq!(
        err.to_string(),
        "Error: tool 'small_recurse_to' trapped: call stack exhausted"
    );
    assert_eq!(
        big.call("big_recurse_to", &deep).unwrap(),
        "returned 50005001"
    );
    // The small module is unaffected by the big one sharing the runtime.
    let shallow = args(json!({"depth": 100}));
    assert_eq!(
        small.call("small_recurse_to", &shallow).unwrap(),
        "returned 5051"
    );
}

#[test]
fn arguments_over_the_limit_are_refused_before_the_call() {
    let m = hostile_with(
        "h",
        Limits {
            max_args_bytes: 100,
            ..Limits::default()
        },
    );
    let long = args(json!({"text": "x".repeat(200)}));
    let err = m.call("h_echo", &long).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(
        err.to_string(),
        "Error: tool 'h_echo' was given 211 bytes of arguments, more than its limit of 100 bytes."
    );
    assert_eq!(
        m.call("h_echo", &args(json!({"text": "hi"}))).unwrap(),
        "hi"
    );
}

#[test]
fn results_of_hundreds_of_megabytes() {
    // Within the default 64 MiB of memory, such a result cannot even be built.
    let m = hostile_with("h", Limits::default());
    let err = m
        .call("h_big_output", &args(json!({"bytes": 300_000_000})))
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::MemoryLimit);
    // With the memory for it, it is built and refused with both sizes.
    let roomy = hostile_with(
        "roomy",
        Limits {
            memory_mib: 512,
            ..Limits::default()
        },
    );
    let err = roomy
        .call("roomy_big_output", &args(json!({"bytes": 300_000_000})))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Error: tool 'roomy_big_output' returned 300000000 bytes, more than its output limit of 1048576 bytes."
    );
    assert_eq!(
        roomy
            .call("roomy_big_output", &args(json!({"bytes": 2})))
            .unwrap(),
        "xx"
    );
}

#[test]
fn components_over_the_size_limit_are_not_compiled() {
    let limits = Limits {
        max_component_bytes: 1000,
        ..Limits::default()
    };
    let path = guest("guest-hostile");
    let size = std::fs::metadata(&path).unwrap().len();
    let err = WasmModule::from_file(runtime(), &path, Some("h"), limits).unwrap_err();
    assert_eq!(err.kind, LoadErrorKind::TooLarge);
    assert_eq!(
        err.reason,
        format!(
            "the component is {size} bytes, more than its limit of 1000 bytes (limits.max_component_bytes)"
        )
    );
    let bytes = std::fs::read(&path).unwrap();
    let err = WasmModule::from_bytes(runtime(), "h", &bytes, limits).unwrap_err();
    assert_eq!(err.kind, LoadErrorKind::TooLarge);
}

#[test]
fn tool_info_has_its_own_limits() {
    let err = load_guest(
        "guest-hostile",
        "h",
        Limits {
            max_tool_info_bytes: 100,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(err.kind, LoadErrorKind::InvalidToolInfo);
    assert!(
        err.reason
            .ends_with("more than the limit of 100 bytes (limits.max_tool_info_bytes)"),
        "{err}"
    );
    let err = load_guest(
        "guest-hostile",
        "h",
        Limits {
            max_tools: 3,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert!(
        err.reason
            .ends_with("tools, more than the limit of 3 (limits.max_tools)"),
        "{err}"
    );
}

#[test]
fn captured_output_is_bounded_per_stream() {
    let m = hostile_with(
        "h",
        Limits {
            max_captured_bytes: 1000,
            ..Limits::default()
        },
    );
    let (out, logs) = logs_of(|| m.call("h_stderr_flood", &args(json!({"bytes": 50_000}))));
    let out = out.unwrap();
    // 601-byte lines until at least 50,000 bytes: 84 lines.
    assert_eq!(out, "wrote 50484 bytes to stderr");
    assert!(
        logs.contains("module=\"h\" tool=\"h_stderr_flood\" stream=\"stderr\" dropped_bytes=49484"),
        "{logs}"
    );
    // The 1,000 bytes kept hold 166 whole "flood "s on two lines, each
    // logged as a record of its own naming the tool (h_stderr_flood).
    assert_eq!(logs.matches("flood").count(), 1000 / 6 + 2, "{logs}");
}
