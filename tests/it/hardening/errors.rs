//! Error texts name the real cause (point 11).

use serde_json::json;

use crate::common::{call, hostile_manager};

#[test]
fn a_refused_growth_is_blamed_only_when_it_ended_the_call() {
    let m = hostile_manager();
    // The allocator gave up: the memory limit.
    assert_eq!(
        call(&m, "h_membomb", json!({})),
        "Error: tool 'h_membomb' exceeded its memory limit of 32 MiB."
    );
    // The guest's own panic after a polite refusal: the panic, and the refusal.
    assert_eq!(
        call(&m, "h_reserve_then_panic", json!({"bytes": 1_000_000_000})),
        "Error: tool 'h_reserve_then_panic' panicked: could not reserve 1000000000 bytes, giving up \
         (after a memory growth past its limit of 32 MiB was refused)"
    );
    assert_eq!(
        call(
            &m,
            "h_reserve_then_recurse",
            json!({"bytes": 1_000_000_000})
        ),
        "Error: tool 'h_reserve_then_recurse' trapped: call stack exhausted \
         (after a memory growth past its limit of 32 MiB was refused)"
    );
    // Without a refusal, nothing is said of memory.
    assert_eq!(
        call(&m, "h_reserve_then_panic", json!({"bytes": 1_000})),
        "reserved"
    );
}

#[test]
fn a_guest_that_exits_says_so() {
    let m = hostile_manager();
    // WASI 0.2's `exit` carries success or failure only: 0 or 1.
    for (code, status) in [(0, 0), (3, 1)] {
        assert_eq!(
            call(&m, "h_exit", json!({ "code": code })),
            format!("Error: tool 'h_exit' exited with status {status} before returning a result.")
        );
    }
    assert_eq!(call(&m, "h_add", json!({"a": 1, "b": 1})), "2");
}
