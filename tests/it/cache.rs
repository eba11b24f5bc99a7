//! The compile cache: compile once, load after; never trust a bad entry.

use toolhost_testkit::cache_entries;

use serde_json::json;
use toolhost::{Arguments, Compiled, Limits, Runtime, Tool, WasmModule, bundled_module};

fn calc(runtime: &Runtime, limits: Limits) -> WasmModule {
    let bytes = bundled_module("calc").unwrap();
    WasmModule::from_bytes(runtime, "calc", bytes, limits).expect("calc loads")
}

fn evaluate(module: &WasmModule) -> String {
    let args = Arguments::from_object(json!({"expression": "6 * 7"}).as_object().unwrap());
    module.call("calc_evaluate", &args).unwrap()
}

#[test]
fn compiled_once_then_loaded_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let first = calc(&Runtime::with_cache_dir(&cache).unwrap(), Limits::default());
    assert_eq!(first.compiled(), Compiled::Fresh);
    assert_eq!(evaluate(&first), "42");
    let files = cache_entries(&cache);
    assert_eq!(files.len(), 1, "{files:?}");
    // A new runtime (a new process, in effect) loads it instead of compiling.
    let second = calc(&Runtime::with_cache_dir(&cache).unwrap(), Limits::default());
    assert_eq!(second.compiled(), Compiled::Cached);
    assert_eq!(evaluate(&second), "42");
    // The stack size is checked at run time, not compiled in: wasmtime's
    // compatibility hash leaves it out, so the entry serves that engine too.
    let deep = Limits {
        max_stack_kib: 1024,
        ..Limits::default()
    };
    let other = calc(&Runtime::with_cache_dir(&cache).unwrap(), deep);
    assert_eq!(other.compiled(), Compiled::Cached);
    assert_eq!(evaluate(&other), "42");
    assert_eq!(cache_entries(&cache).len(), 1);
    // Another component is another entry.
    let text = WasmModule::from_bytes(
        &Runtime::with_cache_dir(&cache).unwrap(),
        "text",
        bundled_module("text").unwrap(),
        Limits::default(),
    )
    .unwrap();
    assert_eq!(text.compiled(), Compiled::Fresh);
    assert_eq!(cache_entries(&cache).len(), 2);
}

#[test]
fn corrupt_or_truncated_entries_are_compiled_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    calc(&Runtime::with_cache_dir(&cache).unwrap(), Limits::default());
    let entry = cache_entries(&cache).remove(0);
    let good = std::fs::read(&entry).unwrap();
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x55;
    for bad in [
        &good[..good.len() / 3],
        &flipped[..],
        b"",
        b"not a cache entry",
    ] {
        std::fs::write(&entry, bad).unwrap();
        let module = calc(&Runtime::with_cache_dir(&cache).unwrap(), Limits::default());
        assert_eq!(module.compiled(), Compiled::Fresh);
        assert_eq!(evaluate(&module), "42");
        // ... and the entry is whole again.
        assert_eq!(std::fs::read(&entry).unwrap(), good);
    }
}

#[cfg(unix)]
#[test]
fn a_cache_others_can_write_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let cache = toolhost_testkit::world_writable_dir(dir.path(), "cache");
    let err = Runtime::with_cache_dir(&cache).unwrap_err().to_string();
    assert!(err.contains("is writable by other users"), "{err}");
}
