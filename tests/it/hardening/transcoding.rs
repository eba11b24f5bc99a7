//! A string the host converts to UTF-8 cannot make it hold more than the
//! call's memory limit (point 13).

use toolhost::{Limits, Tool, WasmModule};
use toolhost_testkit::components::{core_module, ok_result, tool_component};

use crate::common::runtime;

/// A module answering `bytes` bytes of `é` (0xE9) in the given encoding.
fn latin1_answer(bytes: u32, encoding: &str) -> WasmModule {
    let body = format!(
        "(local $p i32) (local.set $p (call $alloc (i32.const {bytes}))) \
         (memory.fill (local.get $p) (i32.const 0xE9) (i32.const {bytes})) {}",
        ok_result("(local.get $p)", &format!("(i32.const {bytes})"))
    );
    let bytes = tool_component(&core_module("t", &body, ""), encoding, 1);
    let limits = Limits {
        memory_mib: 32,
        max_output_bytes: 64 * 1024 * 1024,
        ..Limits::default()
    };
    WasmModule::from_bytes(runtime(), "l", &bytes, limits).unwrap()
}

#[test]
fn transcoded_strings_are_bounded_by_the_memory_limit() {
    let args = toolhost::Arguments::empty();
    // 10 MiB of latin1 becomes 20 MiB of UTF-8: within the 32 MiB limit.
    let small = latin1_answer(10 << 20, "latin1+utf16");
    assert_eq!(small.call("l_t", &args).unwrap().len(), 20 << 20);
    // 20 MiB of latin1 would become 40 MiB: refused before it is copied.
    let large = latin1_answer(20 << 20, "latin1+utf16");
    assert_eq!(
        large.call("l_t", &args).unwrap_err().to_string(),
        "Error: tool 'l_t' passed the host more than 16777216 bytes at once \
         (half its memory limit, as its strings are UTF-16 or latin1 and grow when made UTF-8)."
    );
    // A UTF-8 component's budget is not halved: its 20 MiB answer is
    // copied whole (and then refused, 0xE9 alone not being UTF-8).
    let utf8 = latin1_answer(20 << 20, "utf8");
    assert!(
        utf8.call("l_t", &args)
            .unwrap_err()
            .to_string()
            .contains("invalid utf-8"),
        "UTF-8 strings are not halved"
    );
}
